"""AutoAugment (https://arxiv.org/abs/1805.09501): DALI's ``nvidia.dali.auto_aug.auto_augment``
with the paper's policies (ImageNet, reduced ImageNet, SVHN, reduced CIFAR-10)."""

from typing import List, Optional, Tuple, Union

import numpy as np

from stoker import conditionals, fn, types
from stoker.auto_aug import augmentations as a
from stoker.auto_aug.core import Policy, _Augmentation, signed_bin
from stoker.auto_aug.core._args import forbid_unused_kwargs as _forbid_unused_kwargs
from stoker.auto_aug.core._utils import get_translations as _get_translations
from stoker.auto_aug.core._utils import pretty_select as _pretty_select
from stoker.node import DataNode as _DataNode


def auto_augment(data: _DataNode, policy_name: str = "image_net",
                 shape: Optional[Union[_DataNode, Tuple[int, int]]] = None,
                 fill_value: Optional[int] = 128,
                 interp_type: Optional[types.DALIInterpType] = None,
                 max_translate_abs: Optional[int] = None,
                 max_translate_rel: Optional[float] = None,
                 seed: Optional[int] = None) -> _DataNode:
    """Applies one of AutoAugment's policies to a batch of uint8 images (HWC) or videos (FHWC).

    policy_name: "image_net" (default), "reduced_image_net", "svhn" or "reduced_cifar10".
    shape: the (height, width) of the samples (a DataNode, e.g. from fn.peek_image_shape, or a
        pair): translations then shift by up to `max_translate_rel` of it (default 1);
        without it, by up to `max_translate_abs` pixels (default 250).
    fill_value: the padding of warped samples (shear, translate, rotate); None: the border
        replicated.
    interp_type: the warps' interpolation (types.INTERP_LINEAR by default, or INTERP_NN).
    max_translate_abs / max_translate_rel: a number, or (height, width).
    seed: of the random choices (sub-policy, steps, signs)."""
    policies = {
        "image_net": get_image_net_policy,
        "reduced_image_net": get_reduced_image_net_policy,
        "svhn": get_svhn_policy,
        "reduced_cifar10": get_reduced_cifar10_policy,
    }
    without_translation = ("reduced_image_net",)
    if not isinstance(policy_name, str) or policy_name not in policies:
        names = ", ".join(f"`{name}`" for name in policies)
        raise Exception(f"The `policy_name` must be a string that takes one of the values: "
                        f"{names}")
    if policy_name in without_translation:
        for value, arg in ((shape, "shape"), (max_translate_abs, "max_translate_abs"),
                           (max_translate_rel, "max_translate_rel")):
            if value is not None:
                raise Exception(
                    f"The policy `{policy_name}` does not contain any augmentations that rely "
                    f"on the image shape. The `{arg}` argument must not be specified in that "
                    f"case.")
    aug_kwargs = {"fill_value": fill_value, "interp_type": interp_type}
    use_shape = shape is not None
    if use_shape:
        aug_kwargs["shape"] = shape
    if policy_name in without_translation:
        policy = policies[policy_name]()
    else:
        policy = policies[policy_name](use_shape=use_shape, max_translate_abs=max_translate_abs,
                                       max_translate_rel=max_translate_rel)
    return apply_auto_augment(policy, data, seed, **aug_kwargs)


def auto_augment_image_net(data: _DataNode,
                           shape: Optional[Union[_DataNode, Tuple[int, int]]] = None,
                           fill_value: Optional[int] = 128,
                           interp_type: Optional[types.DALIInterpType] = None,
                           max_translate_abs: Optional[int] = None,
                           max_translate_rel: Optional[float] = None,
                           seed: Optional[int] = None) -> _DataNode:
    """auto_augment with policy_name="image_net"."""
    return auto_augment(data, "image_net", shape, fill_value, interp_type, max_translate_abs,
                        max_translate_rel, seed)


