"""decoders.image on BMP and Netpbm: files written by PIL in every mode PIL writes, variants
built here byte by byte (RLE8/RLE4, 5-6-5 bit fields, top-down, OS/2 headers, ASCII PNM with
comments and small maxvals) with PIL's reading as the reference, and the shared libjpeg-turbo
test images."""

import io
import os
import struct

import numpy as np
import pytest

from decode_util import decode, luma

PIL = pytest.importorskip("PIL.Image")


def _pil(blob):
    return np.asarray(PIL.open(io.BytesIO(blob)).convert("RGB"))


def _check_all_types(blob, expect_rgb, any_channels):
    rgb, bgr, gray, any_data = (decode([blob], t)[0] for t in ("RGB", "BGR", "GRAY", "ANY_DATA"))
    for r in (rgb, bgr, gray, any_data):
        assert isinstance(r, np.ndarray), r
    np.testing.assert_array_equal(rgb, expect_rgb)
    np.testing.assert_array_equal(bgr, expect_rgb[..., ::-1])
    np.testing.assert_array_equal(gray, luma(expect_rgb) if any_channels >= 3 else
                                  expect_rgb[..., :1])
    assert any_data.shape[2] == any_channels


@pytest.mark.parametrize("mode", ["1", "L", "P", "RGB", "RGBA"])
@pytest.mark.parametrize("fmt", ["BMP", "PPM"])
def test_files_written_by_pil(mode, fmt):
    if fmt == "PPM" and mode in ("P", "RGBA"):
        pytest.skip("PIL writes no PNM for this mode")
    rng = np.random.default_rng(3)
    h, w = 11, 17  # odd: rows padded to 4 bytes (BMP) or 8 bits (PBM)
    if mode == "1":
        im = PIL.fromarray(rng.integers(0, 2, (h, w), dtype=np.uint8).astype(bool))
    elif mode == "P":
        im = PIL.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).quantize(50)
    else:
        c = {"L": 1, "RGB": 3, "RGBA": 4}[mode]
        a = rng.integers(0, 256, (h, w, c), dtype=np.uint8)
        im = PIL.fromarray(a[..., 0] if c == 1 else a, mode)
    buf = io.BytesIO()
    im.save(buf, fmt)
    blob = buf.getvalue()
    gray_file = fmt == "PPM" and mode in ("1", "L")
    # PIL writes RGBA as a 32-bit BI_RGB BMP, whose fourth byte Windows and PIL ignore.
    _check_all_types(blob, _pil(blob), 1 if gray_file else 3)


