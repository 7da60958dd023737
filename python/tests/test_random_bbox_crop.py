"""random_bbox_crop: every window it draws obeys its arguments (extents in `scaling`, aspect
ratios, inside the image, the overlap threshold met), the boxes and labels it outputs are those
a numpy reference keeps and maps for that window, results do not depend on the thread count,
and errors name what is wrong. test_parity_random_bbox_crop.py compares it with DALI."""
import numpy as np
import pytest

import stoker
from stoker import fn


def _boxes(seed, count=32, size=(0.05, 0.3)):
    rng = np.random.default_rng(seed)
    out = []
    for k in range(count):
        lo = rng.uniform(0, 1 - size[1], (k % 4 + 1, 2))
        hi = lo + rng.uniform(size[0], size[1], lo.shape)
        out.append(np.float32(np.concatenate([lo, hi], 1)))
    return out


def _run(boxes, labels=None, threads=2, iterations=1, **kwargs):
    pipe = stoker.Pipeline(batch_size=len(boxes), num_threads=threads, seed=7)
    with pipe:
        inputs = [fn.external_source(lambda: boxes)]
        if labels is not None:
            inputs.append(fn.external_source(lambda: labels))
        pipe.set_outputs(*fn.random_bbox_crop(*inputs, **kwargs))
    return [[[s.numpy().copy() for s in out] for out in pipe.run()] for _ in range(iterations)]


def _iou(a, b):
    lo, hi = np.maximum(a[:2], b[:2]), np.minimum(a[2:], b[2:])
    inter = np.prod(np.clip(hi - lo, 0, None))
    union = np.prod(a[2:] - a[:2]) + np.prod(b[2:] - b[:2]) - inter
    return inter / union


def _kept(boxes, window):
    """Boxes whose centre is in the window, cut to it, in its coordinates (and their indices)."""
    lo, hi = window[:2], window[2:]
    out, idx = [], []
    for k, b in enumerate(boxes):
        c = (b[:2] + b[2:]) / np.float32(2)
        if np.all(c >= lo) and np.all(c <= hi):
            cut = np.concatenate([np.maximum(b[:2], lo), np.minimum(b[2:], hi)])
            out.append((cut - np.tile(lo, 2)) / np.tile(hi - lo, 2))
            idx.append(k)
    return np.float32(out).reshape(-1, 4), idx


def test_windows_obey_the_arguments_and_keep_the_right_boxes():
    boxes = _boxes(1, size=(0.2, 0.5))
    labels = [np.int32(np.arange(len(b)) + 10 * k) for k, b in enumerate(boxes)]
    # one box reaching the threshold is enough: every sample has windows that do
    runs = _run(boxes, labels, iterations=3, thresholds=[0.1, 0.3], scaling=[0.3, 1.0],
                aspect_ratio=[0.5, 2.0], num_attempts=50, allow_no_crop=False,
                all_boxes_above_threshold=False, output_bbox_indices=True)
    for anchors, shapes, out_boxes, out_labels, indices in runs:
        for k, (a, s) in enumerate(zip(anchors, shapes)):
            window = np.concatenate([a, a + s]).astype(np.float32)
            assert np.all(s >= 0.3 - 1e-6) and np.all(s <= 1.0) and 0.5 <= s[0] / s[1] <= 2.0
            assert np.all(a >= 0) and np.all(a + s <= 1 + 1e-6)
            ious = [_iou(window.astype(np.float64), b.astype(np.float64)) for b in boxes[k]]
            assert max(ious) >= 0.1 - 1e-6  # the smallest threshold, at least
            ref, idx = _kept(boxes[k], window)
            np.testing.assert_allclose(out_boxes[k], ref, rtol=1e-5, atol=1e-6)
            assert indices[k].tolist() == idx
            assert out_labels[k].tolist() == [int(labels[k][j]) for j in idx]


def test_no_crop_and_thread_count_independence():
    boxes = _boxes(2)
    out = _run(boxes, thresholds=[0.99], allow_no_crop=True, num_attempts=1, total_num_attempts=1,
               scaling=[0.3, 0.4])[0]
    for a, s, b, src in zip(out[0], out[1], out[2], boxes):
        if np.all(s == 1):  # the 'no crop' pick: the boxes as they are
            np.testing.assert_array_equal(b, src)
    one, four = (_run(boxes, threads=t, iterations=2, thresholds=[0.1, 0.5], scaling=[0.3, 1.0],
                      aspect_ratio=[0.5, 2.0], num_attempts=10) for t in (1, 4))
    for x, y in zip(one, four):
        for a, b in zip(x, y):
            for p, q in zip(a, b):
                np.testing.assert_array_equal(p, q)


def test_fixed_crop_shape_gives_pixel_windows():
    boxes = _boxes(3, count=8)
    out = _run(boxes, crop_shape=[40, 30], input_shape=[100, 60], thresholds=[0.0])[0]
    for a, s in zip(out[0], out[1]):
        assert s.tolist() == [40, 30]
        assert a[0] == int(a[0]) and 0 <= a[0] <= 60 and 0 <= a[1] <= 30


def test_impossible_requests_end_with_the_best_window():
    boxes = [np.float32([[0.0, 0.0, 0.1, 0.1], [0.9, 0.9, 1.0, 1.0]])]
    out = _run(boxes, thresholds=[0.95], allow_no_crop=False, scaling=[0.2, 0.3],
               total_num_attempts=20)[0]
    assert out[1][0].shape == (2,)


def test_errors_name_what_is_wrong():
    boxes = [np.float32([[0.1, 0.1, 0.5, 0.5]])]
    with pytest.raises(ValueError, match="box 0 does not lie in"):
        _run([np.float32([[0.5, 0.5, 1.5, 0.9]])])
    with pytest.raises(ValueError, match="thresholds must be in"):
        _run(boxes, thresholds=[1.5])
    with pytest.raises(ValueError, match="give crop_shape and input_shape together"):
        _run(boxes, crop_shape=[10, 10])
    with pytest.raises(ValueError, match="bbox_layout 'xyXZ' is not a permutation"):
        _run(boxes, bbox_layout="xyXZ")
    with pytest.raises(ValueError, match="sample 0 has 1 boxes and 2 labels"):
        _run(boxes, [np.int32([1, 2])])
    with pytest.raises(TypeError, match="the labels must be int32, got int64"):
        _run(boxes, [np.int64([1])])
