"""decoders.* `output_type='YCbCr'` (ITU-R BT.601 studio range from the RGB decode, DALI's
convention: checked against DALI's reference for the swan photo and a numpy formula) and
`dtype` uint16/float32 (the uint8 result in the type's dynamic range; 16-bit PNGs at full
precision, checked against PNGs written here with known 16-bit samples)."""

import io
import os
import struct
import zlib

import numpy as np
import pytest

import stoker
from stoker import fn

from decode_util import decode

PIL = pytest.importorskip("PIL.Image")


def _jpeg(seed=0, size=(37, 53)):
    rng = np.random.default_rng(seed)
    img = rng.integers(0, 256, (*size, 3), dtype=np.uint8)
    buf = io.BytesIO()
    PIL.fromarray(img).save(buf, "JPEG", quality=90)
    return buf.getvalue()


def _png16(samples):
    """A 16-bit PNG (gray, gray+alpha, RGB or RGBA by the channel count) written by hand, so
    the test knows every sample (PIL writes 16-bit colour only through 8 bits)."""
    h, w, c = samples.shape
    color_type = {1: 0, 2: 4, 3: 2, 4: 6}[c]
    raw = b"".join(b"\0" + samples[y].astype(">u2").tobytes() for y in range(h))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(
            ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", w, h, 16, color_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) +
            chunk(b"IEND", b""))


def _ycbcr(rgb):
    r, g, b = (rgb[..., k].astype(np.float64) for k in range(3))
    y = 16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255
    cb = 128 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255
    cr = 128 + (112.0 * r - 93.786 * g - 18.214 * b) / 255
    return np.stack([y, cb, cr], -1)


def test_ycbcr_matches_dali_reference(shared_data):
    d = os.path.join(shared_data, "jpeg", "dali", "mixed")
    blob = open(os.path.join(d, "1", "swan-3584559_640.jpg"), "rb").read()
    (got,) = decode([blob], "YCbCr")
    ref = np.load(os.path.join(d, "reference", "swan-3584559_640_ycbcr.npy"))
    # DALI's generator rounds its float formula its own way (MANIFEST): within 1, and
    # mostly equal to our rounding of the same formula.
    diff = np.abs(got.astype(np.int16) - ref)
    assert got.shape == ref.shape and diff.max() <= 1
    rgb = np.load(os.path.join(d, "reference", "swan-3584559_640.npy"))
    np.testing.assert_allclose(got, _ycbcr(rgb), atol=0.5 + 1e-3)


def test_ycbcr_equals_color_space_conversion_of_rgb():
    blobs = [_jpeg(s) for s in range(3)]
    for blob, ycc, rgb in zip(blobs, decode(blobs, "YCbCr"), decode(blobs, "RGB")):
        assert ycc.shape == rgb.shape
        np.testing.assert_allclose(ycc, _ycbcr(rgb), atol=0.5 + 1e-3)
        assert 16 <= ycc[..., 0].min() and ycc[..., 0].max() <= 235
        assert 16 <= ycc[..., 1:].min() and ycc[..., 1:].max() <= 240


