"""TIFF in device="mixed" decoding: nvTIFF decodes 8-bit gray and RGB images (with or without
alpha, in strips or tiles, uncompressed, LZW, Deflate or PackBits) as stored on the GPU, whole or
a window, and what it would not give as the CPU decoder (libtiff) does goes to the CPU threads:
16 bits, planes, JPEG-compressed TIFFs (nvJPEG's pixels are not libjpeg-turbo's), other
channel counts than asked, BGR, YCbCr output. Every pixel equals the CPU decoder's. Skipped
without a CUDA device; nvTIFF's counts are checked where libnvtiff is found (PyPI's
nvidia-nvtiff-cu13), the CPU's otherwise."""

import io

import numpy as np
import pytest

import stoker
from coded_images import gradient_image
from stoker import _stoker, fn, types

tifffile = pytest.importorskip("tifffile", reason="tifffile writes the test TIFFs")
PIL = pytest.importorskip("PIL.Image", reason="Pillow writes the compressed test TIFFs")

pytestmark = [
    pytest.mark.skipif(not _stoker.cuda_available(), reason="no CUDA device: GPU test skipped"),
    pytest.mark.skipif(not _stoker.build_info()["libtiff"], reason="stoker was built without libtiff"),
]


def _tiff(img, **kw):
    buf = io.BytesIO()
    tifffile.imwrite(buf, img, **kw)
    return buf.getvalue()


def _pil_tiff(img, compression):
    """Compressed TIFFs (tifffile needs imagecodecs for them; Pillow writes them with libtiff)."""
    buf = io.BytesIO()
    PIL.fromarray(img).save(buf, "TIFF", compression=compression)
    return buf.getvalue()


RGB = dict(photometric="rgb")
# (name, bytes): what nvTIFF may take with output_type RGB are the first five.
FILES = [
    ("rgb", _tiff(gradient_image(45, 67, 3, 1), **RGB)),
    ("rgb lzw", _pil_tiff(gradient_image(61, 50, 3, 2), "tiff_lzw")),
    ("rgb deflate", _pil_tiff(gradient_image(33, 40, 3, 3), "tiff_adobe_deflate")),
    ("rgb tiled", _tiff(gradient_image(96, 80, 3, 4), tile=(32, 32), **RGB)),
    ("rgb packbits", _pil_tiff(gradient_image(20, 30, 3, 5), "packbits")),
    ("gray", _tiff(gradient_image(30, 31, 1, 6), photometric="minisblack")),
    ("rgba", _tiff(gradient_image(29, 35, 4, 7), photometric="rgb", extrasamples=["unassalpha"])),
    ("gray16", _tiff((gradient_image(20, 24, 1, 8).astype(np.uint16) * 250),
                     photometric="minisblack")),
    ("rgb planes", _tiff(np.moveaxis(gradient_image(25, 26, 3, 9), -1, 0), planarconfig="separate",
                         **RGB)),
    ("rgb jpeg", _pil_tiff(gradient_image(32, 32, 3, 10), "jpeg")),
]
NAMES = [n for n, _ in FILES]
BLOBS = [b for _, b in FILES]


def _decode(blobs, device, op="image", **kwargs):
    pipe = stoker.Pipeline(batch_size=len(blobs), num_threads=2, device_id=0)
    with pipe:
        data = fn.external_source(source=lambda: [np.frombuffer(b, np.uint8) for b in blobs],
                                  batch=True)
        pipe.set_outputs(getattr(fn.decoders, op)(data, device=device, name="dec", **kwargs))
    (b,) = pipe.run()
    out = [s.numpy() for s in (b.as_cpu() if device == "mixed" else b)]
    return out, (pipe.operator_stats("dec") if device == "mixed" else None)


def _assert_cpus(cpu, mixed, names):
    for name, a, m in zip(names, cpu, mixed, strict=True):
        assert a.dtype == m.dtype and a.shape == m.shape, (name, a.shape, m.shape)
        np.testing.assert_array_equal(a, m, err_msg=name)


def _check_counts(s, offered, uncompressed, total):
    """`offered` images went to nvTIFF, of which the `uncompressed` ones it decodes whatever
    libraries it finds (LZW and Deflate may need nvCOMP); the rest decoded on the CPU."""
    if not s["tiff_available"]:
        assert s["tiff_images"] == 0 and s["cpu_images"] == total, s
        return
    assert s["tiff_images"] + s["tiff_refused"] == offered, s
    assert s["tiff_images"] >= uncompressed, s
    assert s["cpu_images"] == total - s["tiff_images"], s


# Offered to nvTIFF: the 8-bit TIFFs whose channels are the output's (RGB: the seven colour
# ones; GRAY: gray; ANY_DATA: all nine 8-bit ones), of which it refuses the planes and the JPEG
# one; decoded there whatever it finds: the uncompressed ones (RGB: rgb and rgb tiled; GRAY:
# gray; ANY_DATA: those and rgba); BGR: none offered.
@pytest.mark.parametrize("output_type, offered, uncompressed", [
    ("RGB", 7, 2), ("GRAY", 1, 1), ("ANY_DATA", 9, 4), ("BGR", 0, 0)])
def test_mixed_tiff_equals_the_cpu_decoder(output_type, offered, uncompressed):
    kwargs = {"output_type": getattr(types, output_type)}
    cpu, _ = _decode(BLOBS, "cpu", **kwargs)
    mixed, s = _decode(BLOBS, "mixed", **kwargs)
    _assert_cpus(cpu, mixed, NAMES)
    _check_counts(s, offered, uncompressed, len(BLOBS))


def test_windows_decode_on_the_gpu():
    kwargs = {"crop": (20, 24), "crop_pos_x": 0.7, "crop_pos_y": 0.4}
    cpu, _ = _decode(BLOBS[:4], "cpu", op="image_crop", **kwargs)
    mixed, s = _decode(BLOBS[:4], "mixed", op="image_crop", **kwargs)
    _assert_cpus(cpu, mixed, NAMES[:4])
    assert all(m.shape == (20, 24, 3) for m in mixed)
    _check_counts(s, 4, 2, 4)


def test_many_tiffs_back_to_back_keep_their_own_pixels():
    blobs = [_tiff(gradient_image(40 + k % 7, 52 + k % 5, 3, 20 + k), **RGB) for k in range(24)]
    cpu, _ = _decode(blobs, "cpu")
    for _ in range(3):
        mixed, s = _decode(blobs, "mixed")
        _assert_cpus(cpu, mixed, [f"tiff {k}" for k in range(len(blobs))])
    _check_counts(s, len(blobs), len(blobs), len(blobs))


def test_a_truncated_file_gets_the_cpu_decoders_error():
    """The strips of a truncated file run past its end: left to the CPU decoder, whose error
    names the sample (the GPU would decode garbage and say nothing)."""
    bad = BLOBS[0][:-60]  # (its directory comes first, its strips after)
    for device in ("cpu", "mixed"):
        with pytest.raises(ValueError, match=r"sample 1: invalid TIFF data"):
            _decode([BLOBS[3], bad], device)
