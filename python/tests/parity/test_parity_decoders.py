"""Image decoders against DALI 2.4 (both decode JPEG with libjpeg-turbo on the CPU): real photos
and generated JPEGs of every common subsampling, progressive and grayscale, PNG, BMP and PNM;
windows (image_crop, image_slice), the random-crop decoder's windows, peek_image_shape, EXIF
orientations and streams libjpeg-turbo decodes with a warning."""

import glob
import io
import os

import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, has_gpu, run, run_both

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PIL = pytest.importorskip("PIL.Image")

PARITY = {
    "decoders.image": "exact",
    "decoders.image_crop": "exact",
    "decoders.image_slice": "exact",
    "decoders.image_random_crop": "distribution",
    "peek_image_shape": "exact",
    "external_source": "exact",
}

SHARED = os.environ.get("STOKER_SHARED_DATA") or os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "..", "shared", "data")


def _generated():
    rng = np.random.default_rng(9)
    base = rng.integers(0, 256, (61, 83, 3), dtype=np.uint8)
    base = np.clip(base.astype(int) // 2 + np.linspace(0, 120, 83)[None, :, None], 0, 255)
    img = PIL.fromarray(base.astype(np.uint8))
    out = []
    for kw in (dict(subsampling=0), dict(subsampling=1), dict(subsampling=2),
               dict(progressive=True), dict(quality=40)):
        buf = io.BytesIO()
        img.save(buf, "JPEG", quality=kw.pop("quality", 90), **kw)
        out.append(buf.getvalue())
    buf = io.BytesIO()
    img.convert("L").save(buf, "JPEG")
    out.append(buf.getvalue())
    for fmt in ("PNG", "BMP", "PPM"):
        buf = io.BytesIO()
        img.save(buf, fmt)
        out.append(buf.getvalue())
    return out


def _photos():
    files = sorted(glob.glob(os.path.join(SHARED, "photos", "dali-imagenet-classes", "*",
                                          "*.jpg")))
    return [open(f, "rb").read() for f in files[:12]]


@pytest.fixture(scope="module")
def blobs():
    return _generated() + _photos()


def _feed(blobs):
    return lambda fn, types: fn.external_source(
        source=lambda: [np.frombuffer(b, np.uint8) for b in blobs], batch=True)


@pytest.mark.parametrize("output_type", ["RGB", "BGR", "GRAY"])
def test_whole_images_are_the_same(blobs, output_type):
    feed = _feed(blobs)
    out = run_both(lambda fn, types: fn.decoders.image(
        feed(fn, types), output_type=getattr(types, output_type)), len(blobs))
    jpeg = [b[:2] == b"\xff\xd8" for b in blobs]
    ours, theirs = out["stoker"][0][0], out["dali"][0][0]
    assert_same([x for x, j in zip(ours, jpeg) if j], [y for y, j in zip(theirs, jpeg) if j],
                what=output_type)
    # Gray from colour PNG/BMP/PNM: stoker weighs as PIL does, DALI rounds differently (within
    # one level; docs/dali_differences.md). RGB and BGR are exact.
    assert_same([x for x, j in zip(ours, jpeg) if not j], [y for y, j in zip(theirs, jpeg) if not j],
                atol=1 if output_type == "GRAY" else 0, what=output_type)


def test_windows_and_shapes_are_the_same(blobs):
    feed = _feed(blobs)

    def define(fn, types):
        data = feed(fn, types)
        n = len(blobs)
        anchor = fn.external_source(source=lambda: [np.array([0.1, 0.2], np.float32)] * n)
        shape = fn.external_source(source=lambda: [np.array([0.5, 0.4], np.float32)] * n)
        return (fn.decoders.image_crop(data, crop=(17, 23), crop_pos_x=0.3, crop_pos_y=0.8),
                fn.decoders.image_slice(data, anchor, shape),
                fn.peek_image_shape(data))
    out = run_both(define, len(blobs))
    for k, what in enumerate(("image_crop", "image_slice", "peek_image_shape")):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=what)


def test_random_crop_windows_follow_the_same_distribution(blobs):
    """Each output is a window of the whole decode; the windows' areas and aspect ratios
    spread over the same ranges in both libraries."""
    big = [b for b in blobs if b[:2] == b"\xff\xd8"] * 8
    feed = _feed(big)

    def define(fn, types):
        data = feed(fn, types)
        return fn.decoders.image_random_crop(data, random_area=[0.1, 1.0],
                                             random_aspect_ratio=[0.75, 1.333]), \
            fn.peek_image_shape(data)
    out = run_both(define, len(big), iterations=3)
    stats = {}
    for lib, runs in out.items():
        areas, ratios = [], []
        for crops, shapes in runs:
            for c, s in zip(crops, shapes):
                areas.append(c.shape[0] * c.shape[1] / (s[0] * s[1]))
                ratios.append(c.shape[1] / c.shape[0])
        stats[lib] = (np.mean(areas), np.mean(np.log(ratios)))
        assert min(areas) >= 0.05 and max(areas) <= 1.0
    assert abs(stats["stoker"][0] - stats["dali"][0]) < 0.08, stats
    assert abs(stats["stoker"][1] - stats["dali"][1]) < 0.08, stats


