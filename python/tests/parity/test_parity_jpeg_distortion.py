"""jpeg_compression_distortion against DALI 2.4: the same pixels (both encode with libjpeg-turbo
as Pillow does and decode with the islow IDCT), for per-sample qualities (clamped to 1..100),
odd sizes, one-pixel images and FHWC sequences; the errors stoker gives for what it refuses."""

import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, run

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
