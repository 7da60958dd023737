"""jpeg_compression_distortion against DALI 2.4: the same pixels (both encode with libjpeg-turbo
as Pillow does and decode with the islow IDCT), for per-sample qualities (clamped to 1..100),
odd sizes, one-pixel images and FHWC sequences; the errors stoker gives for what it refuses.
On the GPU (DALI's own algorithm there, without entropy coding): the same pixels as DALI's GPU
backend, and within a few levels of the CPU backend's."""

import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, has_gpu, run

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {"jpeg_compression_distortion": "exact"}

RNG = np.random.default_rng(5)
Y, X = np.mgrid[0:61, 0:83]
SMOOTH = np.stack([X * 3, Y * 4, (X + Y) * 2], -1).astype(np.uint8)
IMAGES = [SMOOTH, RNG.integers(0, 256, (17, 5, 3), dtype=np.uint8),
          np.zeros((1, 1, 3), np.uint8), np.full((9, 16, 3), 255, np.uint8)]
QUALITIES = [50, 1, 150, -3]


def test_images_with_per_sample_quality_are_the_same():
    def define(fn, types):
        x = fn.external_source(source=lambda: IMAGES, batch=True, layout="HWC")
        q = fn.external_source(source=lambda: [np.array(v, np.int32) for v in QUALITIES],
                               batch=True)
        return (fn.jpeg_compression_distortion(x, quality=q), fn.jpeg_compression_distortion(x),
                fn.jpeg_compression_distortion(x, quality=97))

    out = {lib: run(lib, define, len(IMAGES)) for lib in ("stoker", "dali")}
    for k in range(3):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=f"output {k}")
    # Quality 97 stays close to the image on average, quality 1 does not.
    err = [np.abs(out["stoker"][0][k][0].astype(int) - SMOOTH).mean() for k in (2, 0)]
    assert err[0] < 2 and err[0] < err[1], err


def test_sequences_are_distorted_frame_by_frame_as_dalis():
    clips = [np.stack([SMOOTH, 255 - SMOOTH, SMOOTH // 2]), np.stack([IMAGES[1]] * 2)]

    def define(fn, types):
        x = fn.external_source(source=lambda: clips, batch=True, layout="FHWC")
        return fn.jpeg_compression_distortion(x, quality=30)

    ours, theirs = (run(lib, define, len(clips))[0][0] for lib in ("stoker", "dali"))
    assert_same(ours, theirs, what="FHWC")


@pytest.mark.parametrize("image, layout, message", [
    (np.zeros((4, 4, 4), np.uint8), "HWC", r"sample 0 has shape \(4, 4, 4\); expected RGB"),
    (np.zeros((4, 4, 3), np.float32), "HWC", "expects uint8 images, got float32"),
    (np.zeros((3, 4, 4), np.uint8), "CHW", "expects HWC images"),
])
def test_what_it_refuses_is_named(image, layout, message):
    with pytest.raises((ValueError, TypeError), match=message):
        run("stoker", lambda fn, types: fn.jpeg_compression_distortion(
            fn.external_source(source=lambda: [image], batch=True, layout=layout)), 1)


def _gpu_case(fn, images, layout, qualities):
    x = fn.external_source(source=lambda: images, batch=True, layout=layout)
    q = fn.external_source(source=lambda: [np.array(v, np.int32) for v in qualities], batch=True)
    return (fn.jpeg_compression_distortion(x.gpu(), quality=q),
            fn.jpeg_compression_distortion(x, quality=q))


def _photos(count):
    """Smooth gradients and noise of odd sizes (not multiples of the 16x16 blocks)."""
    rng = np.random.default_rng(9)
    out = []
    for k in range(count):
        h, w = 23 + 17 * k, 41 + 9 * k
        y, x = np.mgrid[0:h, 0:w]
        img = np.stack([x * 5 + k, y * 3, (x + 2 * y) % 256], -1) % 256
        img[:, w // 2:] = rng.integers(0, 256, (h, w - w // 2, 3))
        out.append(img.astype(np.uint8))
    return out + IMAGES


def test_gpu_backend_is_dalis_gpu_backend():
    if not has_gpu():
        pytest.skip("no CUDA device: the GPU backends are compared on the GPU machine")
    images = _photos(4)
    qualities = [50, 1, 150, 95, 30, 75, -3, 100]
    out = {lib: run(lib, lambda fn, types: _gpu_case(fn, images, "HWC", qualities), len(images),
                    device_id=0)[0] for lib in ("stoker", "dali")}
    assert_same(out["stoker"][0], out["dali"][0], what="gpu")
    # As DALI's own tests bound its backends' difference: a mean of under 5 levels per image
    # (at qualities from 30: at 1 a step is 255, and one DC value moves a whole block).
    for k, (gpu, cpu) in enumerate(zip(out["stoker"][0], out["stoker"][1])):
        if gpu.size and min(max(qualities[k], 1), 100) >= 30:
            assert np.abs(gpu.astype(int) - cpu.astype(int)).mean() < 5, f"sample {k}"


def test_gpu_sequences_are_distorted_frame_by_frame_as_dalis():
    if not has_gpu():
        pytest.skip("no CUDA device: the GPU backends are compared on the GPU machine")
    clips = [np.stack([SMOOTH, 255 - SMOOTH, SMOOTH // 2]), np.stack([IMAGES[1]] * 2)]
    ours, theirs = (run(lib, lambda fn, types: _gpu_case(fn, clips, "FHWC", [20, 80]), 2,
                        device_id=0)[0][0] for lib in ("stoker", "dali"))
    assert_same(ours, theirs, what="FHWC gpu")
    assert np.array_equal(ours[1][0], ours[1][1])  # equal frames stay equal


@pytest.mark.parametrize("image, layout, message", [
    (np.zeros((4, 4, 4), np.uint8), "HWC", r"sample 0 has shape \(4, 4, 4\); expected RGB"),
    (np.zeros((4, 4, 3), np.float32), "HWC", "expects uint8 images, got float32"),
    (np.zeros((3, 4, 4), np.uint8), "CHW", "expects HWC images"),
])
def test_what_the_gpu_backend_refuses_is_named(image, layout, message):
    if not has_gpu():
        pytest.skip("no CUDA device: the GPU backend runs on the GPU machine")
    with pytest.raises((ValueError, TypeError), match=message):
        run("stoker", lambda fn, types: fn.jpeg_compression_distortion(
            fn.external_source(source=lambda: [image], batch=True, layout=layout).gpu()), 1)
