"""JPEGs decode as DALI, PIL, torchvision and libjpeg-turbo's djpeg decode them: the EXIF
orientation is found wherever the file puts its APP1/Exif segment; streams libjpeg-turbo decodes
with a warning (junk bytes before a marker, a scan cut short before the EOI marker) give the
image it outputs, as PIL and torchvision return it, counted as warnings (strict=True raises for
them instead); a file cut short (no EOI) raises, as in all three."""

import io
import subprocess

import numpy as np
import pytest

import stoker
from stoker import fn

PIL = pytest.importorskip("PIL.Image")
from PIL import ImageOps  # noqa: E402


def _segment(marker, payload):
    return bytes([0xFF, marker]) + (len(payload) + 2).to_bytes(2, "big") + payload


def _split(jpeg):
    """(segments between SOI and SOS, the rest from SOS on)."""
    pos, segments = 2, []
    while jpeg[pos + 1] != 0xDA:
        length = jpeg[pos + 2] << 8 | jpeg[pos + 3]
        segments.append(jpeg[pos:pos + 2 + length])
        pos += 2 + length
    return segments, jpeg[pos:]


def _plain_jpeg(seed=3, shape=(24, 40, 3)):
    pixels = np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)
    buf = io.BytesIO()
    PIL.fromarray(pixels).save(buf, "JPEG", quality=92)
    return buf.getvalue()


def _exif(orientation, big_endian=False):
    exif = PIL.Exif()
    exif[0x0112] = orientation
    tiff = exif.tobytes()
    tiff = tiff[6:] if tiff.startswith(b"Exif\0\0") else tiff
    if big_endian:  # the same IFD written big-endian (Motorola order)
        tiff = (b"MM\0\x2a\0\0\0\x08\0\x01" + b"\x01\x12\0\x03\0\0\0\x01" +
                orientation.to_bytes(2, "big") + b"\0\0" + b"\0\0\0\0")
    return _segment(0xE1, b"Exif\0\0" + tiff)


# Where the APP1/Exif segment goes, relative to the file's own segments (APP0 JFIF, DQT, SOF,
# DHT...): the first segment, after a comment, after other APPn segments (XMP in APP1 too,
# ICC in APP2), after the tables, and with fill bytes before it.
_PLACES = {
    "first": lambda segs, ex: [ex] + segs,
    "after_comment": lambda segs, ex: [_segment(0xFE, b"a comment")] + [ex] + segs,
    "after_app0_and_comment": lambda segs, ex: segs[:1] + [_segment(0xFE, b"c"), ex] + segs[1:],
    "after_xmp": lambda segs, ex: segs[:1] + [_segment(0xE1, b"http://ns.adobe.com/xap/1.0/\0<x/>"),
                                              ex] + segs[1:],
    "after_icc": lambda segs, ex: segs[:1] + [_segment(0xE2, b"ICC_PROFILE\0" + bytes(200)),
                                              ex] + segs[1:],
    "after_tables": lambda segs, ex: segs + [ex],
    "after_fill_bytes": lambda segs, ex: segs[:1] + [b"\xff\xff", ex] + segs[1:],
}


def _with_exif(place, orientation, big_endian=False):
    segments, rest = _split(_plain_jpeg())
    return b"\xff\xd8" + b"".join(_PLACES[place](segments, _exif(orientation, big_endian))) + rest


def _run(blobs, make, batch=None):
    pipe = stoker.Pipeline(batch_size=batch or len(blobs), num_threads=2, seed=0)
    with pipe:
        data = fn.external_source(lambda: [np.frombuffer(b, np.uint8) for b in blobs])
        pipe.set_outputs(*make(data))
    return pipe, pipe.run()


@pytest.mark.parametrize("place", sorted(_PLACES))
def test_exif_orientation_is_found_wherever_the_segment_is(place):
    blobs = [_with_exif(place, o, big_endian=o % 2 == 0) for o in range(1, 9)]
    _, (images, crops, shapes) = _run(blobs, lambda d: (
        fn.decoders.image(d), fn.decoders.image_crop(d, crop=(8, 8), crop_pos_x=0.0,
                                                     crop_pos_y=0.0),
        fn.peek_image_shape(d)))
    for k, blob in enumerate(blobs):
        expected = np.asarray(ImageOps.exif_transpose(PIL.open(io.BytesIO(blob))).convert("RGB"))
        assert expected.shape[:2] == ((40, 24) if k + 1 >= 5 else (24, 40))  # PIL saw it too
        np.testing.assert_array_equal(images[k].numpy(), expected, err_msg=f"{place} o={k + 1}")
        np.testing.assert_array_equal(crops[k].numpy(), expected[:8, :8], err_msg=place)
        assert list(shapes[k].numpy()) == list(expected.shape), place


