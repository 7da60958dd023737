"""The crop window's arithmetic against DALI 2.4 (its CropAttr), exactly, for every operator that
reads `crop`, `crop_h`/`crop_w`, `crop_pos_x`/`crop_pos_y` and `rounding`: crop,
crop_mirror_normalize, decoders.image_crop and resize_crop_mirror. DALI truncates the float32
extents (10.6 -> 10; 0 or less leaves the axis whole) and multiplies the float32 position by the
spare pixels in double (0.9 of 5 is 4.4999999: 4), then rounds half away from zero or truncates.
Positions are swept over every spare count from 0 to 39 (one image per count, one batch)."""

import io

import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_like_dali, dali

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PIL = pytest.importorskip("PIL.Image")

CROP = 25
SPARE = range(40)  # in - crop, per sample


def _images():
    # One image per spare count: the height and the width leave `spare` and `spare // 2 + 3`
    # pixels around the window; pixel values name their coordinates (up to 16 bits).
    out = []
    for s in SPARE:
        h, w = CROP + s, CROP + s // 2 + 3
        y, x = np.mgrid[0:h, 0:w]
        out.append(np.stack([y, x, (y * 7 + x) % 256], -1).astype(np.uint8))
    return out


IMAGES = _images()
_ON_GPU = [False]


def _feed(fn):
    images = fn.external_source(source=lambda: [a.copy() for a in IMAGES], batch=True,
                                layout="HWC")
    return images.gpu() if _ON_GPU[0] else images


def _per_sample(fn, values):
    """A per-sample float32 argument (another operator's output), as DALI reads it."""
    return fn.external_source(source=lambda: [np.array(v, np.float32) for v in values],
                              batch=True)


def _positions(seed):
    rng = np.random.default_rng(seed)
    return [float(v) for v in rng.choice([0.1, 0.3, 0.7, 0.9, 0.15, 0.35, 0.45, 0.55, 0.65],
                                         len(IMAGES))]


_CASES = [
    *[(f"crop_pos_{pos}", lambda fn, t, pos=pos: fn.crop(
        _feed(fn), crop=(CROP, CROP), crop_pos_x=pos, crop_pos_y=pos))
      for pos in (0.9, 0.1, 0.3, 0.7, 0.15, 0.35, 0.45, 0.55, 0.65, 0.05, 0.95, 1.0, 0.0)],
    ("crop_pos_truncate", lambda fn, t: fn.crop(
        _feed(fn), crop=(CROP, CROP), crop_pos_x=0.7, crop_pos_y=0.9, rounding="truncate")),
    # Windows larger than the image: negative anchors (-11.5 rounds to -12, truncates to -11).
    *[(f"crop_pad_{r}", lambda fn, t, r=r: fn.crop(
        _feed(fn), crop=(70, 71), crop_pos_x=0.3, crop_pos_y=0.7, rounding=r,
        out_of_bounds_policy="pad", fill_values=9))
      for r in ("round", "truncate")],
    ("crop_pos_per_sample", lambda fn, t: fn.crop(
        _feed(fn), crop=(CROP, CROP), crop_pos_x=_per_sample(fn, _positions(1)),
        crop_pos_y=_per_sample(fn, _positions(2)))),
    ("crop_per_sample", lambda fn, t: fn.crop(
        _feed(fn), crop=_per_sample(fn, [(10.6 + k % 5, 12.9 - k % 3) for k in SPARE]),
        crop_pos_x=0.9, crop_pos_y=0.1)),
    # Fractional extents are truncated; 0 or less (0.5 included) keeps the axis whole.
    *[(f"crop_extent_{h}x{w}", lambda fn, t, h=h, w=w: fn.crop(
        _feed(fn), crop=(h, w), crop_pos_x=0.3, crop_pos_y=0.7))
      for h, w in ((10.6, 10.6), (10.4, 25.9), (24.99999999, 3.5), (0.5, 12), (12, 0),
                   (-3, 10))],
    ("crop_hw_fractional", lambda fn, t: fn.crop(
        _feed(fn), crop_h=_per_sample(fn, [20.7 - k / 7 for k in SPARE]), crop_w=13.9,
        crop_pos_x=0.7, crop_pos_y=0.3)),
    ("crop_no_window", lambda fn, t: fn.crop(_feed(fn))),
    ("cmn_crop_pos", lambda fn, t: fn.crop_mirror_normalize(
        _feed(fn), crop=(CROP + 0.7, CROP + 0.2), crop_pos_x=0.9, crop_pos_y=0.7,
        dtype=t.UINT8, output_layout="HWC")),
    ("cmn_per_sample_truncate", lambda fn, t: fn.crop_mirror_normalize(
        _feed(fn), crop=(CROP, CROP), crop_pos_x=_per_sample(fn, _positions(3)),
        crop_pos_y=_per_sample(fn, _positions(4)), rounding="truncate", dtype=t.UINT8,
        output_layout="HWC")),
    # Nearest neighbour: the window alone decides the pixels (24.99999999 is 25 in float32).
    ("resize_crop_mirror_extents", lambda fn, t: fn.resize_crop_mirror(
        _feed(fn), size=(64, 64), crop=(24.99999999, 17.6), crop_pos_x=0.9, crop_pos_y=0.3,
        interp_type=t.INTERP_NN)),
]


def _place(on_gpu):
    _ON_GPU[0] = on_gpu


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("case", _CASES, ids=[c[0] for c in _CASES])
def test_window_matches_dali(case, device):
    name, define = case
    assert_like_dali(define, len(IMAGES), device, 0, 0, name, _place)


def _jpegs():
    out = []
    for img in IMAGES[::3]:
        buf = io.BytesIO()
        PIL.fromarray(img).save(buf, "JPEG", quality=95)
        out.append(np.frombuffer(buf.getvalue(), np.uint8))
    return out


JPEGS = _jpegs()


@pytest.mark.parametrize("args", [dict(crop=(CROP, CROP), crop_pos_x=0.9, crop_pos_y=0.7),
                                  dict(crop=(10.6, 20.9), crop_pos_x=0.3, crop_pos_y=0.1,
                                       rounding="truncate"),
                                  dict(crop_h=0.5, crop_w=CROP, crop_pos_x=0.7)],
                         ids=["pos", "fractional_truncate", "whole_height"])
def test_decoder_window_matches_dali(args):
    def define(fn, types):
        data = fn.external_source(source=lambda: list(JPEGS), batch=True)
        return fn.decoders.image_crop(data, **args)
    assert_like_dali(define, len(JPEGS), "cpu", 0, 0, "decoders.image_crop", lambda g: None)
