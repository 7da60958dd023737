"""slice: windows from inputs and from named arguments against numpy (np.pad's modes for the
out-of-bounds policies), per-sample windows, per-channel fill, errors naming what is wrong, and
the GPU backend against the CPU one. test_parity_slice.py compares it with DALI."""
import numpy as np
import pytest

import stoker
from stoker import _stoker, fn

needs_gpu = pytest.mark.skipif(not _stoker.cuda_available(),
                               reason="no CUDA device: GPU test skipped")

NUMPY_MODE = {"pad": "constant", "edge": "edge", "clamp": "edge", "reflect": "symmetric",
              "reflect_1001": "symmetric", "reflect_101": "reflect", "wrap": "wrap"}


def _images(seed=1, sizes=((20, 30), (7, 5), (16, 16), (1, 1))):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 255, (h, w, 3), dtype=np.uint8) for h, w in sizes]


def _run(data, *window, device="cpu", layout="HWC", **kwargs):
    pipe = stoker.Pipeline(batch_size=len(data), num_threads=2, seed=3,
                           device_id=0 if device == "gpu" else None)
    with pipe:
        x = fn.external_source(lambda: data, device=device, layout=layout)
        inputs = [fn.external_source((lambda w: lambda: w)(w)) for w in window]
        pipe.set_outputs(fn.slice(x, *inputs, **kwargs))
    (out,) = pipe.run()
    return [s.numpy().copy() for s in out.as_cpu()]


def _round(x):
    """Half away from zero (C's llround), as DALI rounds windows."""
    x = float(x)
    return int(np.sign(x) * np.floor(abs(x) + 0.5))


def _reference(img, start, stop, mode, fill=0):
    """The window [start, stop) per axis of img, outside read as np.pad's `mode`."""
    before = [max(0, -s) for s in start]
    after = [max(0, e - n) for e, n in zip(stop, img.shape)]
    kwargs = {"constant_values": fill} if mode == "constant" else {}
    padded = np.pad(img, list(zip(before, after)), mode=mode, **kwargs)
    return padded[tuple(slice(s + b, e + b) for s, e, b in zip(start, stop, before))]


@pytest.mark.parametrize("policy", sorted(NUMPY_MODE))
def test_windows_outside_read_as_numpy_pads(policy):
    images = _images()
    anchors = [np.float32([-0.3, 0.5]), np.float32([0.1, -0.2]), np.float32([0.5, 0.5]),
               np.float32([-2.0, 1.0])]
    shapes = [np.float32([1.2, 0.9]), np.float32([0.5, 1.5]), np.float32([0.8, 0.8]),
              np.float32([3.0, 2.0])]
    got = _run(images, anchors, shapes, out_of_bounds_policy=policy, fill_values=[7.0])
    for img, a, s, g in zip(images, anchors, shapes, got):
        h, w = img.shape[:2]
        # anchor and shape are [x, y] fractions; the end is rounded from their sum
        a, s = a.astype(np.float64), s.astype(np.float64)
        x0, y0 = _round(a[0] * w), _round(a[1] * h)
        x1, y1 = _round((a[0] + s[0]) * w), _round((a[1] + s[1]) * h)
        ref = _reference(img, (y0, x0, 0), (y1, x1, 3), NUMPY_MODE[policy], fill=7)
        np.testing.assert_array_equal(g, ref, err_msg=policy)


def test_named_arguments_trim_and_per_sample_windows():
    images = _images()
    got = _run(images, start=[2, 1], end=[9, 6], out_of_bounds_policy="trim_to_shape")
    for img, g in zip(images, got):
        np.testing.assert_array_equal(g, img[1:6, 2:9])
    got = _run(images, rel_start=[0.25], rel_shape=[0.5], axes=[0])
    for img, g in zip(images, got):
        h = img.shape[0]
        lo, hi = _round(0.25 * h), _round(0.75 * h)
        np.testing.assert_array_equal(g, img[lo:hi])
    got = _run(images, start=[1], shape=[2], axis_names="C")
    for img, g in zip(images, got):
        np.testing.assert_array_equal(g, img[:, :, 1:3])
    pipe = stoker.Pipeline(batch_size=4, num_threads=2, seed=3)
    starts = [np.int64([k, 0]) for k in range(4)]
    with pipe:
        x = fn.external_source(lambda: images, layout="HWC")
        pipe.set_outputs(fn.slice(x, start=fn.external_source(lambda: starts), shape=[1, 1],
                                  out_of_bounds_policy="pad"))
    (out,) = pipe.run()
    for k, (img, g) in enumerate(zip(images, out)):
        np.testing.assert_array_equal(g.numpy(), _reference(img, (0, k, 0), (1, k + 1, 3),
                                                            "constant"))


