"""roi_random_crop: every anchor it draws puts the window around the ROI (or inside it when the
ROI is larger) and inside the input when one is given; every allowed place is drawn; errors."""
import numpy as np
import pytest

import stoker
from stoker import fn


def _anchors(iterations=300, data=None, **kwargs):
    pipe = stoker.Pipeline(batch_size=1, num_threads=1, seed=3)
    with pipe:
        inputs = [fn.external_source(lambda: data)] if data is not None else []
        pipe.set_outputs(fn.roi_random_crop(*inputs, **kwargs))
    return [np.array(pipe.run()[0].at(0)) for _ in range(iterations)]


def test_windows_hold_the_roi_inside_the_input():
    seen = set()
    for a in _anchors(crop_shape=[10, 4], roi_start=[20, 5], roi_end=[26, 15], in_shape=[30, 40]):
        assert a.dtype == np.int64
        y, x = a
        assert y <= 20 and y + 10 >= 26 and 0 <= y and y + 10 <= 30  # holds rows 20-25
        assert 5 <= x and x + 4 <= 15  # inside the wider ROI's columns
        seen.add((int(y), int(x)))
    assert seen == {(y, x) for y in range(16, 21) for x in range(5, 12)}


def test_unbounded_windows_and_the_data_input():
    for a in _anchors(50, crop_shape=[8], roi_start=[2], roi_shape=[3]):
        assert -3 <= a[0] <= 2  # may leave the input: none given
    image = np.zeros((12, 9, 3), np.uint8)
    for a in _anchors(50, data=[image], crop_shape=[10, 9, 3], roi_start=[1, 0, 0],
                      roi_shape=[2, 9, 3]):
        assert 0 <= a[0] <= 1 and a[1] == 0 and a[2] == 0


def test_errors_name_what_is_wrong():
    with pytest.raises(ValueError, match="give roi_end or roi_shape, not both"):
        _anchors(1, crop_shape=[2], roi_start=[0], roi_end=[1], roi_shape=[1])
    with pytest.raises(ValueError, match=r"must hold the crop \(50\)"):
        _anchors(1, crop_shape=[50, 4], roi_start=[0, 0], roi_end=[1, 1], in_shape=[30, 40])
