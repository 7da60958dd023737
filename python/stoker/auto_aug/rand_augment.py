"""RandAugment (https://arxiv.org/abs/1909.13719): DALI's ``nvidia.dali.auto_aug.rand_augment``."""

import warnings
from typing import List, Optional, Tuple, Union

from stoker import fn, types
from stoker.auto_aug import augmentations as a
from stoker.auto_aug.core import _Augmentation, signed_bin
from stoker.auto_aug.core._args import check_num_magnitude_bins
from stoker.auto_aug.core._args import forbid_unused_kwargs as _forbid_unused_kwargs
from stoker.auto_aug.core._utils import get_translations as _get_translations
from stoker.auto_aug.core._utils import pretty_select as _pretty_select
from stoker.node import DataNode as _DataNode


def _check_excluded(augmentations, excluded, suite_name):
    names = {aug.name for aug in augmentations}
    assert len(names) == len(augmentations)
    excluded = excluded or []
    for name in excluded:
        if name not in names:
            raise Exception(
                f"The `{name}` was specified in `excluded`, but the {suite_name} suite "
                f"does not contain augmentation with this name. "
                f"The augmentations in the suite are: {', '.join(names)}.")
    return [aug for aug in augmentations if aug.name not in excluded]


def rand_augment(data: _DataNode, n: int, m: int, num_magnitude_bins: int = 31,
                 shape: Optional[Union[_DataNode, Tuple[int, int]]] = None,
                 fill_value: Optional[int] = 128,
                 interp_type: Optional[types.DALIInterpType] = None,
                 max_translate_abs: Optional[int] = None,
                 max_translate_rel: Optional[float] = None, seed: Optional[int] = None,
                 monotonic_mag: bool = True, excluded: Optional[List[str]] = None) -> _DataNode:
    """Applies RandAugment to a batch of uint8 images (HWC) or videos (FHWC): `n` augmentations
    per sample, each drawn uniformly from the suite, all with magnitude bin `m` (of
    `num_magnitude_bins`).

    shape, fill_value, interp_type, seed: as auto_augment's.
    max_translate_abs / max_translate_rel: translations' limit (defaults 100 pixels, or 100/224
        of the shape when `shape` is given).
    monotonic_mag: True: get_rand_augment_suite (stronger with larger bins); False:
        get_rand_augment_non_monotonic_suite (AutoAugment's ranges).
    excluded: names of augmentations left out of the suite."""
    aug_kwargs = {"fill_value": fill_value, "interp_type": interp_type}
    use_shape = shape is not None
    if use_shape:
        aug_kwargs["shape"] = shape
    suite = get_rand_augment_suite if monotonic_mag else get_rand_augment_non_monotonic_suite
    augmentations = _check_excluded(suite(use_shape, max_translate_abs, max_translate_rel),
                                    excluded, "RandAugment")
    return apply_rand_augment(augmentations, data, n, m, num_magnitude_bins=num_magnitude_bins,
                              seed=seed, **aug_kwargs)


def apply_rand_augment(augmentations: List[_Augmentation], data: _DataNode, n: int, m: int,
                       num_magnitude_bins: int = 31, seed: Optional[int] = None,
                       **kwargs) -> _DataNode:
    """Applies `augmentations` RandAugment's way: `n` of them in sequence per sample, each drawn
    uniformly, all with magnitude bin `m`. `kwargs` go to the augmentations that take them by
    name; a name none takes is an error."""
    if not isinstance(n, int) or n < 0:
        raise Exception(
            f"The number of operations to apply `n` must be a non-negative integer, got {n}.")
    check_num_magnitude_bins(num_magnitude_bins)
    if not isinstance(m, int) or not 0 <= m < num_magnitude_bins:
        raise Exception(f"The magnitude bin `m` must be an integer from "
                        f"`[0, {num_magnitude_bins - 1}]` range. Got {m}.")
    if n == 0:
        warnings.warn("The `apply_rand_augment` was called with `n=0`, no augmentation will be "
                      "applied.", Warning)
        return data
    if len(augmentations) == 0:
        raise Exception("The `augmentations` list cannot be empty, unless n=0. "
                        "Got empty list in `apply_rand_augment` call.")
    shape = () if n == 1 else (n,)
    op_idx = fn.random.uniform(values=list(range(len(augmentations))), seed=seed, shape=shape,
                               dtype=types.INT32)
    signed = any(aug.randomly_negate for aug in augmentations)
    mag_bin = signed_bin(m, seed=seed, shape=shape) if signed else m
    _forbid_unused_kwargs(augmentations, kwargs, "apply_rand_augment")
    for level in range(n):
        level_bin = mag_bin[level] if signed and n > 1 else mag_bin
        op_kwargs = dict(data=data, magnitude_bin=level_bin,
                         num_magnitude_bins=num_magnitude_bins, **kwargs)
        data = _pretty_select(augmentations, op_idx if n == 1 else op_idx[level], op_kwargs,
                              auto_aug_name="apply_rand_augment",
                              ref_suite_name="get_rand_augment_suite")
    return data


def get_rand_augment_suite(use_shape: bool = False, max_translate_abs: Optional[int] = None,
                           max_translate_rel: Optional[float] = None) -> List[_Augmentation]:
    """RandAugment's augmentations, stronger with larger magnitude bins: translate_x/y (up to
    100 pixels, or 100/224 of the shape with use_shape), shear_x/y, rotate, brightness,
    contrast, color, sharpness, posterize, solarize, equalize, auto_contrast, identity."""
    translations = _get_translations(use_shape, 100, 100 / 224, max_translate_abs,
                                     max_translate_rel)
    return translations + [
        a.shear_x.augmentation((0, 0.3), True),
        a.shear_y.augmentation((0, 0.3), True),
        a.rotate.augmentation((0, 30), True),
        a.brightness.augmentation((0, 0.9), True, a.shift_enhance_range),
        a.contrast.augmentation((0, 0.9), True, a.shift_enhance_range),
        a.color.augmentation((0, 0.9), True, a.shift_enhance_range),
        a.sharpness.augmentation((0, 0.9), True, a.sharpness_kernel),
        a.posterize.augmentation((8, 4), False, a.poster_mask_uint8),
        a.solarize.augmentation((256, 0)),  # a lower threshold solarizes more
        a.equalize,
        a.auto_contrast,
        a.identity,
    ]


def get_rand_augment_non_monotonic_suite(
        use_shape: bool = False, max_translate_abs: Optional[int] = None,
        max_translate_rel: Optional[float] = None) -> List[_Augmentation]:
    """get_rand_augment_suite with AutoAugment's ranges for brightness, contrast, color,
    sharpness (factors 0.1 to 1.9, not negated), posterize and solarize, whose strength does
    not grow with the bin."""
    translations = _get_translations(use_shape, 100, 100 / 224, max_translate_abs,
                                     max_translate_rel)
    return translations + [
        a.shear_x.augmentation((0, 0.3), True),
        a.shear_y.augmentation((0, 0.3), True),
        a.rotate.augmentation((0, 30), True),
        a.brightness.augmentation((0.1, 1.9), False, None),
        a.contrast.augmentation((0.1, 1.9), False, None),
        a.color.augmentation((0.1, 1.9), False, None),
        a.sharpness.augmentation((0.1, 1.9), False, a.sharpness_kernel_shifted),
        a.posterize.augmentation((0, 4), False, a.poster_mask_uint8),
        a.solarize.augmentation((0, 256), False, None),
        a.equalize,
        a.auto_contrast,
        a.identity,
    ]
