"""The crop window of crop, crop_mirror_normalize and decoders.image_crop (one reading of their
arguments, src/ops/geometry/crop_args.cpp, as DALI's CropAttr): extents truncated from float32,
anchors from the float32 position rounded or truncated (`rounding`), whole axes where an extent
is 0 or less, and the errors, each naming the operator. test_parity_crop_rounding.py compares
the windows with DALI."""

import io

import numpy as np
import pytest

from op_util import run_op
from stoker import types

PIL = pytest.importorskip("PIL.Image")

# Pixel (y, x) holds (y, x, 0): a window's position and size read off its first pixel and shape.
_Y, _X = np.mgrid[0:30, 0:40]
IMAGE = np.stack([_Y, _X, np.zeros_like(_Y)], -1).astype(np.uint8)


def _window(op="crop", image=IMAGE, **kwargs):
    """(y, x, height, width) of the window `op` cuts out of `image`."""
    if op == "crop_mirror_normalize":
        kwargs = {"dtype": types.UINT8, "output_layout": "HWC", **kwargs}  # the pixels as given
    (out,) = run_op(op, [image], **kwargs)
    return int(out[0, 0, 0]), int(out[0, 0, 1]), out.shape[0], out.shape[1]


@pytest.mark.parametrize("op", ["crop", "crop_mirror_normalize"])
def test_extents_are_truncated_and_positions_are_float32(op):
    assert _window(op, crop=(10.6, 12.9)) == (10, 14, 10, 12)
    # 0.9 is 0.89999998 in float32: 0.9 of 5 spare rows is 4.4999999, which rounds to 4.
    assert _window(op, crop=(25, 20), crop_pos_y=0.9, crop_pos_x=0.9) == (4, 18, 25, 20)
    # Truncated: 0.7 (0.69999999 in float32) of 20 spare columns is 13.9999998: 13.
    assert _window(op, crop=(25, 20), crop_pos_y=0.7, crop_pos_x=0.7, rounding="truncate") == (
        3, 13, 25, 20)
    # An extent that truncates to 0 or less keeps its axis whole.
    assert _window(op, crop=(0.5, 12), crop_pos_y=0.9) == (0, 14, 30, 12)
    assert _window(op, crop_h=7, crop_w=-3) == (12, 0, 7, 40)
    assert _window(op, crop=(9,)) == (11, 16, 9, 9)  # one value: a square (10.5 rounds up)


def test_crop_without_a_window_is_the_whole_image():
    (out,) = run_op("crop", [IMAGE])
    np.testing.assert_array_equal(out, IMAGE)


def test_padded_windows_round_their_negative_anchors_away_from_zero():
    # 0.5 * (30 - 53) = -11.5: -12 rounded, -11 truncated.
    for rounding, y in (("round", -12), ("truncate", -11)):
        (out,) = run_op("crop", [IMAGE], crop=(53, 10), crop_pos_y=0.5, rounding=rounding,
                        out_of_bounds_policy="pad", fill_values=255)
        assert out.shape == (53, 10, 3)
        first = int(np.argmax(out[:, 0, 2] == 0))  # the first image row (fill is 255)
        assert first == -y and out[first, 0, 0] == 0


def _png():
    buf = io.BytesIO()
    PIL.fromarray(IMAGE).save(buf, "PNG")  # lossless: the window's pixels name its place
    return np.frombuffer(buf.getvalue(), np.uint8)


def test_decoder_window_is_the_same():
    (out,) = run_op("decoders.image_crop", [_png()], layout="", crop=(25.7, 20),
                    crop_pos_y=0.9, crop_pos_x=0.7, rounding="truncate")
    assert (int(out[0, 0, 0]), int(out[0, 0, 1])) == (4, 13) and out.shape == (25, 20, 3)


@pytest.mark.parametrize("op", ["crop", "crop_mirror_normalize", "decoders.image_crop"])
def test_errors_name_the_operator(op):
    data = [_png()] if op.startswith("decoders") else [IMAGE]
    layout = "" if op.startswith("decoders") else "HWC"

    def expect(match, **kwargs):
        with pytest.raises(Exception, match=match):
            run_op(op, data, layout=layout, **kwargs)

    expect(rf"{op}: rounding must be 'round' or 'truncate', got 'floor'", crop=(5, 5),
           rounding="floor")
    expect(rf"{op}: crop_pos_x must be in \[0, 1\], got 1.5 \(sample 0\)",
           crop=(5, 5), crop_pos_x=1.5)
    expect(rf"{op}: crop must be \[height, width\] or \[depth, height, width\] \(or one "
           rf"value for a square\), got 4 values", crop=(5, 5, 5, 5))
    expect(rf"{op}: give either `crop` or `crop_d`/`crop_h`/`crop_w`, not both", crop=(5, 5),
           crop_h=3, crop_w=3)
    expect(rf"{op}: crop_d must be given with crop_h and crop_w", crop_d=3)
    expect(rf"{op}: crop_w and crop_h must be given together", crop_h=3)
