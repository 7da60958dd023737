"""The standard augmentations of AutoAugment (ImageNet policy), RandAugment and TrivialAugment
Wide, made of stoker operators, with DALI's names, magnitude ranges, `mag_to_param` mappings and
`randomly_negate` settings (``nvidia.dali.auto_aug.augmentations``).

Each is an ``@augmentation``: call it with the samples, ``magnitude_bin`` and
``num_magnitude_bins``; its parameter is
``mag_to_param(magnitudes[magnitude_bin] * (-1) ** random_sign)`` with
``magnitudes = linspace(mag_range[0], mag_range[1], num_magnitude_bins)``. Adjust one with
``.augmentation(...)``, e.g. ``shear_x.augmentation(mag_range=(0, 0.5))``.

The samples are uint8 images (HWC) or videos (FHWC)."""

import numpy as np

from stoker import fn, types
from stoker.auto_aug.core import augmentation


def _warp(data, matrix, fill_value, interp_type):
    # The matrices map input to output coordinates (inverse_map=False).
    return fn.warp_affine(data, matrix=matrix, fill_value=fill_value, interp_type=interp_type,
                          inverse_map=False)


def warp_x_param(magnitude):
    return [magnitude, 0]


def warp_y_param(magnitude):
    return [0, magnitude]


@augmentation(mag_range=(0, 0.3), randomly_negate=True, mag_to_param=warp_x_param)
def shear_x(data, shear, fill_value=128, interp_type=None):
    return _warp(data, fn.transforms.shear(shear=shear), fill_value, interp_type)


@augmentation(mag_range=(0, 0.3), randomly_negate=True, mag_to_param=warp_y_param)
def shear_y(data, shear, fill_value=128, interp_type=None):
    return _warp(data, fn.transforms.shear(shear=shear), fill_value, interp_type)


@augmentation(mag_range=(0.0, 1.0), randomly_negate=True, mag_to_param=warp_x_param)
def translate_x(data, rel_offset, shape, fill_value=128, interp_type=None):
    """Shifts by `rel_offset` of the width; `shape` is the (H, W, ...) shape of the samples."""
    matrix = fn.transforms.translation(offset=rel_offset * shape[1])
    return _warp(data, matrix, fill_value, interp_type)


@augmentation(mag_range=(0, 250), randomly_negate=True, mag_to_param=warp_x_param,
              name="translate_x")
def translate_x_no_shape(data, offset, fill_value=128, interp_type=None):
    return _warp(data, fn.transforms.translation(offset=offset), fill_value, interp_type)


@augmentation(mag_range=(0.0, 1.0), randomly_negate=True, mag_to_param=warp_y_param)
def translate_y(data, rel_offset, shape, fill_value=128, interp_type=None):
    """Shifts by `rel_offset` of the height; `shape` is the (H, W, ...) shape of the samples."""
    matrix = fn.transforms.translation(offset=rel_offset * shape[0])
    return _warp(data, matrix, fill_value, interp_type)


@augmentation(mag_range=(0, 250), randomly_negate=True, mag_to_param=warp_y_param,
              name="translate_y")
def translate_y_no_shape(data, offset, fill_value=128, interp_type=None):
    return _warp(data, fn.transforms.translation(offset=offset), fill_value, interp_type)


@augmentation(mag_range=(0, 30), randomly_negate=True)
def rotate(data, angle, fill_value=128, interp_type=None, rotate_keep_size=True):
    return fn.rotate(data, angle=angle, fill_value=fill_value, interp_type=interp_type,
                     keep_size=rotate_keep_size)


def shift_enhance_range(magnitude):
    """PIL's enhance factors are neutral at 1: magnitudes in [0, 1], randomly negated, become
    factors 1 + magnitude in [0, 2]."""
    return 1 + magnitude


@augmentation(mag_range=(0, 0.9), randomly_negate=True, mag_to_param=shift_enhance_range)
def brightness(data, parameter):
    return fn.brightness(data, brightness=parameter)