def apply_auto_augment(policy: Policy, data: _DataNode, seed: Optional[int] = None,
                       **kwargs) -> _DataNode:
    """Applies `policy` AutoAugment's way: per sample, one sub-policy chosen uniformly, each of
    its steps run with its probability and magnitude bin. `kwargs` go to the augmentations
    that take them by name (e.g. shape, fill_value, interp_type); a name none takes is an
    error."""
    if len(policy.sub_policies) == 0:
        raise Exception(f"Cannot run empty policy. Got {policy} in `apply_auto_augment` call.")
    num_stages = max(len(sub_policy) for sub_policy in policy.sub_policies)
    should_run = fn.random.uniform(range=[0, 1], shape=(num_stages,), dtype=types.FLOAT,
                                   seed=seed)
    sub_policy_id = fn.random.uniform(values=list(range(len(policy.sub_policies))), seed=seed,
                                      dtype=types.INT32)
    run_probabilities = _sub_policy_to_probability_map(policy)[sub_policy_id]
    magnitude_bins = _sub_policy_to_magnitude_bin_map(policy)[sub_policy_id]
    aug_ids, augmentations = _sub_policy_to_augmentation_map(policy)
    aug_ids = aug_ids[sub_policy_id]
    if any(aug.randomly_negate for aug in policy.augmentations.values()):
        magnitude_bins = signed_bin(magnitude_bins, seed=seed, shape=(num_stages,))
    _forbid_unused_kwargs(policy.augmentations.values(), kwargs, "apply_auto_augment")
    for stage in range(num_stages):
        def run_stage(data=data, stage=stage):
            op_kwargs = dict(data=data, magnitude_bin=magnitude_bins[stage],
                             num_magnitude_bins=policy.num_magnitude_bins, **kwargs)
            return _pretty_select(augmentations[stage], aug_ids[stage], op_kwargs,
                                  auto_aug_name="apply_auto_augment",
                                  ref_suite_name="get_image_net_policy")

        data = conditionals.if_exp(should_run[stage] < run_probabilities[stage], run_stage,
                                   lambda data=data: data)
    return data


def get_image_net_policy(use_shape: bool = False, max_translate_abs: Optional[int] = None,
                         max_translate_rel: Optional[float] = None) -> Policy:
    """AutoAugment's ImageNet policy (run it with apply_auto_augment).

    use_shape: translations by a fraction of the sample's shape (`max_translate_rel`, default
        1) rather than by pixels (`max_translate_abs`, default 250); a number or (h, w)."""
    _, translate_y = _get_translations(use_shape, 250, 1.0, max_translate_abs, max_translate_rel)
    shear_x = a.shear_x.augmentation((0, 0.3), True)
    shear_y = a.shear_y.augmentation((0, 0.3), True)
    rotate = a.rotate.augmentation((0, 30), True)
    color = a.color.augmentation((0.1, 1.9), False, None)
    posterize = a.posterize.augmentation((0, 4), False, a.poster_mask_uint8)
    solarize = a.solarize.augmentation((0, 256), False)
    solarize_add = a.solarize_add.augmentation((0, 110), False)
    invert, equalize, auto_contrast = a.invert, a.equalize, a.auto_contrast
    return Policy(name="ImageNetPolicy", num_magnitude_bins=11, sub_policies=[
        [(equalize, 0.8, None), (shear_y, 0.8, 4)],
        [(color, 0.4, 9), (equalize, 0.6, None)],
        [(color, 0.4, 1), (rotate, 0.6, 8)],
        [(solarize, 0.8, 3), (equalize, 0.4, None)],
        [(solarize, 0.4, 2), (solarize, 0.6, 2)],
        [(color, 0.2, 0), (equalize, 0.8, None)],
        [(equalize, 0.4, None), (solarize_add, 0.8, 3)],
        [(shear_x, 0.2, 9), (rotate, 0.6, 8)],
        [(color, 0.6, 1), (equalize, 1.0, None)],
        [(invert, 0.4, None), (rotate, 0.6, 0)],
        [(equalize, 1.0, None), (shear_y, 0.6, 3)],
        [(color, 0.4, 7), (equalize, 0.6, None)],
        [(posterize, 0.4, 6), (auto_contrast, 0.4, None)],
        [(solarize, 0.6, 8), (color, 0.6, 9)],
        [(solarize, 0.2, 4), (rotate, 0.8, 9)],
        [(rotate, 1.0, 7), (translate_y, 0.8, 9)],
        [(solarize, 0.8, 4)],
        [(shear_y, 0.8, 0), (color, 0.6, 4)],
        [(color, 1.0, 0), (rotate, 0.6, 2)],
        [(equalize, 0.8, None)],
        [(equalize, 1.0, None), (auto_contrast, 0.6, None)],
        [(shear_y, 0.4, 7), (solarize_add, 0.6, 7)],
        [(posterize, 0.8, 2), (solarize, 0.6, 10)],
        [(solarize, 0.6, 8), (equalize, 0.6, None)],
        [(color, 0.8, 6), (rotate, 0.4, 5)],
    ])


