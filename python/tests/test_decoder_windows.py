"""decoders.image_crop / image_random_crop / image_slice and peek_image_shape: every window
equals the same window of a full decode (JPEG region decoding skips rows and iMCU columns, so
this is checked across subsamplings, progressive, arithmetic, gray and CMYK files), random
windows replay torchvision's algorithm, and EXIF orientation applies before the window."""

import glob
import os

import numpy as np
import pytest

import stoker
from stoker import fn
from reference import RandomStream, rrc_window


def _files(shared_data):
    d = os.path.join(shared_data, "jpeg")
    files = sorted(glob.glob(os.path.join(d, "dali", "mixed", "*", "*.jpg")))[:12]
    files += [os.path.join(d, "libjpeg-turbo", f) for f in
              ("testorig.jpg", "testimgint.jpg", "testimgari.jpg")]
    files += [f for f in sorted(glob.glob(os.path.join(d, "jpeg-decoder", "reftest", "*.jpg")))
              if "mjpeg" not in f and "partial" not in f][:10]  # (both refused by design)
    files += [os.path.join(shared_data, "png", "torchvision", "interlaced_png", "wizard_low.png")]
    return [f for f in files if os.path.getsize(f) > 0]


def _decode_all(files, op="image", inputs=(), **kwargs):
    pipe = stoker.Pipeline(batch_size=len(files), num_threads=2, seed=5)
    with pipe:
        jpegs, _ = fn.readers.file(files=files)
        extra = [fn.external_source((lambda v: lambda: v)(v)) for v in inputs]
        pipe.set_outputs(getattr(fn.decoders, op)(jpegs, *extra, **kwargs))
    (out,) = pipe.run()
    return [out[i].numpy() for i in range(len(files))]


def test_crop_windows_equal_the_full_decode(shared_data):
    files = _files(shared_data)
    full = _decode_all(files)
    keep = [k for k, r in enumerate(full) if min(r.shape[:2]) >= 32]  # windows fit
    files, full = [files[k] for k in keep], [full[k] for k in keep]
    assert len(files) >= 15
    for crop, px, py in [((17, 23), 0.3, 0.7), ((1, 1), 1.0, 0.0), ((31, 8), 0.0, 1.0),
                         ((9, 16), 0.5, 0.5)]:
        for output_type in ("RGB", "GRAY"):
            ref = full if output_type == "RGB" else _decode_all(files, output_type="GRAY")
            got = _decode_all(files, "image_crop", crop=crop, crop_pos_x=px, crop_pos_y=py,
                              output_type=output_type)
            for f, r, g in zip(files, ref, got):
                H, W = r.shape[:2]
                y = int(np.floor(py * (H - crop[0]) + 0.5))
                x = int(np.floor(px * (W - crop[1]) + 0.5))
                np.testing.assert_array_equal(g, r[y:y + crop[0], x:x + crop[1]], err_msg=f)


def test_random_crop_replays_torchvision_windows(shared_data):
    files = _files(shared_data)
    full = _decode_all(files)
    got = _decode_all(files, "image_random_crop", random_area=[0.1, 0.6])
    for i, (r, g) in enumerate(zip(full, got)):
        # Instance 1: the reader is operator 0.
        y, x, h, w = rrc_window(r.shape[0], r.shape[1], RandomStream(5, 1, i), area=(0.1, 0.6))
        np.testing.assert_array_equal(g, r[y:y + h, x:x + w], err_msg=files[i])


def test_slice_with_normalized_and_pixel_anchors(shared_data):
    files = _files(shared_data)[:5]
    full = _decode_all(files)
    anchors = [np.array([0.25, 0.1], np.float32)] * len(files)  # x, y (axes [1, 0])
    shapes = [np.array([0.5, 0.3], np.float32)] * len(files)
    got = _decode_all(files, "image_slice", (anchors, shapes))
    for r, g in zip(full, got):
        H, W = r.shape[:2]
        x0, x1 = round(0.25 * W), round(0.75 * W)
        y0, y1 = round(0.1 * H), round(0.4 * H)
        np.testing.assert_array_equal(g, r[y0:y1, x0:x1])
    anchors = [np.array([5, 3], np.int32)] * len(files)
    shapes = [np.array([10000, 7], np.int32)] * len(files)  # wider than the image: trimmed
    got = _decode_all(files, "image_slice", (anchors, shapes), normalized_anchor=False,
                      normalized_shape=False, out_of_bounds_policy="trim_to_shape")
    for r, g in zip(full, got):
        np.testing.assert_array_equal(g, r[3:10, 5:])
    with pytest.raises(ValueError, match="the slice \\[5, 10005\\) of axis 1 does not fit"):
        _decode_all(files, "image_slice", (anchors, shapes), normalized_anchor=False,
                    normalized_shape=False)