@augmentation(mag_range=(0, 0.9), randomly_negate=True, mag_to_param=shift_enhance_range)
def contrast(data, parameter):
    """PIL's ImageEnhance.Contrast: blends with the mean gray level (channel weights 0.299,
    0.587, 0.114) of each image (or frame). HWC/FHWC."""
    mean = fn.reductions.mean(data, axis_names="HW", keep_dims=True)
    rgb_weights = types.Constant(np.array([0.299, 0.587, 0.114], dtype=np.float32))
    center = fn.reductions.sum(mean * rgb_weights, axis_names="C", keep_dims=True)
    # (the center is computed on the samples' device, so it is blended with arithmetic rather
    # than given to fn.contrast's contrast_center, which takes CPU values only; the (1, 1, 1)
    # center broadcasts against the samples)
    return fn.cast_like(center + (data - center) * parameter, data)


@augmentation(mag_range=(0, 0.9), randomly_negate=True, mag_to_param=shift_enhance_range)
def color(data, parameter):
    return fn.saturation(data, saturation=parameter)


def sharpness_kernel(magnitude):
    """The 3x3 kernel blending PIL's smoothing filter and the identity, for magnitudes in
    [-1, 1] (0: identity)."""
    smooth = np.array([[1, 1, 1], [1, 5, 1], [1, 1, 1]], dtype=np.float32) / 13
    ident = np.zeros((3, 3), dtype=np.float32)
    ident[1, 1] = 1
    return -magnitude * smooth + (1 + magnitude) * ident


def sharpness_kernel_shifted(magnitude):
    """sharpness_kernel for magnitudes in [0, 2] (1: identity)."""
    return sharpness_kernel(magnitude - 1)


@augmentation(mag_range=(0, 0.9), randomly_negate=True, mag_to_param=sharpness_kernel,
              param_device="auto")
def sharpness(data, kernel):
    """PIL's ImageEnhance.Sharpness, but for the 1-pixel border (PIL keeps the input there)."""
    return fn.experimental.filter(data, kernel)


def poster_mask_uint8(magnitude):
    """The uint8 mask keeping the `magnitude` (rounded, clamped to [1, 8]) high bits; 0 bits
    is remapped to 1, as the RandAugment paper's reference implementation does."""
    bits = int(min(max(np.round(magnitude), 1), 8))
    return np.array(np.uint8(255) ^ np.uint8(2 ** (8 - bits) - 1), dtype=np.uint8)


@augmentation(mag_range=(0, 4), mag_to_param=poster_mask_uint8, param_device="auto")
def posterize(data, mask):
    return data & mask


@augmentation(mag_range=(256, 0), param_device="auto")
def solarize(data, threshold):
    """Inverts the values at or above `threshold`."""
    inverted = types.Constant(255, dtype=types.UINT8) - data
    below = data < threshold
    above = below ^ True
    return below * data + above * inverted


def solarize_add_shift(shift):
    if shift >= 128:
        raise Exception("The solarize_add augmentation accepts shifts from 0 to 128")
    return np.uint8(shift)


@augmentation(mag_range=(0, 110), param_device="auto", mag_to_param=solarize_add_shift)
def solarize_add(data, shift):
    """Adds `shift` to the values below 128 (uint8 arithmetic)."""
    below = data < types.Constant(128, dtype=types.UINT8)
    rest = below ^ True
    return below * (data + shift) + rest * data


@augmentation
def invert(data, _):
    """255 - data (its layout is the samples': the constant has none)."""
    return types.Constant(255, dtype=types.UINT8) - data


@augmentation
def equalize(data, _):
    """Histogram equalization per channel, OpenCV's formula (PIL's lookup table differs
    slightly)."""
    return fn.experimental.equalize(data)


@augmentation
def auto_contrast(data, _):
    """Stretches each channel of each image (or frame) to [0, 255]; constant channels are
    kept. HWC/FHWC."""
    lo = fn.reductions.min(data, axis_names="HW", keep_dims=True)
    hi = fn.reductions.max(data, axis_names="HW", keep_dims=True)
    diff = hi - lo
    stretch = diff > 0
    keep = stretch ^ True
    # divisor: diff where the channel varies, 255 where it does not (scale 1)
    divisor = diff * stretch + types.Constant(255, dtype=types.UINT8) * keep
    scale = 255 / divisor
    # the per-channel (1, 1, C) values broadcast against the samples
    return fn.cast_like((data - lo * stretch) * scale, data)


@augmentation
def identity(data, _):
    return data
