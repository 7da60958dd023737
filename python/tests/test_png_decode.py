"""decoders.image on PNG: the PngSuite against stb_image's RGBA references, 16-bit files,
interlaced/plain pairs, corrupt and hostile files (libpng's crashers, Go's invalid files), and
PNGs written by PIL in every mode."""

import glob
import io
import os

import numpy as np
import pytest

from decode_util import decode, luma

PIL = pytest.importorskip("PIL.Image")


def _rgba(a):
    """An ANY_DATA decode widened to RGBA as stb_image's references are."""
    h, w, c = a.shape
    if c == 1:
        return np.concatenate([a, a, a, np.full((h, w, 1), 255, np.uint8)], 2)
    if c == 2:
        return np.concatenate([a[..., :1]] * 3 + [a[..., 1:]], 2)
    if c == 3:
        return np.concatenate([a, np.full((h, w, 1), 255, np.uint8)], 2)
    return a


def test_pngsuite_matches_stb_references(shared_data):
    d = os.path.join(shared_data, "png", "pngsuite-stb")
    files = sorted(glob.glob(os.path.join(d, "primary", "*.png")))
    assert len(files) == 77
    blobs = [open(f, "rb").read() for f in files]
    anys, rgbs, grays = (decode(blobs, t) for t in ("ANY_DATA", "RGB", "GRAY"))
    for f, a, rgb, gray in zip(files, anys, rgbs, grays):
        ref = np.asarray(PIL.open(os.path.join(d, "primary_check", os.path.basename(f))))
        assert ref.shape[2] == 4
        name = os.path.basename(f)
        np.testing.assert_array_equal(_rgba(a), ref, err_msg=name)
        np.testing.assert_array_equal(rgb, ref[..., :3], err_msg=name)
        if a.shape[2] <= 2:  # gray files: GRAY is the gray channel itself
            np.testing.assert_array_equal(gray, a[..., :1], err_msg=name)
        else:
            np.testing.assert_array_equal(gray, luma(ref[..., :3]), err_msg=name)


def test_16_bit_files_take_the_high_byte(shared_data):
    files = sorted(glob.glob(os.path.join(shared_data, "png", "pngsuite-stb", "16bit", "*.png")))
    assert len(files) == 23
    for f, a in zip(files, decode([open(f, "rb").read() for f in files])):
        im = PIL.open(f)
        if im.mode in ("I;16", "I;16B", "I"):  # 16-bit gray: PIL keeps 16 bits
            expect = (np.asarray(im).astype(np.uint32) >> 8).astype(np.uint8)[..., None]
            np.testing.assert_array_equal(a[..., :1], expect, err_msg=f)  # (+ tRNS alpha)
        else:  # PIL reduces 16-bit colour (and gray+alpha) to the high byte, as RGB(A)
            np.testing.assert_array_equal(_rgba(a), np.asarray(im.convert("RGBA")), err_msg=f)


def test_interlaced_and_plain_twins_decode_alike(shared_data):
    d = os.path.join(shared_data, "png")
    pairs = [("torchvision/interlaced_png/wizard_low-interlaced.png",
              "torchvision/interlaced_png/wizard_low.png"),
             ("wuffs/hippopotamus.interlaced.png", "wuffs/hippopotamus.regular.png"),
             ("go-png/gray-gradient.interlaced.png", "go-png/gray-gradient.png")]
    for f in glob.glob(os.path.join(d, "pngsuite-stb", "16bit", "basi*.png")):
        pairs.append((os.path.relpath(f, d), os.path.relpath(f.replace("basi", "basn"), d)))
    for a, b in pairs:
        x, y = decode([open(os.path.join(d, p), "rb").read() for p in (a, b)])
        np.testing.assert_array_equal(x, y, err_msg=a)


