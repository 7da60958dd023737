"""bb_flip: against the definition (numpy, through [l, t, r, b] as DALI computes it), per-sample
flips, shapes it takes, errors naming what is wrong, and the GPU backend against the CPU one."""
import numpy as np
import pytest

import stoker
from stoker import _stoker, fn

needs_gpu = pytest.mark.skipif(not _stoker.cuda_available(),
                               reason="no CUDA device: GPU test skipped")


def _boxes(seed, counts=(5, 0, 17, 1)):
    rng = np.random.default_rng(seed)
    return [rng.random((n, 4), dtype=np.float32) * np.float32(0.5) for n in counts]


def _run(boxes, device="cpu", flips=None, **kwargs):
    pipe = stoker.Pipeline(batch_size=len(boxes), num_threads=2, seed=3,
                           device_id=0 if device == "gpu" else None)
    with pipe:
        data = fn.external_source(lambda: boxes, device=device)
        if flips is not None:
            kwargs["horizontal"] = fn.external_source(lambda: flips)
        pipe.set_outputs(fn.bb_flip(data, **kwargs))
    (out,) = pipe.run()
    return [s.numpy().copy() for s in out.as_cpu()]


def _reference(b, ltrb, horizontal, vertical):
    one = np.float32(1)
    l, t = b[:, 0], b[:, 1]
    r = b[:, 2] if ltrb else b[:, 0] + b[:, 2]
    bottom = b[:, 3] if ltrb else b[:, 1] + b[:, 3]
    if horizontal:
        l, r = one - r, one - l
    if vertical:
        t, bottom = one - bottom, one - t
    return np.stack([l, t, r, bottom] if ltrb else [l, t, r - l, bottom - t], axis=1)


@pytest.mark.parametrize("ltrb", [False, True])
@pytest.mark.parametrize("horizontal,vertical", [(1, 0), (0, 1), (1, 1), (0, 0)])
def test_flips_match_the_definition(ltrb, horizontal, vertical):
    boxes = _boxes(int(ltrb) + 2 * horizontal + 4 * vertical)
    got = _run(boxes, ltrb=ltrb, horizontal=horizontal, vertical=vertical)
    for b, g in zip(boxes, got):
        assert g.dtype == np.float32 and g.shape == b.shape
        np.testing.assert_array_equal(g, _reference(b, ltrb, horizontal, vertical))


def test_per_sample_flips_and_flat_boxes():
    boxes = _boxes(9, counts=(3, 3, 3, 3))
    flips = [np.int32(k % 2) for k in range(4)]
    got = _run(boxes, flips=flips, ltrb=True)
    for k, (b, g) in enumerate(zip(boxes, got)):
        np.testing.assert_array_equal(g, _reference(b, True, k % 2, 0))
    flat = [b.reshape(-1) for b in boxes]
    for b, g in zip(flat, _run(flat)):
        assert g.shape == b.shape
        np.testing.assert_array_equal(g, _reference(b.reshape(-1, 4), False, 1, 0).reshape(-1))


def test_bad_input_is_refused_by_name():
    with pytest.raises(TypeError, match="bb_flip: the boxes must be float32, got float64"):
        _run([np.zeros((2, 4), np.float64)])
    with pytest.raises(ValueError, match=r"bb_flip: sample 1 is \(2, 3\): boxes are 4 coordinates"):
        _run([np.zeros((2, 4), np.float32), np.zeros((2, 3), np.float32)])


@needs_gpu
@pytest.mark.parametrize("ltrb", [False, True])
def test_gpu_equals_cpu(ltrb):
    boxes = _boxes(11, counts=(0, 1, 300, 7))
    flips = [np.int32(k % 2) for k in range(4)]
    cpu = _run(boxes, flips=flips, ltrb=ltrb, vertical=1)
    gpu = _run(boxes, device="gpu", flips=flips, ltrb=ltrb, vertical=1)
    for c, g in zip(cpu, gpu):
        np.testing.assert_array_equal(g, c)
