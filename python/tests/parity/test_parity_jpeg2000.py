"""JPEG 2000 decoding against DALI 2.4 (DALI reads it on the CPU with OpenCV's OpenJPEG reader,
stoker with OpenJPEG directly): JP2 files and raw J2K codestreams, lossless and lossy, tiled,
gray, RGB, RGBA, 16-bit; every output type at uint8 and uint16, windows and peek_image_shape.
Subsampled components (which DALI's reader refuses), 12-bit samples and sYCC are checked in
the C++ tests (src/codecs/jpeg2000). device="mixed" (nvJPEG2000 on both sides, where stoker
finds libnvjpeg2k) against DALI's mixed decoder on the GPU machine."""

import io

import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, has_gpu, run

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PIL = pytest.importorskip("PIL.Image")
from PIL import features as pil_features  # noqa: E402
import stoker  # noqa: E402

if not stoker._stoker.build_info()["openjpeg"]:
    pytest.skip("stoker was built without OpenJPEG", allow_module_level=True)
if not pil_features.check("jpg_2000"):
    pytest.skip("Pillow was built without OpenJPEG (it writes the test files)",
                allow_module_level=True)

PARITY = {"decoders.image": "exact"}

Y, X = np.mgrid[0:37, 0:53]
RGB = np.stack([X * 4, Y * 6, (X + Y) * 2], -1).astype(np.uint8)
GRAY16 = (X * 1000 + Y * 7).astype(np.uint16)


def _jp2(array, kind="JPEG2000", **kw):
    buf = io.BytesIO()
    PIL.fromarray(array).save(buf, kind, **kw)
    return buf.getvalue()


def _j2k(array, **kw):
    buf = io.BytesIO()
    PIL.fromarray(array).save(buf, "JPEG2000", no_jp2=True, **kw)
    return buf.getvalue()


FILES = {
    "lossless": _jp2(RGB, irreversible=False),
    "j2k": _j2k(RGB),
    "lossy": _jp2(RGB, quality_mode="rates", quality_layers=[20], irreversible=True),
    "tiled": _jp2(RGB, tile_size=(16, 16), num_resolutions=2),
    "gray": _jp2(RGB[..., 0]),
    "rgba": _jp2(np.dstack([RGB, (X * 3).astype(np.uint8)])),
    "gray16": _jp2(GRAY16),
}


def _decode(lib, blobs, output_type, dtype):
    return run(lib, lambda fn, types: fn.decoders.image(
        fn.external_source(source=lambda: [np.frombuffer(b, np.uint8) for b in blobs],
                           batch=True),
        output_type=getattr(types, output_type), dtype=getattr(types, dtype)), len(blobs))[0][0]


@pytest.mark.parametrize("dtype", ["UINT8", "UINT16", "FLOAT"])
@pytest.mark.parametrize("output_type", ["RGB", "BGR", "ANY_DATA", "GRAY"])
def test_images_are_the_same(output_type, dtype):
    blobs = list(FILES.values())
    ours, theirs = (_decode(lib, blobs, output_type, dtype) for lib in ("stoker", "dali"))
    # Gray from colour: PIL's weights, DALI (OpenCV) rounds differently (one level at most).
    atol = 1 if output_type == "GRAY" and dtype != "FLOAT" else 0
    if dtype == "FLOAT":
        atol = 1 / 255 if output_type == "GRAY" else 1e-6
    assert_same(ours, theirs, atol=atol, what=f"{output_type} {dtype}")


def test_lossless_files_give_the_pixels_written():
    for name in ("lossless", "j2k", "tiled"):
        (got,) = _decode("stoker", [FILES[name]], "RGB", "UINT8")
        np.testing.assert_array_equal(got, RGB, err_msg=name)
    (got,) = _decode("stoker", [FILES["gray16"]], "ANY_DATA", "UINT16")
    np.testing.assert_array_equal(got[..., 0], GRAY16)