def get_reduced_cifar10_policy(use_shape: bool = False, max_translate_abs: Optional[int] = None,
                               max_translate_rel: Optional[float] = None) -> Policy:
    """AutoAugment's reduced CIFAR-10 policy (arguments as get_image_net_policy's)."""
    translate_x, translate_y = _get_translations(use_shape, 250, 1.0, max_translate_abs,
                                                 max_translate_rel)
    shear_y = a.shear_y.augmentation((0, 0.3), True)
    rotate = a.rotate.augmentation((0, 30), True)
    brightness = a.brightness.augmentation((0.1, 1.9), False, None)
    color = a.color.augmentation((0.1, 1.9), False, None)
    contrast = a.contrast.augmentation((0.1, 1.9), False, None)
    sharpness = a.sharpness.augmentation((0.1, 1.9), False, a.sharpness_kernel_shifted)
    posterize = a.posterize.augmentation((0, 4), False, a.poster_mask_uint8)
    solarize = a.solarize.augmentation((0, 256), False)
    invert, equalize, auto_contrast = a.invert, a.equalize, a.auto_contrast
    return Policy(name="ReducedCifar10Policy", num_magnitude_bins=11, sub_policies=[
        [(invert, 0.1, None), (contrast, 0.2, 6)],
        [(rotate, 0.7, 2), (translate_x, 0.3, 9)],
        [(sharpness, 0.8, 1), (sharpness, 0.9, 3)],
        [(shear_y, 0.5, 8), (translate_y, 0.7, 9)],
        [(auto_contrast, 0.5, None), (equalize, 0.9, None)],
        [(shear_y, 0.2, 7), (posterize, 0.3, 7)],
        [(color, 0.4, 3), (brightness, 0.6, 7)],
        [(sharpness, 0.3, 9), (brightness, 0.7, 9)],
        [(equalize, 0.6, None), (equalize, 0.5, None)],
        [(contrast, 0.6, 7), (sharpness, 0.6, 5)],
        [(color, 0.7, 7), (translate_x, 0.5, 8)],
        [(equalize, 0.3, None), (auto_contrast, 0.4, None)],
        [(translate_y, 0.4, 3), (sharpness, 0.2, 6)],
        [(brightness, 0.9, 6), (color, 0.2, 8)],
        [(solarize, 0.5, 2)],
        [(equalize, 0.2, None), (auto_contrast, 0.6, None)],
        [(equalize, 0.2, None), (equalize, 0.6, None)],
        [(color, 0.9, 9), (equalize, 0.6, None)],
        [(auto_contrast, 0.8, None), (solarize, 0.2, 8)],
        [(brightness, 0.1, 3), (color, 0.7, 0)],
        [(solarize, 0.4, 5), (auto_contrast, 0.9, None)],
        [(translate_y, 0.9, 9), (translate_y, 0.7, 9)],
        [(auto_contrast, 0.9, None), (solarize, 0.8, 3)],
        [(equalize, 0.8, None), (invert, 0.1, None)],
        [(translate_y, 0.7, 9), (auto_contrast, 0.9, None)],
    ])