def test_corrupt_and_hostile_files_give_clear_errors(shared_data):
    d = os.path.join(shared_data, "png")
    must_fail = (glob.glob(os.path.join(d, "pngsuite-stb", "corrupt", "*.png")) +
                 [os.path.join(d, "go-png", f"invalid-{k}.png")
                  for k in ("crc32", "noend", "trunc", "zlib")] +
                 glob.glob(os.path.join(d, "wuffs", "*.truncated.png")))
    for f, r in zip(must_fail, decode([open(f, "rb").read() for f in must_fail])):
        assert isinstance(r, ValueError), f
        assert "PNG" in str(r) or "image format" in str(r), (f, str(r))
    for f, r in zip(sorted(glob.glob(os.path.join(d, "pngsuite-stb", "iphone", "*.png"))),
                    decode([open(f, "rb").read() for f in
                             sorted(glob.glob(os.path.join(d, "pngsuite-stb", "iphone",
                                                           "*.png")))])):
        assert isinstance(r, ValueError) and "CgBI" in str(r), f
    # libpng's crashers, torchvision's segfaulter, Go's out-of-range palette: an image or a
    # clear error, never a crash.
    maybe = (glob.glob(os.path.join(d, "libpng", "testpngs", "crashers", "*.png")) +
             [os.path.join(d, "torchvision", "damaged_png", "sigsegv.png"),
              os.path.join(d, "go-png", "invalid-palette.png")])
    for f, r in zip(maybe, decode([open(f, "rb").read() for f in maybe])):
        assert isinstance(r, (np.ndarray, ValueError)), f


@pytest.mark.parametrize("mode", ["1", "L", "LA", "P", "PA", "RGB", "RGBA", "I;16"])
def test_pngs_written_by_pil(mode):
    rng = np.random.default_rng(len(mode))
    h, w = 13, 29  # odd sizes: sub-byte rows end mid-byte
    if mode == "1":
        im = PIL.fromarray(rng.integers(0, 2, (h, w), dtype=np.uint8).astype(bool))
    elif mode == "I;16":
        im = PIL.fromarray(rng.integers(0, 65536, (h, w), dtype=np.uint16))
    elif mode in ("P", "PA"):
        im = PIL.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).quantize(37)
        if mode == "PA":
            im.info["transparency"] = bytes(rng.integers(0, 256, 37, dtype=np.uint8))
    else:
        c = {"L": 1, "LA": 2, "RGB": 3, "RGBA": 4}[mode]
        a = rng.integers(0, 256, (h, w, c), dtype=np.uint8)
        im = PIL.fromarray(a[..., 0] if c == 1 else a, mode)
    # (PIL writes no interlaced PNGs; the suites above cover Adam7.)
    buf = io.BytesIO()
    im.save(buf, "PNG", **({"transparency": im.info["transparency"]} if mode == "PA" else {}))
    blob = buf.getvalue()
    (rgb,) = decode([blob], "RGB")
    ref = PIL.open(io.BytesIO(blob))
    if mode == "I;16":
        expect = (np.asarray(ref).astype(np.uint32) >> 8).astype(np.uint8)
        np.testing.assert_array_equal(rgb, np.stack([expect] * 3, 2))
    else:
        np.testing.assert_array_equal(rgb, np.asarray(ref.convert("RGB")))
    (any_data,) = decode([blob], "ANY_DATA")
    expect_c = {"1": 1, "L": 1, "LA": 2, "P": 3, "PA": 4, "RGB": 3, "RGBA": 4, "I;16": 1}
    assert any_data.shape == (h, w, expect_c[mode])
    if mode in ("LA", "RGBA", "PA"):
        np.testing.assert_array_equal(any_data[..., -1], np.asarray(ref.convert("RGBA"))[..., 3])


def test_max_pixels_refuses_a_huge_header():
    import struct
    import zlib

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    ihdr = struct.pack(">IIBBBBB", 64250, 64250, 8, 2, 0, 0, 0)
    blob = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"")) + \
        chunk(b"IEND", b"")
    (r,) = decode([blob])
    assert isinstance(r, ValueError)
    assert "PNG of 64250x64250 pixels exceeds max_pixels (134217728)" in str(r)