def test_windows_and_shapes_are_the_same():
    blobs = list(FILES.values())

    def define(fn, types):
        data = fn.external_source(source=lambda: [np.frombuffer(b, np.uint8) for b in blobs],
                                  batch=True)
        anchor = fn.constant(fdata=[0.25, 0.1])
        shape = fn.constant(fdata=[0.5, 0.7])
        return (fn.decoders.image_crop(data, crop=(11, 7), crop_pos_x=0.3, crop_pos_y=0.8),
                fn.decoders.image_slice(data, anchor, shape),
                fn.decoders.image_random_crop(data, seed=3),
                fn.peek_image_shape(data))

    out = {lib: run(lib, define, len(blobs)) for lib in ("stoker", "dali")}
    for k, what in enumerate(("image_crop", "image_slice")):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=what)
    assert_same(out["stoker"][0][3], out["dali"][0][3], what="peek_image_shape")
    # image_random_crop: stoker's random windows differ from DALI's; each is the window of the
    # whole image it names.
    whole = _decode("stoker", blobs, "RGB", "UINT8")
    for crop, image in zip(out["stoker"][0][2], whole):
        h, w = crop.shape[:2]
        found = any(np.array_equal(image[y:y + h, x:x + w], crop)
                    for y in range(image.shape[0] - h + 1) for x in range(image.shape[1] - w + 1))
        assert found, "a random crop that is no window of the image"


@pytest.mark.parametrize("output_type", ["RGB", "ANY_DATA", "GRAY"])
def test_mixed_decoding_is_dalis(output_type):
    """DALI decodes JPEG 2000 with nvJPEG2000 in its mixed decoder, stoker where
    libnvjpeg2k is found (the CPU's pixels otherwise: the same for lossless files)."""
    if not has_gpu():
        pytest.skip("no CUDA device: the mixed decoders are compared on the GPU machine")
    blobs = list(FILES.values())

    def define(fn, types):
        data = fn.external_source(source=lambda: [np.frombuffer(b, np.uint8) for b in blobs],
                                  batch=True)
        return (fn.decoders.image(data, device="mixed", output_type=getattr(types, output_type)),
                fn.decoders.image_crop(data, device="mixed", crop=(11, 7), crop_pos_x=0.3,
                                       crop_pos_y=0.8, output_type=getattr(types, output_type)))

    out = {lib: run(lib, define, len(blobs), device_id=0)[0] for lib in ("stoker", "dali")}
    lossy = list(FILES).index("lossy")
    atol = 1 if output_type == "GRAY" else 0  # (gray from colour: as on the CPU)
    for k, what in enumerate(("image", "image_crop")):
        ours, theirs = out["stoker"][k], out["dali"][k]
        exact = [i for i in range(len(blobs)) if i != lossy]
        assert_same([ours[i] for i in exact], [theirs[i] for i in exact], atol=atol,
                    what=f"{what} {output_type}")
        # (nvJPEG2000 on both sides where stoker finds it; OpenJPEG against it where not)
        assert_same([ours[lossy]], [theirs[lossy]], atol=4, max_mismatch=0.05,
                    what=f"{what} {output_type} lossy")

def _error(blob, **kw):
    with pytest.raises(ValueError) as e:
        run("stoker", lambda fn, types: fn.decoders.image(
            fn.external_source(source=lambda: [np.frombuffer(blob, np.uint8)], batch=True),
            **kw), 1)
    return str(e.value)


def test_corrupt_and_oversized_files_are_refused_by_name():
    cut = FILES["lossless"][:-100]  # inside the tile data
    assert "invalid JPEG 2000 data" in _error(cut)
    assert "invalid JPEG 2000 header" in _error(FILES["j2k"][:20])
    assert "JPEG 2000 of 53x37 pixels exceeds max_pixels (100)" in _error(FILES["gray"],
                                                                          max_pixels=100)