def get_svhn_policy(use_shape: bool = False, max_translate_abs: Optional[int] = None,
                    max_translate_rel: Optional[float] = None) -> Policy:
    """AutoAugment's SVHN policy (arguments as get_image_net_policy's)."""
    translate_x, translate_y = _get_translations(use_shape, 250, 1.0, max_translate_abs,
                                                 max_translate_rel)
    shear_x = a.shear_x.augmentation((0, 0.3), True)
    shear_y = a.shear_y.augmentation((0, 0.3), True)
    rotate = a.rotate.augmentation((0, 30), True)
    contrast = a.contrast.augmentation((0.1, 1.9), False, None)
    solarize = a.solarize.augmentation((0, 256), False)
    invert, equalize, auto_contrast = a.invert, a.equalize, a.auto_contrast
    return Policy(name="SvhnPolicy", num_magnitude_bins=11, sub_policies=[
        [(shear_x, 0.9, 4), (invert, 0.2, None)],
        [(shear_y, 0.9, 8), (invert, 0.7, None)],
        [(equalize, 0.6, None), (solarize, 0.6, 6)],
        [(invert, 0.9, None), (equalize, 0.6, None)],
        [(equalize, 0.6, None), (rotate, 0.9, 3)],
        [(shear_x, 0.9, 4), (auto_contrast, 0.8, None)],
        [(shear_y, 0.9, 8), (invert, 0.4, None)],
        [(shear_y, 0.9, 5), (solarize, 0.2, 6)],
        [(invert, 0.9, None), (auto_contrast, 0.8, None)],
        [(equalize, 0.6, None), (rotate, 0.9, 3)],
        [(shear_x, 0.9, 4), (solarize, 0.3, 3)],
        [(shear_y, 0.8, 8), (invert, 0.7, None)],
        [(equalize, 0.9, None), (translate_y, 0.6, 6)],
        [(invert, 0.9, None), (equalize, 0.6, None)],
        [(contrast, 0.3, 3), (rotate, 0.8, 4)],
        [(invert, 0.8, None)],
        [(shear_y, 0.7, 6), (solarize, 0.4, 8)],
        [(invert, 0.6, None), (rotate, 0.8, 4)],
        [(shear_y, 0.3, 7), (translate_x, 0.9, 3)],
        [(shear_x, 0.1, 6), (invert, 0.6, None)],
        [(solarize, 0.7, 2), (translate_y, 0.6, 7)],
        [(shear_y, 0.8, 4), (invert, 0.8, None)],
        [(shear_x, 0.7, 9), (translate_y, 0.8, 3)],
        [(shear_y, 0.8, 5), (auto_contrast, 0.7, None)],
        [(shear_x, 0.7, 2), (invert, 0.1, None)],
    ])