def _with_exif(orientation, after_comment):
    from PIL import Image
    buf = io.BytesIO()
    exif = Image.Exif()
    exif[0x0112] = orientation
    PIL.fromarray(np.random.default_rng(orientation).integers(0, 256, (24, 40, 3),
                                                             dtype=np.uint8)).save(
        buf, "JPEG", quality=92, exif=exif.tobytes())
    j = buf.getvalue()
    if after_comment:
        j = j[:2] + b"\xff\xfe\x00\x09comment" + j[2:]
    return j


def test_exif_orientations_are_the_same():
    blobs = [_with_exif(o, c) for o in range(1, 9) for c in (False, True)]
    feed = _feed(blobs)
    out = run_both(lambda fn, types: fn.decoders.image(feed(fn, types)), len(blobs))
    assert_same(out["stoker"][0][0], out["dali"][0][0], what="EXIF")


def test_streams_decoded_with_warnings(blobs):
    """A scan cut short before its EOI decodes the same in both. Junk bytes before a marker:
    DALI 2.4's CPU decoder refuses the stream (nvImageCodec: "Invalid marker"); stoker decodes
    it as PIL and torchvision do (docs/dali_differences.md)."""
    jpeg = blobs[0]
    sos = jpeg.index(b"\xff\xda")
    cut = jpeg[:sos + (len(jpeg) - sos) * 2 // 3] + b"\xff\xd9"
    feed = _feed([cut])
    out = run_both(lambda fn, types: fn.decoders.image(feed(fn, types)), 1)
    assert_same(out["stoker"][0][0], out["dali"][0][0], what="cut scan")
    at = 4 + (jpeg[4] << 8 | jpeg[5])
    junk = jpeg[:at] + b"\x12\x34\x56" + jpeg[at:]
    feed = _feed([junk])
    with pytest.raises(RuntimeError):
        run("dali", lambda fn, types: fn.decoders.image(feed(fn, types)), 1)
    ours = run("stoker", lambda fn, types: fn.decoders.image(feed(fn, types)), 1)[0][0][0]
    np.testing.assert_array_equal(ours, np.asarray(PIL.open(io.BytesIO(junk)).convert("RGB")))


def test_mixed_decoders_agree_with_dalis():
    """device="mixed" in both libraries (nvJPEG's hardware and CUDA decoders, split each its own
    way): the same shapes, and pixels within nvJPEG's IDCT differences of each other."""
    if not has_gpu():
        pytest.skip("no CUDA device: the mixed decoders are compared on the GPU machine")
    jpegs = [b for b in _generated() + _photos() if b[:2] == b"\xff\xd8"]
    feed = _feed(jpegs)
    out = run_both(lambda fn, types: (fn.decoders.image(feed(fn, types), device="mixed"),
                                      fn.decoders.image(feed(fn, types))), len(jpegs),
                   device_id=0)
    ours, theirs, theirs_cpu = out["stoker"][0][0], out["dali"][0][0], out["dali"][0][1]
    for i, (x, y, z) in enumerate(zip(ours, theirs, theirs_cpu)):
        assert x.shape == y.shape, (i, x.shape, y.shape)
        # Each library sends some streams to the CPU (stoker: progressive JPEGs, decoded as
        # libjpeg-turbo decodes them; DALI decodes them on the GPU): equal to either of DALI's.
        near = [float(np.abs(x.astype(np.int16) - r.astype(np.int16)).mean()) for r in (y, z)]
        assert min(near) < 1.5, (i, near)


def test_exif_long_orientation_decodes_as_dali():
    """Little-endian LONG and SLONG orientations: DALI 2.4's CPU decoder applies them (its EXIF
    reader takes the value's first two bytes whatever the type), and stoker's pixels are DALI's.
    (Big-endian ones: DALI reads 0 there and ignores the tag; stoker applies it, as PIL does.)"""
    from test_input_limits import _decode, _jpeg  # (python/tests: the EXIF written by hand)
    blobs = [_jpeg(o, t, False) for t in (4, 9) for o in range(1, 9)]

    @dali.pipeline_def(batch_size=len(blobs), num_threads=1, device_id=None)
    def dali_pipe():
        data = dali.fn.external_source(
            source=lambda: [np.frombuffer(b, np.uint8) for b in blobs], batch=True)
        return dali.fn.decoders.image(data, device="cpu")

    p = dali_pipe()
    p.build()
    (out,) = p.run()
    theirs = [np.array(out[i]) for i in range(len(blobs))]
    ours = _decode(blobs)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        np.testing.assert_array_equal(a, b, err_msg=f"blob {k}")
    assert any(a.shape == (40, 24, 3) for a in ours)
