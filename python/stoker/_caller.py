"""Where a warning should point: the first frame outside the stoker package (the user's call),
however many of stoker's own calls lie between."""

import os
import sys

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def user_stacklevel():
    """warnings.warn's stacklevel, from the function calling this, of the first frame outside
    the stoker package."""
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
            _PACKAGE_DIR + os.sep):
        frame, level = frame.f_back, level + 1
    return level
