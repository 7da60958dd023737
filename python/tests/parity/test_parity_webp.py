"""WebP decoding against DALI 2.4 (both decode with libwebp on the CPU): lossy and lossless, with
and without alpha, odd sizes and real photos; every output type, windows (image_crop,
image_slice) and peek_image_shape; an animation's first frame; corrupt data refused naming the
file."""

import glob
import io
import os
import tempfile

import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, run_both

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PIL = pytest.importorskip("PIL.Image")
import stoker  # noqa: E402

if not stoker._stoker.build_info()["libwebp"]:
    pytest.skip("stoker was built without libwebp", allow_module_level=True)

PARITY = {"decoders.image": "exact"}

SHARED = os.environ.get("STOKER_SHARED_DATA") or os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "..", "shared", "data")


def _webp(img, **kw):
    buf = io.BytesIO()
    img.save(buf, "WEBP", **kw)
    return buf.getvalue()


@pytest.fixture(scope="module")
def blobs():
    rng = np.random.default_rng(5)
    h, w = 61, 83
    smooth = np.clip(rng.integers(0, 256, (h, w, 3)) // 2 + np.linspace(0, 120, w)[None, :, None],
                     0, 255).astype(np.uint8)
    alpha = np.tile(np.linspace(0, 255, w).astype(np.uint8), (h, 1))
    rgb, rgba = PIL.fromarray(smooth), PIL.fromarray(np.dstack([smooth, alpha]))
    out = [_webp(rgb, quality=90), _webp(rgb, quality=30), _webp(rgb, lossless=True),
           _webp(rgba, quality=85), _webp(rgba, lossless=True, exact=True),
           _webp(rgb.convert("L"), lossless=True),
           _webp(PIL.fromarray(smooth[:1, :1]), lossless=True),
           _webp(PIL.fromarray(smooth[:17, :3]), quality=70)]
    photos = sorted(glob.glob(os.path.join(SHARED, "photos", "dali-imagenet-classes", "*",
                                           "*.jpg")))[:3]
    for f in photos:
        with PIL.open(f) as im:
            out.append(_webp(im.convert("RGB"), quality=80))
    return out


def _feed(blobs):
    return lambda fn, types: fn.external_source(
        source=lambda: [np.frombuffer(b, np.uint8) for b in blobs], batch=True)


@pytest.mark.parametrize("output_type", ["RGB", "BGR", "ANY_DATA", "GRAY"])
def test_whole_images_are_the_same(blobs, output_type):
    feed = _feed(blobs)
    out = run_both(lambda fn, types: fn.decoders.image(
        feed(fn, types), output_type=getattr(types, output_type)), len(blobs))
    ours, theirs = out["stoker"][0][0], out["dali"][0][0]
    if output_type == "GRAY":
        # Gray from colour: stoker weighs as PIL does, DALI rounds differently (within one
        # level; docs/dali_differences.md).
        assert_same(ours, theirs, atol=1, what=output_type, max_mismatch=0.0)
    else:
        assert_same(ours, theirs, what=output_type)
    if output_type == "ANY_DATA":  # alpha kept where the file has it
        assert [x.shape[-1] for x in ours] == [3, 3, 3, 4, 4, 3, 3, 3] + [3] * (len(blobs) - 8)


def test_windows_and_shapes_are_the_same(blobs):
    feed = _feed(blobs)

    def define(fn, types):
        data = feed(fn, types)
        anchor = fn.constant(fdata=[0.25, 0.1])
        shape = fn.constant(fdata=[0.5, 0.7])
        return (fn.decoders.image_crop(data, crop=(1, 1), crop_pos_x=0.3, crop_pos_y=0.8),
                fn.decoders.image_slice(data, anchor, shape),
                fn.peek_image_shape(data))

    out = run_both(define, len(blobs))
    for k, what in enumerate(("image_crop", "image_slice", "peek_image_shape")):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=what)


def test_an_animation_decodes_to_its_first_frame_as_dalis():
    rng = np.random.default_rng(2)
    frames = [PIL.fromarray(rng.integers(0, 256, (19, 23, 3), dtype=np.uint8)) for _ in range(3)]
    blobs = []
    for kw in (dict(lossless=True), dict(quality=80)):
        buf = io.BytesIO()
        frames[0].save(buf, "WEBP", save_all=True, append_images=frames[1:], duration=40, **kw)
        blobs.append(buf.getvalue())
    rgba = [PIL.fromarray(np.dstack([np.asarray(f), np.full((19, 23), 99, np.uint8)]))
            for f in frames]
    buf = io.BytesIO()
    rgba[0].save(buf, "WEBP", save_all=True, append_images=rgba[1:], duration=40, lossless=True)
    blobs.append(buf.getvalue())
    feed = _feed(blobs)
    for output_type in ("RGB", "ANY_DATA"):
        out = run_both(lambda fn, types: fn.decoders.image(
            feed(fn, types), output_type=getattr(types, output_type)), len(blobs))
        assert_same(out["stoker"][0][0], out["dali"][0][0], what=output_type)
    np.testing.assert_array_equal(out["stoker"][0][0][0][..., :3], np.asarray(frames[0]))


def _error(blob, name):
    """What stoker raises decoding `blob` read as file `name`."""
    root = tempfile.mkdtemp()
    os.makedirs(os.path.join(root, "c"))
    with open(os.path.join(root, "c", name), "wb") as f:
        f.write(blob)

    @stoker.pipeline_def(batch_size=1, num_threads=1)
    def pipe():
        jpegs, _ = stoker.fn.readers.file(file_root=root)
        return stoker.fn.decoders.image(jpegs)

    p = pipe()
    p.build()
    with pytest.raises(ValueError) as e:
        p.run()
    return str(e.value)


def test_corrupt_webp_is_refused_naming_the_file(blobs):
    msg = _error(blobs[0][:len(blobs[0]) // 2], "cut.webp")
    assert "cut.webp" in msg and "invalid WebP data: truncated data" in msg, msg
    msg = _error(blobs[0][:20], "head.webp")
    assert "head.webp" in msg and "invalid WebP header" in msg, msg
