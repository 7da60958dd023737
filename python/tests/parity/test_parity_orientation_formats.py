"""EXIF orientation of PNG (eXIf chunk) and TIFF (Orientation tag) files against DALI 2.4, which
applies both with adjust_orientation (its default), as it does for JPEG: all eight
orientations, whole images, windows and peek_image_shape; adjust_orientation=False keeps the
pixels as stored. WebP files with an EXIF chunk fail in DALI's decoder: stoker's are checked
against Pillow's ImageOps.exif_transpose (docs/dali_differences.md)."""

import io

import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, run

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PIL = pytest.importorskip("PIL.Image")
from PIL import ImageOps  # noqa: E402
import stoker  # noqa: E402

Y, X = np.mgrid[0:23, 0:37]
RGB = np.stack([X * 6, Y * 11, (X + Y) * 3], -1).astype(np.uint8)


def _save(kind, orientation, **kw):
    buf = io.BytesIO()
    exif = PIL.Exif()
    exif[274] = orientation
    if kind == "TIFF":
        PIL.fromarray(RGB).save(buf, "TIFF", tiffinfo={274: orientation}, **kw)
    else:
        PIL.fromarray(RGB).save(buf, kind, exif=exif.tobytes(), **kw)
    return buf.getvalue()


def _blobs(kind):
    return [_save(kind, o) for o in range(1, 9)]


def _define(blobs, adjust):
    def define(fn, types):
        data = fn.external_source(source=lambda: [np.frombuffer(b, np.uint8) for b in blobs],
                                  batch=True)
        return (fn.decoders.image(data, adjust_orientation=adjust),
                fn.decoders.image_crop(data, crop=(9, 14), crop_pos_x=0.2, crop_pos_y=0.7,
                                       adjust_orientation=adjust),
                fn.peek_image_shape(data, adjust_orientation=adjust))
    return define


@pytest.mark.parametrize("adjust", [True, False])
@pytest.mark.parametrize("kind", ["PNG", "TIFF"])
def test_orientation_is_applied_as_dalis(kind, adjust):
    if kind == "TIFF" and not stoker._stoker.build_info()["libtiff"]:
        pytest.skip("stoker was built without libtiff")
    blobs = _blobs(kind)
    out = {lib: run(lib, _define(blobs, adjust), len(blobs)) for lib in ("stoker", "dali")}
    for k, what in enumerate(("decoders.image", "decoders.image_crop", "peek_image_shape")):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=f"{kind} {what}")
    if adjust:  # and they are the turned images, not the stored ones
        assert out["stoker"][0][0][5].shape == (37, 23, 3)


def test_webp_orientation_is_pillows_exif_transpose():
    if not stoker._stoker.build_info()["libwebp"]:
        pytest.skip("stoker was built without libwebp")
    blobs = [_save("WEBP", o, lossless=True) for o in range(1, 9)]
    (images, _, shapes), = [run("stoker", _define(blobs, True), len(blobs))[0]]
    for o, (blob, got, shape) in enumerate(zip(blobs, images, shapes), start=1):
        want = np.asarray(ImageOps.exif_transpose(PIL.open(io.BytesIO(blob))).convert("RGB"))
        np.testing.assert_array_equal(got, want, err_msg=f"orientation {o}")
        assert tuple(shape) == want.shape


def test_tiffs_read_through_libtiffs_rgba_conversion_turn_once():
    """CMYK TIFFs go through libtiff's RGBA interface, which must keep the stored rows: the
    Orientation tag is applied once, by adjust_orientation."""
    if not stoker._stoker.build_info()["libtiff"]:
        pytest.skip("stoker was built without libtiff")
    buf = io.BytesIO()
    PIL.fromarray(RGB).convert("CMYK").save(buf, "TIFF", tiffinfo={274: 2})  # mirrored
    blob = buf.getvalue()
    for adjust, want in ((False, RGB), (True, RGB[:, ::-1])):
        (got,) = run("stoker", lambda fn, types: fn.decoders.image(
            fn.external_source(source=lambda: [np.frombuffer(blob, np.uint8)], batch=True),
            adjust_orientation=adjust), 1)[0][0]
        np.testing.assert_array_equal(got, want, err_msg=f"adjust_orientation={adjust}")