def test_wider_dtypes_scale_the_uint8_decode():
    blobs = [_jpeg(s) for s in range(3)]
    for out_type in ("RGB", "GRAY", "YCbCr"):
        u8 = decode(blobs, out_type)
        u16 = decode(blobs, out_type, dtype=stoker.types.UINT16)
        f32 = decode(blobs, out_type, dtype="float32")
        for a, b, c in zip(u8, u16, f32):
            assert b.dtype == np.uint16 and c.dtype == np.float32
            if out_type == "YCbCr":  # converted from the wide RGB values: within rounding
                np.testing.assert_allclose(b, a.astype(np.float64) * 257, atol=0.5 * 257 + 1)
                np.testing.assert_allclose(c, a / 255.0, atol=0.5 / 255 + 1e-6)
            else:
                np.testing.assert_array_equal(b, a.astype(np.uint16) * 257)
                np.testing.assert_allclose(c, a / 255.0, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("channels", [1, 2, 3, 4])
def test_16_bit_png_keeps_its_precision(channels):
    rng = np.random.default_rng(channels)
    samples = rng.integers(0, 65536, (9, 14, channels), dtype=np.uint16)
    blob = _png16(samples)
    (any16,) = decode([blob], "ANY_DATA", dtype="uint16")
    np.testing.assert_array_equal(any16, samples)
    (anyf,) = decode([blob], "ANY_DATA", dtype="float32")
    np.testing.assert_allclose(anyf, samples / 65535.0, rtol=1e-6)
    (any8,) = decode([blob], "ANY_DATA")  # uint8: the high byte, as before
    np.testing.assert_array_equal(any8, (samples >> 8).astype(np.uint8))
    gray = samples[..., :1] if channels <= 2 else None
    rgb = np.repeat(samples[..., :1], 3, 2) if channels <= 2 else samples[..., :3]
    (rgb16,) = decode([blob], "RGB", dtype="uint16")
    np.testing.assert_array_equal(rgb16, rgb)
    (gray16,) = decode([blob], "GRAY", dtype="uint16")
    if gray is None:  # PIL's weights on 16-bit samples
        r, g, b = (samples[..., k].astype(np.uint64) for k in range(3))
        gray = ((19595 * r + 38470 * g + 7471 * b + 32768) >> 16).astype(np.uint16)[..., None]
    np.testing.assert_array_equal(gray16, gray)
    if channels >= 3:
        (ycc,) = decode([blob], "YCbCr", dtype="float32")
        np.testing.assert_allclose(ycc, _ycbcr(rgb / 257.0) / 255, atol=1e-5)


def test_windows_and_orientation_with_wide_dtypes(shared_data):
    samples = np.random.default_rng(7).integers(0, 65536, (20, 30, 3), dtype=np.uint16)
    blob = _png16(samples)
    pipe = stoker.Pipeline(batch_size=1, num_threads=1, seed=0)
    with pipe:
        data = fn.external_source(lambda: [np.frombuffer(blob, np.uint8)])
        pipe.set_outputs(fn.decoders.image_crop(data, crop=(8, 11), crop_pos_x=0.25,
                                                crop_pos_y=1.0, dtype="uint16"))
    (got,) = pipe.run()
    y, x = int(np.floor(1.0 * (20 - 8) + 0.5)), int(np.floor(0.25 * (30 - 11) + 0.5))
    np.testing.assert_array_equal(got[0].numpy(), samples[y:y + 8, x:x + 11])
    # An EXIF-oriented JPEG: the oriented uint8 decode, widened.
    f = os.path.join(shared_data, "jpeg", "dali", "orientation", "padlock-406986_640_rotate_90.jpg")
    blob = open(f, "rb").read()
    (u8,) = decode([blob], "RGB")
    (u16,) = decode([blob], "RGB", dtype="uint16")
    np.testing.assert_array_equal(u16, u8.astype(np.uint16) * 257)
    np.testing.assert_array_equal(u8, np.load(f[:-4] + ".npy"))


def test_bad_dtype_and_output_type_are_named():
    with pytest.raises(Exception, match="dtype must be uint8, uint16 or float32, got int32"):
        pipe = stoker.Pipeline(batch_size=1, num_threads=1, seed=0)
        with pipe:
            data = fn.external_source(lambda: [np.frombuffer(_jpeg(), np.uint8)])
            pipe.set_outputs(fn.decoders.image(data, dtype="int32"))
        pipe.run()
    with pytest.raises(Exception, match="LAB"):
        pipe = stoker.Pipeline(batch_size=1, num_threads=1, seed=0)
        with pipe:
            data = fn.external_source(lambda: [np.frombuffer(_jpeg(), np.uint8)])
            pipe.set_outputs(fn.decoders.image(data, output_type="LAB"))
        pipe.run()
