"""segmentation.random_object_bbox against scipy.ndimage (face-connected labelling, blob boxes):
every box drawn is the box of a blob of the class drawn, the draws follow the documented
probabilities, the formats and class rules are DALI's, and bad arguments are refused."""
import collections

import numpy as np
import pytest

import stoker
from stoker import fn

ndimage = pytest.importorskip("scipy.ndimage", reason="scipy is not installed (scripts/setup installs it)")


def _run(masks, iterations=1, seed=3, **kw):
    """[iteration] -> list of output tuples per sample."""
    pipe = stoker.Pipeline(batch_size=len(masks), num_threads=2, seed=seed)
    with pipe:
        m = fn.external_source(source=lambda: list(masks), batch=True)
        out = fn.segmentation.random_object_bbox(m, **kw)
        pipe.set_outputs(*(out if isinstance(out, (list, tuple)) else [out]))
    res = []
    for _ in range(iterations):
        outs = pipe.run()
        res.append([tuple(np.asarray(o[i]) for o in outs) for i in range(len(masks))])
    return res


def _blob_boxes(mask, background=0):
    """{label: [(start, end), ...]} by scipy: each label's face-connected components."""
    boxes = {}
    for label in np.unique(mask):
        if label == background:
            continue
        comps, n = ndimage.label(mask == label)  # the default structure: face neighbours
        boxes[int(label)] = [(tuple(s.start for s in sl), tuple(s.stop for s in sl))
                             for sl in ndimage.find_objects(comps)]
    return boxes


def _random_label_map(rng, shape, labels):
    m = np.zeros(shape, np.uint8)
    for _ in range(12):
        lo = [rng.integers(0, s) for s in shape]
        ext = [rng.integers(1, 4) for _ in shape]
        m[tuple(slice(a, a + e) for a, e in zip(lo, ext))] = rng.integers(1, labels + 1)
    return m


@pytest.mark.parametrize("shape", [(23, 31), (9, 10, 11), (40,)])
def test_every_box_is_a_blob_of_the_class_drawn(shape):
    rng = np.random.default_rng(1)
    masks = [_random_label_map(rng, shape, 4) for _ in range(6)]
    for it in _run(masks, iterations=5, output_class=True, format="start_end"):
        for mask, (start, end, cls) in zip(masks, it):
            assert start.dtype == np.int32 and end.dtype == np.int32 and cls.dtype == np.int32
            assert cls.shape == ()
            assert (tuple(start), tuple(end)) in _blob_boxes(mask)[int(cls)]


def test_classes_are_drawn_uniformly_then_blobs_uniformly():
    # Class 1 has three blobs, class 2 one: class 2's blob comes half the time.
    m = np.zeros((10, 10), np.uint8)
    m[0, 0] = m[0, 4] = m[0, 8] = 1
    m[5:8, 5:8] = 2
    draws = collections.Counter()
    for it in _run([m] * 50, iterations=8, format="box"):
        draws.update(tuple(s[0]) for s in it)
    n = sum(draws.values())
    assert draws[(5, 5, 8, 8)] / n == pytest.approx(0.5, abs=0.06)
    for b in [(0, 0, 1, 1), (0, 4, 1, 5), (0, 8, 1, 9)]:
        assert draws[b] / n == pytest.approx(1 / 6, abs=0.05)


def test_ignore_class_draws_blobs_uniformly():
    m = np.zeros((10, 10), np.uint8)
    m[0, 0] = m[0, 4] = m[0, 8] = 1
    m[5:8, 5:8] = 2
    draws = collections.Counter()
    for it in _run([m] * 50, iterations=8, format="box", ignore_class=True):
        draws.update(tuple(s[0]) for s in it)
    assert len(draws) == 4
    for count in draws.values():
        assert count / 400 == pytest.approx(0.25, abs=0.06)


def test_class_weights_threshold_and_k_largest():
    m = np.zeros((12, 12), np.int32)
    m[0:1, 0:1] = 1     # class 1: a 1x1 and a 2x3 blob
    m[3:5, 0:3] = 1
    m[8:12, 8:12] = 2   # class 2: one 4x4 blob
    m[8:10, 0:2] = 3    # class 3: one 2x2 blob
    # weights [1, 0, 0] over classes 1..3 (background 0): always class 1.
    for it in _run([m] * 20, iterations=3, class_weights=[1, 0, 0], output_class=True):
        assert all(int(c) == 1 for _, _, c in it)
    # threshold 2 per axis removes class 1's single pixel.
    for it in _run([m] * 20, iterations=3, classes=[1], threshold=[2, 2]):
        assert all(tuple(a) == (3, 0) and tuple(s) == (2, 3) for a, s in it)
    # A class without a large enough blob is dropped and another drawn: only class 2 has 3x3.
    for it in _run([m] * 20, iterations=3, threshold=3, output_class=True):
        assert all(int(c) == 2 and tuple(a) == (8, 8) for a, _, c in it)
    # k_largest=1 with ignore_class: always the largest box.
    for it in _run([m] * 20, iterations=3, k_largest=1, ignore_class=True, format="box"):
        assert all(tuple(b[0]) == (8, 8, 12, 12) for b in it)
    # No box passes: the whole input, class = background.
    for it in _run([m] * 4, threshold=[5, 5], output_class=True):
        assert all(tuple(a) == (0, 0) and tuple(s) == (12, 12) and int(c) == 0 for a, s, c in it)


