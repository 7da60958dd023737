"""TIFF decoding against DALI 2.4 (both read TIFF with libtiff on the CPU): strips and tiles,
no compression, LZW, deflate, PackBits and JPEG, 8- and 16-bit gray and RGB(A), palettes, the
first page of a multi-page file; every output type at uint8 and uint16, windows and
peek_image_shape. Where DALI decodes no
TIFF or a wrong one (planar files go to OpenCV, which fails on tiled ones; gray+alpha comes out
garbled), stoker's pixels are checked against the file's own (docs/dali_differences.md).
device="mixed" (nvTIFF on both sides, where stoker finds libnvtiff) against DALI's mixed decoder
on the GPU machine, for the lossless 8-bit files."""

import io
import os

import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, has_gpu, run

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PIL = pytest.importorskip("PIL.Image")
tifffile = pytest.importorskip("tifffile", reason="tifffile writes the tiled and planar TIFFs")
import stoker  # noqa: E402

if not stoker._stoker.build_info()["libtiff"]:
    pytest.skip("stoker was built without libtiff", allow_module_level=True)

PARITY = {"decoders.image": "exact"}

Y, X = np.mgrid[0:37, 0:53]
RGB = np.stack([X * 4, Y * 6, (X + Y) * 2], -1).astype(np.uint8)
RGB16 = RGB.astype(np.uint16) * 251 + 7
CMAP = np.stack([np.arange(256) * 257, (255 - np.arange(256)) * 255,
                 np.full(256, 40000)]).astype(np.uint16)


def _pil(array, **kw):
    buf = io.BytesIO()
    PIL.fromarray(array).save(buf, "TIFF", **kw)
    return buf.getvalue()


def _tf(array, **kw):
    buf = io.BytesIO()
    tifffile.imwrite(buf, array, **kw)
    return buf.getvalue()


def _palette():
    buf = io.BytesIO()
    PIL.fromarray(RGB).convert("P").save(buf, "TIFF")
    return buf.getvalue()


def _multipage():
    buf = io.BytesIO()
    PIL.fromarray(RGB).save(buf, "TIFF", save_all=True, append_images=[PIL.fromarray(255 - RGB)])
    return buf.getvalue()


FILES = {
    "raw": _pil(RGB), "lzw": _pil(RGB, compression="tiff_lzw"),
    "deflate": _pil(RGB, compression="tiff_adobe_deflate"),
    "packbits": _pil(RGB, compression="packbits"),
    "jpeg": _pil(RGB, compression="jpeg", quality=90),
    "gray": _pil(RGB[..., 0]), "rgba": _pil(np.dstack([RGB, (X * 3).astype(np.uint8)])),
    "gray16": _pil((X * 1000 + Y * 7).astype(np.uint16)),
    "palette": _palette(), "multipage": _multipage(),
    "tiled": _tf(RGB, tile=(16, 16), photometric="rgb"),
    "rgb16": _tf(RGB16, photometric="rgb"),
    "rgb16_tiled_deflate": _tf(RGB16, tile=(16, 32), photometric="rgb", compression="zlib"),
    "gray16_big_endian": _tf((X * 1000 + Y * 7).astype(">u2"), photometric="minisblack",
                             byteorder=">"),
    "palette8": _tf(((X * 5 + Y) % 256).astype(np.uint8), photometric="palette", colormap=CMAP),
}


def _decode(lib, blobs, output_type, dtype):
    return run(lib, lambda fn, types: fn.decoders.image(
        fn.external_source(source=lambda: [np.frombuffer(b, np.uint8) for b in blobs],
                           batch=True),
        output_type=getattr(types, output_type), dtype=getattr(types, dtype)), len(blobs))[0][0]


@pytest.mark.parametrize("dtype", ["UINT8", "UINT16"])
@pytest.mark.parametrize("output_type", ["RGB", "BGR", "ANY_DATA", "GRAY"])
def test_images_are_the_same(output_type, dtype):
    blobs = list(FILES.values())
    ours, theirs = _decode("stoker", blobs, output_type, dtype), _decode("dali", blobs,
                                                                         output_type, dtype)
    if output_type == "GRAY":
        # Gray from colour: PIL's weights, DALI rounds differently (one level at most).
        assert_same(ours, theirs, atol=1, what=f"{output_type} {dtype}")
    else:
        assert_same(ours, theirs, what=f"{output_type} {dtype}")


