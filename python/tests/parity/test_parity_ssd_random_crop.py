"""ssd_random_crop (DALI's deprecated SSDRandomCrop; stoker's is random_bbox_crop + slice in
Python) against DALI 2.4. Its windows are random, drawn by different generators, so they are
compared by distribution (how often a sample is left whole, the crops' areas and shapes, how
many boxes survive); what follows from a window is compared exactly: for each of DALI's crops
whose window its outputs reveal (a kept box not clamped on either axis gives the window's
offset and size), DALI's images, boxes and labels equal what stoker's reference of that step
(tests/ssd_util.py, which test_legacy_api.py holds stoker's composition to) gives; samples
without boxes are never cropped by either."""

import warnings

import numpy as np
import pytest

from parity_util import SKIP_REASON, dali, run
from ssd_util import ssd_crop_given_window

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {"ssd_random_crop": "distribution: windows by distribution; the crop a window gives "
                             "(boxes, labels, pixels) exactly"}

BATCH = 32


def _inputs(iteration):
    rng = np.random.default_rng(100 + iteration)
    images, boxes, labels = [], [], []
    for i in range(BATCH):
        images.append(rng.integers(0, 255, (60, 80, 3), dtype=np.uint8))
        n = 0 if i % 8 == 0 else 1 + i % 3
        lo = rng.uniform(0, 0.75, (n, 2))
        hi = lo + rng.uniform(0.05, 0.25, (n, 2))
        boxes.append(np.float32(np.concatenate([lo, hi], 1)))
        labels.append(np.arange(n, dtype=np.int32) + 1)
    return images, boxes, labels


def _define(fn, types):
    data = fn.external_source(lambda info: _inputs(info.iteration), num_outputs=3,
                              batch_info=True, layout=["HWC", "", ""])
    return (*data, *fn.ssd_random_crop(*data, num_attempts=1))


def _runs(lib, iterations=40):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return run(lib, _define, BATCH, iterations=iterations, seed=21)


def _samples(out):
    for it in out:
        yield from zip(*it)


def _statistics(out):
    whole, areas, aspects, kept = [], [], [], []
    for image, boxes, _, out_image, out_boxes, _ in _samples(out):
        if len(boxes) == 0:
            continue
        h, w = out_image.shape[:2]
        whole.append((h, w) == image.shape[:2])
        if not whole[-1]:
            areas.append(h * w / (image.shape[0] * image.shape[1]))
            aspects.append((w / image.shape[1]) / (h / image.shape[0]))
        kept.append(len(out_boxes))
    return np.mean(whole), np.mean(areas), np.median(aspects), np.mean(kept)


def test_windows_are_drawn_alike():
    (w0, a0, r0, k0), (w1, a1, r1, k1) = (_statistics(_runs(lib)) for lib in ("stoker", "dali"))
    assert abs(w0 - w1) < 0.06, (w0, w1)   # "no crop": about 1 sample in 7
    assert abs(a0 - a1) < 0.06, (a0, a1)
    assert abs(r0 - r1) < 0.15, (r0, r1)
    assert abs(k0 - k1) < 0.25, (k0, k1)


def _revealed_window(boxes, out_boxes, labels, out_labels):
    """DALI's window (left, top, w, h) from a kept box that is not clamped on either axis, or
    None."""
    window = [None, None, None, None]
    for k, label in enumerate(out_labels):
        src = boxes[list(labels).index(label)].astype(np.float64)
        dst = out_boxes[k].astype(np.float64)
        for axis in (0, 1):
            lo, hi = dst[axis], dst[axis + 2]
            if window[axis] is None and 0.0 < lo < hi < 1.0:
                size = (src[axis + 2] - src[axis]) / (hi - lo)
                window[axis], window[axis + 2] = src[axis] - lo * size, size
    return None if None in window else tuple(window)


def test_what_a_window_gives_equals_dali():
    seen = 0
    for image, boxes, labels, out_image, out_boxes, out_labels in _samples(_runs("dali", 6)):
        assert out_boxes.dtype == np.float32 and out_labels.dtype == np.int32
        if len(boxes) == 0 or out_image.shape == image.shape:
            np.testing.assert_array_equal(out_image, image)
            np.testing.assert_array_equal(out_boxes, boxes)
            np.testing.assert_array_equal(out_labels, labels)
            continue
        window = _revealed_window(boxes, out_boxes, labels, out_labels)
        if window is None:
            continue
        want = ssd_crop_given_window(image, boxes, labels, *window)
        np.testing.assert_array_equal(out_labels, want[2])
        np.testing.assert_allclose(out_boxes, want[1], atol=1e-4)
        # The pixel window: its ends rounded from the revealed window (float32 boxes carry it
        # to ~1e-6, so a rounding tie may differ by a pixel; none here).
        assert out_image.shape == want[0].shape
        np.testing.assert_array_equal(out_image, want[0])
        seen += 1
    assert seen > 20


def test_samples_without_boxes_are_never_cropped():
    for lib in ("stoker", "dali"):
        for image, boxes, labels, out_image, out_boxes, out_labels in _samples(_runs(lib, 4)):
            if len(boxes) == 0:
                assert out_image.shape == image.shape and len(out_boxes) == 0, lib