def test_integer_inputs_are_pixels_and_fill_is_per_channel():
    images = _images()
    anchors = [np.int32([-2, -1])] * 4
    shapes = [np.int32([5, 4])] * 4
    got = _run(images, anchors, shapes, out_of_bounds_policy="pad", fill_values=[1, 2, 3])
    for img, g in zip(images, got):
        ref = np.empty((4, 5, 3), np.uint8)
        ref[:] = [1, 2, 3]  # x in [-2, 3), y in [-1, 3): outside, each channel its value
        h, w = min(img.shape[0], 3), min(img.shape[1], 3)
        ref[1:1 + h, 2:2 + w] = img[:h, :w]
        np.testing.assert_array_equal(g, ref)


def test_errors_name_what_is_wrong():
    images = _images()
    with pytest.raises(ValueError, match=r"slice: sample 1: the window \[0, 7\) of axis 1 leaves "
                                         r"the input's extent 5"):
        _run(images, start=[0, 0], shape=[7, 1])
    with pytest.raises(ValueError, match="give the window"):
        _run(images)
    with pytest.raises(ValueError, match="give `start` or `rel_start`, not both"):
        _run(images, start=[1, 1], rel_start=[0.1, 0.1])
    with pytest.raises(ValueError, match="out_of_bounds_policy 'mirror' is not one of"):
        _run(images, start=[1, 1], out_of_bounds_policy="mirror")
    with pytest.raises(ValueError, match="anchor and shape need 2 values"):
        _run(images, [np.float32([0.1])] * 4, [np.float32([0.1])] * 4)
    with pytest.raises(ValueError, match=r"2 fill_values need as many channels"):
        _run(images, start=[0, 0], out_of_bounds_policy="pad", fill_values=[1, 2])
    with pytest.raises(ValueError, match="layout 'HWC' has no 'D'"):
        _run(images, start=[0], axis_names="D")
    with pytest.raises(TypeError, match=r"fn.slice expects 1 to 3 input\(s\)"):
        with stoker.Pipeline(batch_size=1):
            x = fn.external_source(lambda: images[:1])
            fn.slice(x, x, x, x)


@needs_gpu
@pytest.mark.parametrize("policy", ["error", "trim_to_shape", "pad", "clamp", "reflect_1001",
                                    "reflect_101", "wrap"])
def test_gpu_equals_cpu(policy):
    images = _images(5, sizes=((31, 17), (2, 3), (64, 48), (5, 9)))
    safe = policy == "error"
    anchors = [np.float32([0.1, 0.2] if safe else [-0.4, 0.3])] * 4
    shapes = [np.float32([0.5, 0.5] if safe else [1.5, 0.9])] * 4
    kwargs = dict(out_of_bounds_policy=policy)
    if policy == "pad":
        kwargs["fill_values"] = [10, 20, 30]
    cpu = _run(images, anchors, shapes, **kwargs)
    gpu = _run(images, anchors, shapes, device="gpu", **kwargs)
    for c, g in zip(cpu, gpu):
        np.testing.assert_array_equal(g, c)


@needs_gpu
def test_a_gpu_window_is_refused_by_name():
    images = _images()
    anchors = [np.float32([0.1, 0.1])] * 4
    pipe = stoker.Pipeline(batch_size=4, device_id=0)
    with pipe:
        x = fn.external_source(lambda: images, layout="HWC", device="gpu")
        a = fn.external_source(lambda: anchors, device="gpu")
        pipe.set_outputs(fn.slice(x, a, a))
    with pytest.raises(ValueError, match="it is read on the host: give CPU data"):
        pipe.build()