def test_orientation_applies_before_the_window_and_peek(shared_data):
    files = sorted(glob.glob(os.path.join(shared_data, "jpeg", "dali", "orientation", "*.jpg")))
    full = _decode_all(files)
    got = _decode_all(files, "image_crop", crop=(50, 40), crop_pos_x=0.2, crop_pos_y=0.9)
    for r, g in zip(full, got):
        H, W = r.shape[:2]
        y, x = int(np.floor(0.9 * (H - 50) + 0.5)), int(np.floor(0.2 * (W - 40) + 0.5))
        np.testing.assert_array_equal(g, r[y:y + 50, x:x + 40])
    pipe = stoker.Pipeline(batch_size=len(files), num_threads=2, seed=0)
    with pipe:
        jpegs, _ = fn.readers.file(files=files)
        pipe.set_outputs(fn.peek_image_shape(jpegs),
                         fn.peek_image_shape(jpegs, adjust_orientation=False,
                                             dtype=stoker.types.INT32))
    oriented, stored = pipe.run()
    for i, r in enumerate(full):
        assert oriented.at(i).tolist() == list(r.shape)
        assert stored.at(i).dtype == np.int32
        assert sorted(stored.at(i).tolist()[:2]) == sorted(r.shape[:2])


def test_crop_outside_the_image_is_an_error(shared_data):
    files = _files(shared_data)[:1]
    with pytest.raises(ValueError, match="decoders.image_crop"):
        _decode_all(files, "image_crop", crop=(100000, 10))


def test_dct_downscaling_hint(shared_data):
    """downscale_hint decodes large windows at 1/2, 1/4 or 1/8 in the DCT domain: the result is
    libjpeg's scaled decode (PIL's draft mode) of the window in scaled coordinates."""
    PIL = pytest.importorskip("PIL.Image")
    files = sorted(glob.glob(os.path.join(shared_data, "photos", "dali-imagenet-classes", "*",
                                          "*.jpg")))[:12]
    got = _decode_all(files, "image_random_crop", downscale_hint=[64, 64])
    plain = _decode_all(files, "image_random_crop")
    scaled = 0
    for i, f in enumerate(files):
        im = PIL.open(f)
        W, H = im.size
        y, x, h, w = rrc_window(H, W, RandomStream(5, 1, i))
        d = next((d for d in (8, 4, 2) if h // d >= 64 and w // d >= 64), 1)
        assert plain[i].shape[:2] == (h, w)
        if d == 1:
            np.testing.assert_array_equal(got[i], plain[i])
            continue
        scaled += 1
        # (PIL's draft picks a scale whose result exceeds the request: ask one pixel less.)
        im.draft("RGB", ((W + d - 1) // d - 1, (H + d - 1) // d - 1))
        assert im.size == ((W + d - 1) // d, (H + d - 1) // d)
        ref = np.asarray(im.convert("RGB"))
        ys, xs = y // d, x // d
        np.testing.assert_array_equal(got[i], ref[ys:ys + h // d, xs:xs + w // d], err_msg=f)
    assert scaled >= 6


def test_unsupported_jpeg_variants_are_named(shared_data):
    from decode_util import decode

    d = os.path.join(shared_data, "jpeg")
    twelve = open(os.path.join(d, "libjpeg-turbo", "monkey12.jpg"), "rb").read()
    lossless = open(os.path.join(d, "dali", "jpeg_lossless",
                                 "cat-3449999_640_grayscale_8bit.jpg"), "rb").read()
    (r12,), (rl,) = decode([twelve]), decode([lossless])
    assert isinstance(r12, ValueError) and "unsupported JPEG: 12-bit samples" in str(r12)
    assert isinstance(rl, ValueError) and "unsupported JPEG: lossless (SOF3) coding" in str(rl)
