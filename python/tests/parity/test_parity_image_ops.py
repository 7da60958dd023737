"""Image and tensor operators against DALI 2.4 on the same ragged batch of images: one table of
cases, each the same call in both libraries with deterministic arguments (explicit crop
positions, angles, flips), compared exactly or within the stated tolerance where the two
implementations round or resample differently. Random operators are compared by distribution
(test_parity_random.py)."""

import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_like_dali, dali

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

# operator -> how it is compared; "tolerance: ..." says within what, and why
PARITY = {
    "brightness": "exact",
    "contrast": "tolerance: 1 level (float rounding of the same formula)",
    "brightness_contrast": "tolerance: 1 level (float rounding of the same formula)",
    "cast": "exact",
    "cat": "exact",
    "stack": "exact",
    "color_space_conversion": "tolerance: 1 level (fixed-point vs float matrices)",
    "hsv": "tolerance: 1 level (the same YIQ-space matrix, float rounding)",
    "hue": "tolerance: 1 level",
    "saturation": "tolerance: 1 level",
    "color_twist": "tolerance: 1 level",
    "crop": "exact",
    "crop_mirror_normalize": "tolerance: 1e-5 relative (float32 arithmetic order)",
    "erase": "exact",
    "flip": "exact",
    "gaussian_blur": "tolerance: 1 level (separable float convolution, rounding)",
    "normalize": "tolerance: 1e-5",
    "pad": "exact",
    "paste": "exact",
    "reshape": "exact",
    "transpose": "exact",
    "resize": "tolerance: 1 level on all but 1-3% of values (DALI's tabulated filters; "
              "Gaussian: DALI's table, all but 0.5%); NN exact",
    "rotate": "tolerance: 1 level where bilinear (float vs double); NN exact but quarter-turn ties",
    "warp_affine": "tolerance: see _CASES",
}