@pytest.mark.parametrize("output_type", ["RGB", "ANY_DATA"])
def test_mixed_decoding_of_lossless_files_is_dalis(output_type):
    if not has_gpu():
        pytest.skip("no CUDA device: the mixed decoders are compared on the GPU machine")
    names = ["raw", "lzw", "deflate", "packbits", "gray", "tiled"]
    blobs = [FILES[k] for k in names]

    def define(fn, types):
        data = fn.external_source(source=lambda: [np.frombuffer(b, np.uint8) for b in blobs],
                                  batch=True)
        return (fn.decoders.image(data, device="mixed", output_type=getattr(types, output_type)),
                fn.decoders.image_crop(data, device="mixed", crop=(11, 7), crop_pos_x=0.3,
                                       crop_pos_y=0.8, output_type=getattr(types, output_type)))

    out = {lib: run(lib, define, len(blobs), device_id=0)[0] for lib in ("stoker", "dali")}
    for k, what in enumerate(("image", "image_crop")):
        assert_same(out["stoker"][k], out["dali"][k], what=f"{what} {output_type}")

def test_windows_and_shapes_are_the_same():
    blobs = list(FILES.values())

    def define(fn, types):
        data = fn.external_source(source=lambda: [np.frombuffer(b, np.uint8) for b in blobs],
                                  batch=True)
        anchor = fn.constant(fdata=[0.25, 0.1])
        shape = fn.constant(fdata=[0.5, 0.7])
        return (fn.decoders.image_crop(data, crop=(11, 7), crop_pos_x=0.3, crop_pos_y=0.8),
                fn.decoders.image_slice(data, anchor, shape),
                fn.peek_image_shape(data))

    out = {lib: run(lib, define, len(blobs)) for lib in ("stoker", "dali")}
    for k, what in enumerate(("image_crop", "image_slice", "peek_image_shape")):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=what)


def test_what_dali_reads_wrongly_or_not_at_all():
    """Planar files (DALI hands them to OpenCV, which fails on tiled ones) and gray+alpha (DALI
    reads the samples as if RGB): stoker's pixels are the file's."""
    planar = np.moveaxis(RGB, -1, 0)
    graya = np.dstack([RGB[..., 0], RGB[..., 1]])
    cases = [
        (_tf(planar, planarconfig="separate", photometric="rgb"), "RGB", RGB),
        (_tf(planar, planarconfig="separate", photometric="rgb", tile=(16, 16)), "RGB", RGB),
        (_tf(graya, photometric="minisblack", extrasamples=["unassalpha"]), "ANY_DATA", graya),
        (_tf(graya, photometric="minisblack", extrasamples=["unassalpha"]), "RGB",
         np.repeat(graya[..., :1], 3, axis=-1)),
    ]
    for blob, output_type, want in cases:
        (got,) = _decode("stoker", [blob], output_type, "UINT8")
        np.testing.assert_array_equal(got, want)


def _error(blob):
    with pytest.raises(ValueError) as e:
        _decode("stoker", [blob], "RGB", "UINT8")
    return str(e.value)


def test_cmyk_decodes_as_dalis_through_libtiffs_rgba_conversion():
    buf = io.BytesIO()
    PIL.fromarray(RGB).convert("CMYK").save(buf, "TIFF")
    for output_type in ("RGB", "ANY_DATA", "GRAY"):
        ours, theirs = (_decode(lib, [buf.getvalue()], output_type, "UINT8")
                        for lib in ("stoker", "dali"))
        assert_same(ours, theirs, atol=1 if output_type == "GRAY" else 0, what=output_type)
    (rgb,) = _decode("stoker", [buf.getvalue()], "RGB", "UINT8")
    np.testing.assert_array_equal(rgb, RGB)  # Pillow's CMYK (K = 0) converts back exactly


def test_unsupported_and_corrupt_tiffs_are_refused_by_name():
    assert "TIFF with floating-point samples is not supported" in _error(
        _tf(RGB.astype(np.float32), photometric="rgb"))
    assert "invalid TIFF" in _error(FILES["lzw"][:len(FILES["lzw"]) // 2])
    assert "invalid TIFF header" in _error(FILES["raw"][:6])
    big = _tf(np.zeros((4, 5), np.uint8), photometric="minisblack")
    with pytest.raises(ValueError, match=r"TIFF of 5x4 pixels exceeds max_pixels \(19\)"):
        run("stoker", lambda fn, types: fn.decoders.image(
            fn.external_source(source=lambda: [np.frombuffer(big, np.uint8)], batch=True),
            max_pixels=19), 1)
