"""The user's frame: the first one outside the stoker package, however many of stoker's own
calls lie between — where an operator was defined, and where a warning should point."""

import os
import sys

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _users(frame):
    """(frame, how many frames up from `frame`, counting it as 1) of the first frame at or
    above `frame` outside the package; (None, n) when there is none."""
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
            _PACKAGE_DIR + os.sep):
        frame, level = frame.f_back, level + 1
    return frame, level


def user_stacklevel():
    """warnings.warn's stacklevel, from the function calling this, of the user's frame."""
    return _users(sys._getframe(1))[1]


def caller_location():
    """'file.py:line' of the user's frame ("" when there is none)."""
    frame, _ = _users(sys._getframe(1))
    return f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else ""