def _images():
    rng = np.random.default_rng(21)
    out = []
    for h, w in ((37, 53), (64, 48), (20, 31), (50, 50)):
        y, x = np.mgrid[0:h, 0:w]
        smooth = np.stack([(x * 255 // w), (y * 255 // h), ((x + y) * 255 // (w + h))], -1)
        noise = rng.integers(-20, 21, (h, w, 3))
        out.append(np.clip(smooth + noise, 0, 255).astype(np.uint8))
    return out


IMAGES = _images()


_ON_GPU = [False]  # set while a test runs the table on the GPU


def _feed(fn, types):
    images = fn.external_source(source=lambda: [a.copy() for a in IMAGES], batch=True,
                                layout="HWC")
    # On the GPU every operator below follows its input there (in both libraries).
    return images.gpu() if _ON_GPU[0] else images


def _f32(fn, types):
    return fn.cast(_feed(fn, types), dtype=types.FLOAT)


# (id, definition(fn, types) -> node, atol, share of elements allowed beyond atol)
_CASES = [
    ("brightness", lambda fn, t: fn.brightness(_feed(fn, t), brightness=1.3), 0, 0),
    ("brightness_f32", lambda fn, t: fn.brightness(_f32(fn, t), brightness=0.7,
                                                   brightness_shift=0.1), 1e-4, 0),
    ("contrast", lambda fn, t: fn.contrast(_feed(fn, t), contrast=1.4), 1, 0),
    ("brightness_contrast", lambda fn, t: fn.brightness_contrast(
        _feed(fn, t), brightness=0.9, contrast=1.2, contrast_center=100), 1, 0),
    ("cast", lambda fn, t: fn.cast(_feed(fn, t), dtype=t.INT16), 0, 0),
    ("cat", lambda fn, t: fn.cat(_feed(fn, t), _feed(fn, t), axis=2), 0, 0),
    ("stack", lambda fn, t: fn.stack(_feed(fn, t), _feed(fn, t), axis=0), 0, 0),
    ("color_space_conversion", lambda fn, t: fn.color_space_conversion(
        _feed(fn, t), image_type=t.RGB, output_type=t.YCbCr), 1, 0),
    ("color_space_conversion_gray", lambda fn, t: fn.color_space_conversion(
        _feed(fn, t), image_type=t.RGB, output_type=t.GRAY), 1, 0),
    ("hsv", lambda fn, t: fn.hsv(_feed(fn, t), hue=30, saturation=1.3, value=0.9), 1, 0),
    ("hue", lambda fn, t: fn.hue(_feed(fn, t), hue=-45), 1, 0),
    ("saturation", lambda fn, t: fn.saturation(_feed(fn, t), saturation=0.5), 1, 0),
    ("color_twist", lambda fn, t: fn.color_twist(_feed(fn, t), hue=20, saturation=1.2,
                                                 contrast=0.8, brightness=1.1), 1, 0),
    ("crop", lambda fn, t: fn.crop(_feed(fn, t), crop=(15, 17), crop_pos_x=0.25,
                                   crop_pos_y=0.75), 0, 0),
    ("crop_out_of_bounds", lambda fn, t: fn.crop(_feed(fn, t), crop=(60, 60), crop_pos_x=0.5,
                                                 crop_pos_y=0.5, out_of_bounds_policy="pad",
                                                 fill_values=7), 0, 0),
    # Fractional fill values: DALI's static_cast truncates them (2.7 -> 2, -0.9 -> 0).
    ("crop_fractional_fill", lambda fn, t: fn.crop(_feed(fn, t), crop=(60, 60),
                                                   out_of_bounds_policy="pad",
                                                   fill_values=(2.7, 250.9, -0.9)), 0, 0),
    ("slice_fractional_fill", lambda fn, t: fn.slice(_feed(fn, t), 0, 90, axes=[1],
                                                     out_of_bounds_policy="pad",
                                                     fill_values=5.99), 0, 0),
    ("pad_fractional_fill", lambda fn, t: fn.pad(_feed(fn, t), fill_value=3.7, axes=[0, 1],
                                                 shape=[70, 70]), 0, 0),
    ("erase_fractional_fill", lambda fn, t: fn.erase(_feed(fn, t), anchor=[3, 4], shape=[5, 6],
                                                     axis_names="HW", fill_value=11.8), 0, 0),
    ("paste_fractional_fill", lambda fn, t: fn.paste(_feed(fn, t), ratio=1.5, paste_x=0.3,
                                                     fill_value=(9.9, 8.5, 0.2)), 0, 0),
    ("crop_mirror_normalize", lambda fn, t: fn.crop_mirror_normalize(
        _feed(fn, t), crop=(16, 16), crop_pos_x=0.4, crop_pos_y=0.6, mirror=1,
        mean=[120.0, 110.0, 100.0], std=[60.0, 55.0, 50.0], output_layout="CHW",
        dtype=t.FLOAT), 1e-5, 0),
    ("crop_mirror_normalize_f16_pad", lambda fn, t: fn.crop_mirror_normalize(
        _feed(fn, t), crop=(16, 16), mean=[120.0, 110.0, 100.0], std=[60.0, 55.0, 50.0],
        dtype=t.FLOAT16, pad_output=True), 1e-2, 0),
    ("erase", lambda fn, t: fn.erase(_feed(fn, t), anchor=[3, 4], shape=[5, 6], axis_names="HW",
                                     fill_value=11), 0, 0),
    # fractions and centred anchors: DALI truncates the float32 start and end (not rounding)
    ("erase_normalized", lambda fn, t: fn.erase(
        _feed(fn, t), anchor=[0.3, 0.2, 0.6, 0.5], shape=[0.1, 0.4, 0.2, 0.1], normalized=True,
        axis_names="HW", fill_value=0), 0, 0),
    ("erase_centered", lambda fn, t: fn.erase(
        _feed(fn, t), anchor=[0.5, 0.5], shape=[0.25, 0.3], normalized=True,
        centered_anchor=True, axis_names="HW", fill_value=255), 0, 0),
    ("erase_fractional_pixels", lambda fn, t: fn.erase(
        _feed(fn, t), anchor=[2.7, -1.5], shape=[4.6, 6.9], axis_names="HW"), 0, 0),
    ("flip", lambda fn, t: fn.flip(_feed(fn, t), horizontal=1, vertical=1), 0, 0),
    ("gaussian_blur", lambda fn, t: fn.gaussian_blur(_feed(fn, t), sigma=1.5), 1, 0),
    ("gaussian_blur_window", lambda fn, t: fn.gaussian_blur(_feed(fn, t), window_size=5), 1, 0),
    ("normalize", lambda fn, t: fn.normalize(_f32(fn, t), axes=[0, 1]), 1e-4, 0),
    ("pad", lambda fn, t: fn.pad(_feed(fn, t), fill_value=3, axes=[0, 1]), 0, 0),
    ("paste", lambda fn, t: fn.paste(_feed(fn, t), ratio=1.5, paste_x=0.3, paste_y=0.6,
                                     fill_value=(9, 8, 7)), 0, 0),
    ("reshape", lambda fn, t: fn.reshape(_feed(fn, t), rel_shape=[1, -1]), 0, 0),
    ("transpose", lambda fn, t: fn.transpose(_feed(fn, t), perm=[2, 0, 1]), 0, 0),
    ("resize_linear", lambda fn, t: fn.resize(_feed(fn, t), size=(24, 40),
                                             interp_type=t.INTERP_LINEAR, antialias=False),
     1, 0),
    # DALI samples its filters from tables: a level or two apart on a few percent of pixels.
    ("resize_linear_antialias", lambda fn, t: fn.resize(_feed(fn, t), size=(24, 40),
                                                       interp_type=t.INTERP_LINEAR), 1, 0.01),
    ("resize_nn", lambda fn, t: fn.resize(_feed(fn, t), size=(24, 40), interp_type=t.INTERP_NN),
     0, 0),
    ("resize_cubic", lambda fn, t: fn.resize(_feed(fn, t), resize_shorter=30,
                                            interp_type=t.INTERP_CUBIC), 1, 0.01),
    ("resize_lanczos", lambda fn, t: fn.resize(_feed(fn, t), resize_x=45,
                                              interp_type=t.INTERP_LANCZOS3), 1, 0.03),
    # Gaussian: DALI's own table, weights to the bit (resample_weights.cpp); the sums' order
    # (DALI picks which axis goes first, and adds edge taps one by one) moves a value ending in
    # .5 by a level now and then. (50, 30) keeps the 50x50 image's height: DALI's float width
    # 1.9999999 decides where its first rows lean.
    *[(f"resize_gaussian_{what}", lambda fn, t, size=size, aa=aa: fn.resize(
        _feed(fn, t), size=size, interp_type=t.INTERP_GAUSSIAN, antialias=aa), 1, 0.005)
      for what, size, aa in (("up", (70, 90), True), ("down", (15, 20), True),
                             ("down_no_antialias", (15, 20), False),
                             ("mixed_no_antialias", (30, 80), False),
                             ("same_height", (50, 30), True))],
    ("resize_gaussian_min_mag", lambda fn, t: fn.resize(
        _feed(fn, t), size=(24, 80), interp_type=t.INTERP_NN, min_filter=t.INTERP_GAUSSIAN,
        mag_filter=t.INTERP_GAUSSIAN), 1, 0.005),
    ("resize_gaussian_float", lambda fn, t: fn.resize(
        _f32(fn, t), size=(15, 80), interp_type=t.INTERP_GAUSSIAN), 1e-3, 0),
    ("resize_not_larger", lambda fn, t: fn.resize(_feed(fn, t), size=(40, 40),
                                                 mode="not_larger"), 1, 0.01),
    # min_filter / mag_filter: the height shrinks (min_filter), the width grows (mag_filter).
    ("resize_min_nn_mag_linear", lambda fn, t: fn.resize(
        _feed(fn, t), size=(24, 80), min_filter=t.INTERP_NN, mag_filter=t.INTERP_LINEAR,
        antialias=False), 1, 0),
    # (DALI's tabulated antialiased linear filter: as resize_linear_antialias.)
    ("resize_min_linear_mag_nn", lambda fn, t: fn.resize(
        _feed(fn, t), size=(24, 80), interp_type=t.INTERP_CUBIC, min_filter=t.INTERP_LINEAR,
        mag_filter=t.INTERP_NN), 1, 0.02),
    ("resize_mag_filter_only", lambda fn, t: fn.resize(
        _feed(fn, t), size=(70, 30), interp_type=t.INTERP_NN, mag_filter=t.INTERP_LINEAR),
     1, 0.01),
    # A square crop with the whole area and aspect 1: the window is the whole image in both.
    ("random_resized_crop_min_mag", lambda fn, t: fn.random_resized_crop(
        fn.crop(_feed(fn, t), crop=(20, 20)), size=(12, 45), random_area=(1.0, 1.0),
        random_aspect_ratio=(1.0, 1.0), min_filter=t.INTERP_NN, mag_filter=t.INTERP_LINEAR),
     1, 0),
    ("rotate", lambda fn, t: fn.rotate(_feed(fn, t), angle=30, fill_value=0), 1, 0.01),
    ("rotate_keep_size_nn", lambda fn, t: fn.rotate(_feed(fn, t), angle=-37, keep_size=True,
                                                    interp_type=t.INTERP_NN, fill_value=5),
     0, 0),
    # Quarter turns put NN taps exactly on pixel boundaries: DALI's float32 mapping and
    # stoker's double one break those ties differently (docs/dali_differences.md).
    ("rotate_quarter_nn", lambda fn, t: fn.rotate(_feed(fn, t), angle=-90, keep_size=True,
                                                  interp_type=t.INTERP_NN, fill_value=5),
     0, 0.15),
    ("warp_affine", lambda fn, t: fn.warp_affine(_feed(fn, t), matrix=[0.9, 0.1, 2.0,
                                                                       -0.1, 1.1, -3.0],
                                                 fill_value=0), 1, 0.01),
    # The matrix as the second input, from transforms.rotation (DALI's usual form).
    ("warp_affine_mtx", lambda fn, t: fn.warp_affine(
        _feed(fn, t), fn.transforms.rotation(angle=20.0, center=[20.0, 15.0]), fill_value=0),
     1, 0.01),
    # `dtype`: float32 out keeps the interpolated values; integers out of float32 input are
    # rounded and saturated (values beyond uint8's range both ways); the fill is taken as the
    # input's type, then the output's (3.7 is 4 for uint8 input, -9 is 0 into uint8).
    ("rotate_dtype_f32", lambda fn, t: fn.rotate(_feed(fn, t), angle=30, fill_value=3.7,
                                                 dtype=t.FLOAT), 1e-2, 0.01),
    ("rotate_f32_dtype_u8", lambda fn, t: fn.rotate(_f32(fn, t) * 1.7 - 60, angle=-25,
                                                    fill_value=-9, dtype=t.UINT8), 1, 0.01),
    ("warp_affine_f32_dtype_i16", lambda fn, t: fn.warp_affine(
        _f32(fn, t) * 1.7 - 60, matrix=[0.9, 0.1, 2.0, -0.1, 1.1, -3.0], fill_value=-9.6,
        dtype=t.INT16), 1, 0.01),
    ("warp_affine_i32_dtype_f32", lambda fn, t: fn.warp_affine(
        fn.cast(_feed(fn, t), dtype=t.INT32), matrix=[0.9, 0.1, 2.0, -0.1, 1.1, -3.0],
        dtype=t.FLOAT), 1e-2, 0),
]


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("case", _CASES, ids=[c[0] for c in _CASES])
def test_operator_matches_dali(case, device):
    """The same call on each library's CPU backend, and on its GPU backend where a GPU is
    (assert_like_dali: float tolerances x10 there)."""
    name, define, atol, share = case
    assert_like_dali(define, len(IMAGES), device, atol, share, name,
                     lambda on_gpu: _ON_GPU.__setitem__(0, on_gpu))
