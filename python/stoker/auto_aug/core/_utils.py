"""Shared by auto_augment, rand_augment and trivial_augment: the translation augmentations'
ranges (absolute pixels, or a fraction of the image shape) and select with a helpful error
when a translation needs `shape`."""

from typing import List, Optional

import stoker.auto_aug.augmentations as a
from stoker.auto_aug.core._args import MissingArgException
from stoker.auto_aug.core._augmentation import Augmentation
from stoker.auto_aug.core._select import select
from stoker.node import DataNode as _DataNode


def max_translate_hw(max_translate):
    """(height, width) limits from one number or an (h, w) pair."""
    if isinstance(max_translate, (tuple, list)):
        height, width = max_translate
        return height, width
    return max_translate, max_translate


def parse_validate_offset(use_shape, max_translate_abs=None, max_translate_rel=None,
                          default_translate_abs=250, default_translate_rel=1.0):
    if not isinstance(use_shape, bool):
        raise Exception(f"The `use_shape` is a flag that should be set to either True or False, "
                        f"got {use_shape}.")
    if use_shape:
        if max_translate_abs is not None:
            raise Exception("The argument `max_translate_abs` cannot be used with image shapes. "
                            "You may use `max_translate_rel` instead.")
        return max_translate_hw(default_translate_rel if max_translate_rel is None
                                else max_translate_rel)
    if max_translate_rel is not None:
        raise Exception("The argument `max_translate_rel` cannot be used without image shapes. "
                        "You may use `max_translate_abs` instead.")
    return max_translate_hw(default_translate_abs if max_translate_abs is None
                            else max_translate_abs)


def get_translations(use_shape: bool, default_translate_abs: int, default_translate_rel: float,
                     max_translate_abs: Optional[int] = None,
                     max_translate_rel: Optional[float] = None):
    """[translate_x, translate_y] with their magnitude ranges set: fractions of the shape
    (translate_x/translate_y, which take `shape`) or pixels (the *_no_shape variants)."""
    height, width = parse_validate_offset(
        use_shape, max_translate_abs=max_translate_abs, max_translate_rel=max_translate_rel,
        default_translate_abs=default_translate_abs, default_translate_rel=default_translate_rel)
    tx, ty = (a.translate_x, a.translate_y) if use_shape else (a.translate_x_no_shape,
                                                               a.translate_y_no_shape)
    return [tx.augmentation((0, width), True), ty.augmentation((0, height), True)]


def pretty_select(augmentations: List[Augmentation], aug_ids: _DataNode, op_kwargs,
                  auto_aug_name: str, ref_suite_name: str):
    try:
        return select(augmentations, aug_ids, **op_kwargs)
    except MissingArgException as e:
        if e.missing_args != ["shape"] or e.augmentation.op not in (a.translate_x.op,
                                                                    a.translate_y.op):
            raise
        raise Exception(
            f"The augmentation `{e.augmentation.name}` requires `shape` argument that "
            f"describes image shape (in HWC layout). Please provide it as `shape` argument "
            f"to `{auto_aug_name}` call. You can get the image shape from encoded "
            f"images with `fn.peek_image_shape`. Alternatively, you can use "
            f"`translate_x_no_shape`/`translate_y_no_shape` that does not rely on image "
            f"shape, but uses offset from fixed range: for reference see `{ref_suite_name}` "
            f"and its `use_shape` argument. ") from None
