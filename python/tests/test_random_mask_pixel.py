"""segmentation.random_mask_pixel: positions drawn among the foreground (threshold or value)
land on it, uniformly; with no foreground or foreground=0, anywhere, uniformly; per-sample
arguments; errors."""
import numpy as np
import pytest

import stoker
from stoker import fn


def _draws(masks, iterations=200, **kwargs):
    pipe = stoker.Pipeline(batch_size=len(masks), num_threads=2, seed=5)
    with pipe:
        m = fn.external_source(lambda: masks, layout="HWC")
        pipe.set_outputs(fn.segmentation.random_mask_pixel(m, **kwargs))
    out = []
    for _ in range(iterations):
        (b,) = pipe.run()
        out.append([np.array(s) for s in b])
    return out


def _mask():
    m = np.zeros((6, 7, 1), np.uint8)
    m[1, 2, 0], m[4, 5, 0], m[3, 3, 0] = 3, 7, 9
    return m


def test_foreground_positions_are_foreground_and_uniform():
    runs = _draws([_mask(), np.zeros((4, 4, 1), np.uint8)], foreground=1)
    seen = {}
    for fg, empty in runs:
        assert fg.dtype == np.int64 and fg.shape == (3,)
        assert _mask()[tuple(fg)] > 0
        seen[tuple(fg)] = seen.get(tuple(fg), 0) + 1
        assert all(0 <= c < n for c, n in zip(empty, (4, 4, 1)))  # no foreground: anywhere
    assert len(seen) == 3 and min(seen.values()) > 40  # 200 draws over 3 pixels
    for (p,) in _draws([_mask()], iterations=50, foreground=1, value=7):
        assert p.tolist() == [4, 5, 0]
    for (p,) in _draws([_mask()], iterations=50, foreground=1, threshold=5.0):
        assert p.tolist() in ([4, 5, 0], [3, 3, 0])


def test_any_pixel_without_foreground_and_per_sample_arguments():
    runs = _draws([_mask()], iterations=400)
    counts = np.zeros((6, 7))
    for (p,) in runs:
        counts[p[0], p[1]] += 1
    assert (counts > 0).mean() > 0.9  # 400 draws over 42 pixels reach nearly all
    pipe = stoker.Pipeline(batch_size=2, num_threads=1, seed=5)
    with pipe:
        m = fn.external_source(lambda: [_mask(), _mask()], layout="HWC")
        fg = fn.external_source(lambda: [np.int32(1), np.int32(1)])
        v = fn.external_source(lambda: [np.int32(3), np.int32(9)])
        pipe.set_outputs(fn.segmentation.random_mask_pixel(m, foreground=fg, value=v))
    (b,) = pipe.run()
    assert [np.array(s).tolist() for s in b] == [[1, 2, 0], [3, 3, 0]]


def test_errors_name_what_is_wrong():
    with pytest.raises(ValueError, match="give `value` or `threshold`, not both"):
        _draws([_mask()], iterations=1, value=3, threshold=1.0)
    with pytest.raises(ValueError, match=r"sample 0 is empty, \(0, 4, 1\)"):
        _draws([np.zeros((0, 4, 1), np.uint8)], iterations=1)