def _junk_before_marker():
    """Three bytes of junk between the APP0 segment and the next marker."""
    jpeg = _plain_jpeg(seed=4)
    at = 4 + (jpeg[4] << 8 | jpeg[5])
    return jpeg[:at] + b"\x12\x34\x56" + jpeg[at:]


def _cut_in_scan(eoi=True):
    """The stream cut two thirds of the way into its entropy-coded data; with `eoi` the EOI
    marker follows the cut ("premature end of data segment", as in some camera and ImageNet
    files), else the file just ends."""
    jpeg = _plain_jpeg(seed=5, shape=(64, 48, 3))
    sos = jpeg.index(b"\xff\xda")
    return jpeg[:sos + (len(jpeg) - sos) * 2 // 3] + (b"\xff\xd9" if eoi else b"")


def _djpeg(djpeg, blob, tmp_path):
    path = tmp_path / "in.jpg"
    path.write_bytes(blob)
    done = subprocess.run([djpeg, "-ppm", str(path)], capture_output=True)
    assert done.returncode == 2, done.stderr  # it warned
    ppm = done.stdout  # djpeg writes the image and exits with 2 (EXIT_WARNING)
    header, pixels = ppm.split(b"\n", 3)[:3], ppm.split(b"\n", 3)[3]
    w, h = (int(v) for v in header[1].split())
    return np.frombuffer(pixels, np.uint8).reshape(h, w, 3)


@pytest.mark.parametrize("make", [_junk_before_marker, _cut_in_scan])
def test_warned_streams_decode_as_libjpeg_turbo_outputs_them(make, djpeg, tmp_path):
    blob, clean = make(), _plain_jpeg()
    pipe, (images,) = _run([clean, blob], lambda d: (fn.decoders.image(d, name="Decoder"),))
    np.testing.assert_array_equal(images[1].numpy(), _djpeg(djpeg, blob, tmp_path))
    stats = pipe.error_stats()  # (the pipeline may have run a batch ahead: the same blobs)
    assert stats["warnings"] >= 1 and stats["skipped"] == 0
    assert stats["recent"][-1].startswith("warning: decoders.image")
    assert "sample 1" in stats["recent"][-1] and "corrupt JPEG data: " in stats["recent"][-1]
    assert pipe.operator_stats("Decoder")["decoded_with_warnings"] == stats["warnings"]
    if make is _cut_in_scan:  # the rows before the cut are the clean image's
        whole = np.asarray(PIL.open(io.BytesIO(_plain_jpeg(seed=5, shape=(64, 48, 3)))))
        np.testing.assert_array_equal(images[1].numpy()[:8], whole[:8])
        assert (images[1].numpy()[-1] == 128).all()  # libjpeg-turbo's fill below the data


@pytest.mark.parametrize("make", [_junk_before_marker, _cut_in_scan])
def test_strict_raises_naming_sample_and_source(make, tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "good.jpg").write_bytes(_plain_jpeg())
    (tmp_path / "c" / "warned.jpg").write_bytes(make())
    pipe = stoker.Pipeline(batch_size=2, num_threads=1, seed=0)
    with pipe:
        jpegs, _ = fn.readers.file(file_root=str(tmp_path))
        pipe.set_outputs(fn.decoders.image(jpegs, strict=True))
    with pytest.raises(ValueError, match=r"decoders\.image.*sample 1 \(source '.*warned\.jpg'\): "
                                         r".*\(strict=True; without it the image decodes"):
        pipe.run()


def test_strict_with_on_error_skip_replaces_the_sample(tmp_path):
    (tmp_path / "c").mkdir()
    for i in range(3):
        (tmp_path / "c" / f"good{i}.jpg").write_bytes(_plain_jpeg(seed=i))
    (tmp_path / "c" / "a_warned.jpg").write_bytes(_cut_in_scan())  # in the first batch
    pipe = stoker.Pipeline(batch_size=3, num_threads=1, seed=0, on_error="skip")
    with pipe:
        jpegs, _ = fn.readers.file(file_root=str(tmp_path))
        pipe.set_outputs(fn.decoders.image(jpegs, strict=True))
    with pytest.warns(RuntimeWarning, match="warned.jpg"):
        (images,) = pipe.run()
    assert all("warned" not in images.source_info(i) for i in range(3))
    assert pipe.error_stats()["skipped"] >= 1  # (a batch made ahead may hold it again)


@pytest.mark.parametrize("strict", [False, True])
def test_a_file_cut_short_raises(strict):
    with pytest.raises(ValueError, match="corrupt JPEG data: Premature end of JPEG file"):
        _run([_cut_in_scan(eoi=False)], lambda d: (fn.decoders.image(d, strict=strict),))


def test_streams_nothing_decodes_still_raise():
    headless = _plain_jpeg()[:120]  # cut before the frame header
    with pytest.raises(ValueError, match="invalid JPEG: Premature end of JPEG file"):
        _run([headless], lambda d: (fn.decoders.image(d),))
