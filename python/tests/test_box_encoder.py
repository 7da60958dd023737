"""box_encoder: against a numpy reference written from SSD's matching rules (each box claims its
best anchor; each anchor takes its best box above `criteria`), with and without offsets, empty
samples, errors, and the GPU backend against the CPU one."""
import numpy as np
import pytest

import stoker
from stoker import _stoker, fn

needs_gpu = pytest.mark.skipif(not _stoker.cuda_available(),
                               reason="no CUDA device: GPU test skipped")


def ssd_anchors(sizes=(4, 2), scales=(0.3, 0.6)):
    """A small SSD-like grid: per feature map of f x f cells, square anchors of one scale."""
    rows = []
    for f, s in zip(sizes, scales):
        for y in range(f):
            for x in range(f):
                cx, cy = (x + 0.5) / f, (y + 0.5) / f
                rows.append([cx - s / 2, cy - s / 2, cx + s / 2, cy + s / 2])
    return np.clip(np.float32(rows), 0, 1)


def _iou(a, b):
    lo, hi = np.maximum(a[:2], b[:2]), np.minimum(a[2:], b[2:])
    if np.any(hi <= lo):
        return 0.0
    inter = np.prod(hi - lo)
    return inter / (np.prod(a[2:] - a[:2]) + np.prod(b[2:] - b[:2]) - inter)


def reference(boxes, labels, anchors, criteria=0.5, offset=False, scale=1.0, means=(0,) * 4,
              stds=(1,) * 4):
    ious = np.zeros((len(boxes), len(anchors)))
    for k, b in enumerate(boxes):
        ious[k] = [_iou(b, a) for a in anchors]
    for k in range(len(boxes)):  # each box claims its best anchor (the last of equals)
        best = len(anchors) - 1 - np.argmax(ious[k, ::-1])
        ious[k, best] = 2.0
    out = np.zeros((len(anchors), 4))
    out_labels = np.zeros(len(anchors), np.int32)
    centre = lambda b: np.array([(b[0] + b[2]) / 2, (b[1] + b[3]) / 2, b[2] - b[0], b[3] - b[1]])
    for j, a in enumerate(anchors):
        ac = centre(a.astype(np.float64))
        best = len(boxes) - 1 - np.argmax(ious[::-1, j]) if len(boxes) else -1
        if best < 0 or ious[best, j] <= criteria:
            out[j] = 0 if offset else ac
            continue
        bc = centre(boxes[best].astype(np.float64))
        out_labels[j] = labels[best]
        if offset:
            bc, ac = bc * scale, ac * scale
            out[j] = [((bc[0] - ac[0]) / ac[2] - means[0]) / stds[0],
                      ((bc[1] - ac[1]) / ac[3] - means[1]) / stds[1],
                      (np.log(bc[2] / ac[2]) - means[2]) / stds[2],
                      (np.log(bc[3] / ac[3]) - means[3]) / stds[3]]
        else:
            out[j] = bc
    return out, out_labels


def _samples(seed):
    rng = np.random.default_rng(seed)
    boxes, labels = [], []
    for n in (3, 0, 1, 6):
        lo = rng.uniform(0, 0.6, (n, 2))
        hi = lo + rng.uniform(0.1, 0.4, (n, 2))
        boxes.append(np.float32(np.concatenate([lo, hi], 1)))
        labels.append(np.int32(rng.integers(1, 80, n)))
    return boxes, labels


def _run(boxes, labels, device="cpu", **kwargs):
    pipe = stoker.Pipeline(batch_size=len(boxes), num_threads=2, seed=1,
                           device_id=0 if device == "gpu" else None)
    with pipe:
        b = fn.external_source(lambda: boxes, device=device)
        l = fn.external_source(lambda: labels, device=device)
        pipe.set_outputs(*fn.box_encoder(b, l, **kwargs))
    out_boxes, out_labels = pipe.run()
    return ([s.numpy().copy() for s in out_boxes.as_cpu()],
            [s.numpy().copy() for s in out_labels.as_cpu()])


@pytest.mark.parametrize("kwargs", [
    {},
    {"criteria": 0.2},
    {"offset": True, "scale": 300.0, "means": [0.0, 0.1, 0.0, 0.2], "stds": [0.1, 0.1, 0.2, 0.2]},
], ids=lambda k: ",".join(k) or "defaults")
def test_matches_the_reference(kwargs):
    anchors = ssd_anchors()
    boxes, labels = _samples(2)
    got_boxes, got_labels = _run(boxes, labels, anchors=anchors.ravel().tolist(), **kwargs)
    for b, l, gb, gl in zip(boxes, labels, got_boxes, got_labels):
        ref_boxes, ref_labels = reference(b, l, anchors, **kwargs)
        assert gb.shape == (len(anchors), 4) and gl.shape == (len(anchors),)
        np.testing.assert_array_equal(gl, ref_labels)
        np.testing.assert_allclose(gb, ref_boxes, rtol=2e-5, atol=2e-6)
        assert (gl > 0).any() == (len(b) > 0)  # a box always claims an anchor


def test_errors_name_what_is_wrong():
    anchors = ssd_anchors().ravel().tolist()
    boxes, labels = _samples(3)
    with pytest.raises(ValueError, match="anchors must be .* a multiple of 4 values; got 3"):
        _run(boxes, labels, anchors=[0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="sample 0 has 3 boxes and 2 labels"):
        _run(boxes, [labels[0][:2]] + labels[1:], anchors=anchors)
    with pytest.raises(TypeError, match="the labels must be int32, got int64"):
        _run(boxes, [l.astype(np.int64) for l in labels], anchors=anchors)
    with pytest.raises(ValueError, match="stds must not be 0"):
        _run(boxes, labels, anchors=anchors, stds=[1, 1, 0, 1])


@needs_gpu
@pytest.mark.parametrize("offset", [False, True])
def test_gpu_equals_cpu(offset):
    anchors = ssd_anchors(sizes=(19, 10, 5, 3), scales=(0.1, 0.2, 0.4, 0.7)).ravel().tolist()
    boxes, labels = _samples(4)
    kwargs = dict(anchors=anchors, offset=offset, scale=300.0 if offset else 1.0)
    cpu = _run(boxes, labels, **kwargs)
    gpu = _run(boxes, labels, device="gpu", **kwargs)
    for c, g in zip(cpu[1], gpu[1]):
        np.testing.assert_array_equal(g, c)
    for c, g in zip(cpu[0], gpu[0]):
        # the same matches; the logarithms of the offsets may differ by an ulp
        np.testing.assert_allclose(g, c, rtol=1e-6, atol=1e-6)
