"""TrivialAugment Wide (https://arxiv.org/abs/2103.10158): DALI's
``nvidia.dali.auto_aug.trivial_augment``."""

from typing import List, Optional, Tuple, Union

from stoker import fn, types
from stoker.auto_aug import augmentations as a
from stoker.auto_aug.core import _Augmentation, signed_bin
from stoker.auto_aug.core._args import check_num_magnitude_bins
from stoker.auto_aug.core._args import forbid_unused_kwargs as _forbid_unused_kwargs
from stoker.auto_aug.core._utils import get_translations as _get_translations
from stoker.auto_aug.core._utils import pretty_select as _pretty_select
from stoker.auto_aug.rand_augment import _check_excluded
from stoker.node import DataNode as _DataNode


def trivial_augment_wide(data: _DataNode, num_magnitude_bins: int = 31,
                         shape: Optional[Union[_DataNode, Tuple[int, int]]] = None,
                         fill_value: Optional[int] = 128,
                         interp_type: Optional[types.DALIInterpType] = None,
                         max_translate_abs: Optional[int] = None,
                         max_translate_rel: Optional[float] = None, seed: Optional[int] = None,
                         excluded: Optional[List[str]] = None) -> _DataNode:
    """Applies TrivialAugment Wide to a batch of uint8 images (HWC) or videos (FHWC): one
    augmentation per sample drawn uniformly from the wide suite, with a magnitude bin drawn
    uniformly from [0, num_magnitude_bins - 1].

    shape, fill_value, interp_type, seed: as auto_augment's.
    max_translate_abs / max_translate_rel: translations' limit (defaults 32 pixels, or the
        whole shape when `shape` is given).
    excluded: names of augmentations left out of the suite."""
    aug_kwargs = {"fill_value": fill_value, "interp_type": interp_type}
    use_shape = shape is not None
    if use_shape:
        aug_kwargs["shape"] = shape
    augmentations = _check_excluded(
        get_trivial_augment_wide_suite(use_shape=use_shape, max_translate_abs=max_translate_abs,
                                       max_translate_rel=max_translate_rel),
        excluded, "TrivialAugmentWide")
    return apply_trivial_augment(augmentations, data, num_magnitude_bins=num_magnitude_bins,
                                 seed=seed, **aug_kwargs)


def apply_trivial_augment(augmentations: List[_Augmentation], data: _DataNode,
                          num_magnitude_bins: int = 31, seed: Optional[int] = None,
                          **kwargs) -> _DataNode:
    """Applies `augmentations` TrivialAugment's way: one per sample, drawn uniformly, with a
    magnitude bin drawn uniformly. `kwargs` go to the augmentations that take them by name; a
    name none takes is an error."""
    check_num_magnitude_bins(num_magnitude_bins)
    if len(augmentations) == 0:
        raise Exception("The `augmentations` list cannot be empty. "
                        "Got empty list in `apply_trivial_augment` call.")
    magnitude_bin = fn.random.uniform(values=list(range(num_magnitude_bins)), dtype=types.INT32,
                                      seed=seed)
    if any(aug.randomly_negate for aug in augmentations):
        magnitude_bin = signed_bin(magnitude_bin, seed=seed)
    _forbid_unused_kwargs(augmentations, kwargs, "apply_trivial_augment")
    op_kwargs = dict(data=data, magnitude_bin=magnitude_bin,
                     num_magnitude_bins=num_magnitude_bins, **kwargs)
    op_idx = fn.random.uniform(values=list(range(len(augmentations))), seed=seed,
                               dtype=types.INT32)
    return _pretty_select(augmentations, op_idx, op_kwargs, auto_aug_name="apply_trivial_augment",
                          ref_suite_name="get_trivial_augment_wide_suite")


def get_trivial_augment_wide_suite(
        use_shape: bool = False, max_translate_abs: Optional[int] = None,
        max_translate_rel: Optional[float] = None) -> List[_Augmentation]:
    """The 14 augmentations of TrivialAugment's wide space: translate_x/y (up to 32 pixels, or
    the whole shape with use_shape), shear_x/y (0.99), rotate (135 degrees), brightness,
    contrast, color, sharpness (factors 0.01 to 1.99), posterize (8 to 2 bits), solarize,
    equalize, auto_contrast, identity."""
    translations = _get_translations(use_shape, 32, 1.0, max_translate_abs, max_translate_rel)
    return translations + [
        a.shear_x.augmentation((0, 0.99), True),
        a.shear_y.augmentation((0, 0.99), True),
        a.rotate.augmentation((0, 135), True),
        a.brightness.augmentation((0.01, 0.99), True, a.shift_enhance_range),
        a.contrast.augmentation((0.01, 0.99), True, a.shift_enhance_range),
        a.color.augmentation((0.01, 0.99), True, a.shift_enhance_range),
        a.sharpness.augmentation((0.01, 0.99), True, a.sharpness_kernel),
        a.posterize.augmentation((8, 2), False, a.poster_mask_uint8),
        a.solarize.augmentation((256, 0)),  # a lower threshold solarizes more
        a.equalize,
        a.auto_contrast,
        a.identity,
    ]