def _bmp(width, height, bits, pixels, palette=b"", compression=0, masks=b"", dib=40):
    """A BMP with a BITMAPINFOHEADER (or a 12-byte OS/2 one)."""
    if dib == 12:
        header = struct.pack("<IHHHH", 12, width, height, 1, bits)
    else:
        header = struct.pack("<IiiHHIIiiII", 40, width, height, 1, bits, compression,
                             len(pixels), 2835, 2835, len(palette) // 4 if palette else 0, 0)
    offset = 14 + len(header) + len(masks) + len(palette)
    return struct.pack("<2sIHHI", b"BM", offset + len(pixels), 0, 0, offset) + header + \
        masks + palette + pixels


def test_rle8_and_rle4():
    pal = bytes([0, 0, 0, 0, 255, 0, 0, 0, 0, 255, 0, 0, 0, 0, 255, 0])  # BGR0: black blue green red
    # 6x3, bottom row first: a run, an absolute run of 3 (padded to 16 bits), end of line;
    # a delta (skipped pixels are black), a run, end of line; a run, end of bitmap.
    rle8 = bytes([3, 1, 0, 3, 2, 3, 0, 0, 0, 0,
                  0, 2, 1, 0, 2, 3, 0, 0,
                  6, 2, 0, 1])
    blob = _bmp(6, 3, 8, rle8, pal, compression=1)
    got = decode([blob], "RGB")[0]
    rgb = {0: [0, 0, 0], 1: [0, 0, 255], 2: [0, 255, 0], 3: [255, 0, 0]}
    expect = np.array([[rgb[2]] * 6,
                       [rgb[0], rgb[3], rgb[3], rgb[0], rgb[0], rgb[0]],
                       [rgb[1], rgb[1], rgb[1], rgb[2], rgb[3], rgb[0]]], np.uint8)
    np.testing.assert_array_equal(got, expect)
    np.testing.assert_array_equal(got, _pil(blob))
    rle4 = bytes([4, 0x12, 0, 3, 0x30, 0x00, 0, 0,   # row 0: 1 2 1 2, then absolute 3 0 0
                  0, 1])                           # row 1: nothing (black)
    blob = _bmp(7, 2, 4, rle4, pal, compression=2)
    got = decode([blob], "RGB")[0]
    expect = np.array([[rgb[0]] * 7,
                       [rgb[1], rgb[2], rgb[1], rgb[2], rgb[3], rgb[0], rgb[0]]], np.uint8)
    np.testing.assert_array_equal(got, expect)  # (PIL refuses this RLE4 file)


def test_bitfields_top_down_and_os2_headers():
    rng = np.random.default_rng(4)
    w, h = 5, 4
    v = rng.integers(0, 1 << 16, (h, w), dtype=np.uint16)
    rows = b"".join(v[y].astype("<u2").tobytes() + b"\0\0" for y in range(h))  # pad to 4
    masks = struct.pack("<III", 0xF800, 0x07E0, 0x001F)  # 5-6-5
    blob = _bmp(w, h, 16, rows, compression=3, masks=masks)
    r = (v >> 11) & 31
    g = (v >> 5) & 63
    b = v & 31
    expect = np.stack([(r * 255 + 15) // 31, (g * 255 + 31) // 63, (b * 255 + 15) // 31], 2)
    np.testing.assert_array_equal(decode([blob], "RGB")[0], expect[::-1].astype(np.uint8))
    # 24-bit top-down (negative height), rows padded to 4 bytes.
    a = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    rows = b"".join(a[y, :, ::-1].tobytes() + b"\0" for y in range(h))
    np.testing.assert_array_equal(decode([_bmp(w, -h, 24, rows)], "RGB")[0], a)
    # OS/2 core header with a 3-byte palette, 4-bit.
    pal = bytes([0, 0, 0, 255, 255, 255])  # BGR black, white
    rows = b"".join(bytes([0x10, 0x10, 0x00, 0x00]) for _ in range(2))
    got = decode([_bmp(3, 2, 4, rows, pal, dib=12)], "GRAY")[0][..., 0]
    np.testing.assert_array_equal(got, [[255, 0, 255], [255, 0, 255]])


def test_ascii_and_wide_netpbm():
    p1 = b"P1\n# a comment\n4 2\n1 0 1 1\n0001\n"
    np.testing.assert_array_equal(decode([p1])[0][..., 0], [[0, 255, 0, 0], [255, 255, 255, 0]])
    p2 = b"P2 3 1 15\n0 7 15\n"
    np.testing.assert_array_equal(decode([p2])[0][..., 0], [[0, 119, 255]])  # round(v*255/15)
    p3 = b"P3\n2 1\n255\n1 2 3  250 251 252\n"
    np.testing.assert_array_equal(decode([p3])[0], [[[1, 2, 3], [250, 251, 252]]])
    for blob in (p1, p2, p3):
        np.testing.assert_array_equal(decode([blob], "RGB")[0], _pil(blob))
    wide = b"P5 2 1 65535\n" + struct.pack(">HH", 0x1234, 0xFFFF)
    np.testing.assert_array_equal(decode([wide])[0][..., 0], [[(0x1234 * 255 + 32767) // 65535,
                                                               255]])


def test_shared_bmp_and_pnm_files(shared_data):
    d = os.path.join(shared_data, "jpeg", "libjpeg-turbo")
    for name in ("vgl_6434_0018a.bmp", "vgl_6548_0026a.bmp", "shira_bird8.bmp", "testorig.ppm"):
        blob = open(os.path.join(d, name), "rb").read()
        np.testing.assert_array_equal(decode([blob], "RGB")[0], _pil(blob), err_msg=name)
    blob = open(os.path.join(d, "monkey16.pgm"), "rb").read()
    ref = np.asarray(PIL.open(io.BytesIO(blob))).astype(np.uint32)  # 16-bit gray
    maxval = int(blob.split()[3])
    np.testing.assert_array_equal(decode([blob])[0][..., 0],
                                  (ref * 255 + maxval // 2) // maxval)


def test_errors_name_the_problem():
    cases = [
        (b"BM" + b"\0" * 10, "BMP: truncated header"),
        (_bmp(4, 4, 24, b"\0" * 10), "BMP: truncated pixel data"),
        (_bmp(4, 4, 24, b"", compression=4), "BMP compression 4 \\(embedded JPEG\\) is not "
                                             "supported"),
        (_bmp(4, 4, 7, b""), "BMP: unsupported bit depth 7"),
        (_bmp(3, 2, 8, bytes([5, 1, 0, 3, 1]), bytes(8), compression=1),
         "BMP: truncated RLE data"),
        (_bmp(64250, 64250, 24, b""), "BMP of 64250x64250 pixels exceeds max_pixels"),
        (b"P5 4 4 255\n" + b"\0" * 5, "PNM: truncated data \\(row 1 of 4\\)"),
        (b"P2 2 1 10\n3 11\n", "PNM: sample 11 exceeds maxval 10"),
        (b"P6 2\n", "PNM: expected the height"),
        (b"P3 1 1 70000\n", "PNM: maxval 70000 is outside 1..65535"),
        (b"P5 64250 64250 255\n", "PNM of 64250x64250 pixels exceeds max_pixels"),
    ]
    for blob, message in cases:
        (r,) = decode([blob])
        assert isinstance(r, ValueError), message
        assert __import__("re").search(message, str(r)), (message, str(r))