def get_reduced_image_net_policy() -> Policy:
    """AutoAugment's reduced ImageNet policy (no translations, so no shape arguments)."""
    shear_x = a.shear_x.augmentation((0, 0.3), True)
    rotate = a.rotate.augmentation((0, 30), True)
    color = a.color.augmentation((0.1, 1.9), False, None)
    contrast = a.contrast.augmentation((0.1, 1.9), False, None)
    sharpness = a.sharpness.augmentation((0.1, 1.9), False, a.sharpness_kernel_shifted)
    posterize = a.posterize.augmentation((0, 4), False, a.poster_mask_uint8)
    solarize = a.solarize.augmentation((0, 256), False)
    invert, equalize, auto_contrast = a.invert, a.equalize, a.auto_contrast
    return Policy(name="ReducedImageNetPolicy", num_magnitude_bins=11, sub_policies=[
        [(posterize, 0.4, 8), (rotate, 0.6, 9)],
        [(solarize, 0.6, 5), (auto_contrast, 0.6, None)],
        [(equalize, 0.8, None), (equalize, 0.6, None)],
        [(posterize, 0.6, 7), (posterize, 0.6, 6)],
        [(equalize, 0.4, None), (solarize, 0.2, 4)],
        [(equalize, 0.4, None), (rotate, 0.8, 8)],
        [(solarize, 0.6, 3), (equalize, 0.6, None)],
        [(posterize, 0.8, 5), (equalize, 1.0, None)],
        [(rotate, 0.2, 3), (solarize, 0.6, 8)],
        [(equalize, 0.6, None), (posterize, 0.4, 6)],
        [(rotate, 0.8, 8), (color, 0.4, 0)],
        [(rotate, 0.4, 9), (equalize, 0.6, None)],
        [(equalize, 0.8, None)],
        [(invert, 0.6, None), (equalize, 1.0, None)],
        [(color, 0.6, 4), (contrast, 1.0, 8)],
        [(rotate, 0.8, 8), (color, 1.0, 2)],
        [(color, 0.8, 8), (solarize, 0.8, 7)],
        [(sharpness, 0.4, 7), (invert, 0.6, None)],
        [(shear_x, 0.6, 5), (equalize, 1.0, None)],
        [(color, 0.4, 0), (equalize, 0.6, None)],
        [(equalize, 0.4, None), (solarize, 0.2, 4)],
        [(solarize, 0.6, 5), (auto_contrast, 0.6, None)],
        [(invert, 0.6, None), (equalize, 1.0, None)],
        [(color, 0.6, 4), (contrast, 1.0, 8)],
        [(equalize, 0.8, None), (equalize, 0.6, None)],
    ])


def _stage_table(policy, value, fill, dtype):
    """A (sub-policies x stages) table of value(step), `fill` past a sub-policy's end."""
    num_stages = max(len(sub_policy) for sub_policy in policy.sub_policies)
    table = np.full((len(policy.sub_policies), num_stages), fill, dtype=dtype)
    for k, sub_policy in enumerate(policy.sub_policies):
        for stage, step in enumerate(sub_policy):
            table[k, stage] = value(step)
    return table


def _sub_policy_to_probability_map(policy: Policy) -> _DataNode:
    """Per sub-policy and stage, the probability of running it (0 past the sub-policy's end)."""
    return types.Constant(_stage_table(policy, lambda step: step[1], 0.0, np.float32))


def _sub_policy_to_magnitude_bin_map(policy: Policy) -> _DataNode:
    """Per sub-policy and stage, the magnitude bin (-999 where there is none: never read)."""
    return types.Constant(_stage_table(
        policy, lambda step: -999 if step[2] is None else step[2], 0, np.int32))


def _sub_policy_to_augmentation_matrix_map(
        policy: Policy) -> Tuple[np.ndarray, List[List[_Augmentation]]]:
    """Per stage, the distinct augmentations used there (in order of first use) followed by
    identity; and the (sub-policies x stages) table of indices into those lists (identity past
    a sub-policy's end)."""
    num_stages = max(len(sub_policy) for sub_policy in policy.sub_policies)
    per_stage = []
    for stage in range(num_stages):
        used = []
        for sub_policy in policy.sub_policies:
            if stage < len(sub_policy) and sub_policy[stage][0] not in used:
                used.append(sub_policy[stage][0])
        per_stage.append(used + [a.identity])
    table = np.array([[len(per_stage[stage]) - 1 for stage in range(num_stages)]
                      for _ in policy.sub_policies], dtype=np.int32)
    for k, sub_policy in enumerate(policy.sub_policies):
        for stage, (aug, _, _) in enumerate(sub_policy):
            table[k, stage] = per_stage[stage].index(aug)
    return table, per_stage


def _sub_policy_to_augmentation_map(policy: Policy) -> Tuple[_DataNode, List[List[_Augmentation]]]:
    table, per_stage = _sub_policy_to_augmentation_matrix_map(policy)
    return types.Constant(table), per_stage