def test_background_and_classes_rules():
    m = np.zeros((6, 6), np.uint8)
    m[1:3, 1:4] = 2
    m[4, 4] = 5
    # 0 among the classes and no background given: the background is below every class.
    for it in _run([m] * 8, classes=[0, 2], output_class=True):
        for a, s, c in it:
            assert int(c) in (0, 2)
            if int(c) == 0:  # class 0's blob: every 0 (they connect around the others)
                assert tuple(a) == (0, 0) and tuple(s) == (6, 6)
    for it in _run([m] * 4, classes=[0, 2], foreground_prob=0.0, output_class=True):
        assert all(int(c) == -1 and tuple(s) == (6, 6) for _, s, c in it)
    # An explicit background: its pixels are never an object.
    for it in _run([m] * 8, background=2, output_class=True, format="box"):
        assert all(int(c) in (0, 5) for _, c in it)
    # Classes absent from the mask: the whole input.
    for it in _run([m] * 4, classes=[7], output_class=True):
        assert all(int(c) == 0 and tuple(s) == (6, 6) for _, s, c in it)
    # No foreground at all, and an empty mask.
    for mask in (np.zeros((3, 3), np.uint8), np.zeros((0, 3), np.uint8)):
        ((a, s, c),) = _run([mask], output_class=True)[0]
        assert tuple(a) == (0, 0) and tuple(s) == mask.shape and int(c) == 0


def test_foreground_prob_is_the_share_of_object_boxes():
    m = np.zeros((8, 8), np.uint8)
    m[2:4, 2:4] = 1
    whole = 0
    for it in _run([m] * 100, iterations=4, foreground_prob=0.3):
        whole += sum(tuple(s) == (8, 8) for _, s in it)
    assert whole / 400 == pytest.approx(0.7, abs=0.07)


def test_formats_agree_and_bool_and_3d_masks_work():
    rng = np.random.default_rng(4)
    masks = [_random_label_map(rng, (7, 8, 9), 3) > 0 for _ in range(4)]
    (a,) = _run(masks, format="anchor_shape")
    (b,) = _run(masks, format="start_end")
    (c,) = _run(masks, format="box")
    for (anchor, shape), (start, end), (box,) in zip(a, b, c):
        np.testing.assert_array_equal(anchor, start)
        np.testing.assert_array_equal(anchor + shape, end)
        np.testing.assert_array_equal(box, np.concatenate([start, end]))
    for mask, (start, end) in zip(masks, b):
        assert (tuple(start), tuple(end)) in _blob_boxes(mask.astype(np.uint8))[1]


def test_cached_objects_give_the_same_draws():
    rng = np.random.default_rng(2)
    masks = [_random_label_map(rng, (30, 30), 3) for _ in range(3)] * 2
    plain = _run(masks, iterations=3, output_class=True)
    cached = _run(masks, iterations=3, output_class=True, cache_objects=True)
    for p, c in zip(plain, cached):
        for x, y in zip(p, c):
            for u, v in zip(x, y):
                np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("kw, message", [
    (dict(ignore_class=True, output_class=True), "cannot be used with ignore_class"),
    (dict(ignore_class=True, classes=[1]), "cannot be used with ignore_class"),
    (dict(k_largest=0), "k_largest must be at least 1"),
    (dict(format="corners"), "format must be 'anchor_shape', 'start_end' or 'box'"),
    (dict(classes=[1, 2], class_weights=[1.0]), "need the same length, got 2 and 1"),
    (dict(classes=[0, 1], background=0), "class 0 is also the background label"),
    (dict(threshold=[1, 2, 3]), "threshold needs 1 or 2 values"),
    (dict(class_weights=[1.0, -1.0]), "must not be negative"),
])
def test_bad_arguments(kw, message):
    m = np.zeros((4, 4), np.uint8)
    m[1, 1] = 1
    with pytest.raises((ValueError, RuntimeError), match=message):
        _run([m], **kw)


def test_bad_masks():
    with pytest.raises((TypeError, RuntimeError), match="unsupported dtype float32"):
        _run([np.zeros((4, 4), np.float32)])
    with pytest.raises((ValueError, RuntimeError), match="same number of dimensions"):
        _run([np.zeros((4, 4), np.uint8), np.zeros((4, 4, 1), np.uint8)])


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.int8, np.bool_])
def test_every_integer_mask_type(dtype):
    m = np.zeros((6, 7), dtype)
    m[1:3, 2:5] = 1
    for it in _run([m] * 4, format="box", output_class=True):
        assert all(tuple(b) == (1, 2, 3, 5) and int(c) == 1 for b, c in it)
