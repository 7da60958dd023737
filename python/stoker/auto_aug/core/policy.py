"""Policy: AutoAugment's sub-policies (sequences of (augmentation, probability, magnitude bin))."""

import warnings
from typing import Optional, Sequence, Tuple

from stoker.auto_aug.core._args import check_num_magnitude_bins
from stoker.auto_aug.core._augmentation import Augmentation


class Policy:
    def __init__(self, name: str, num_magnitude_bins: int,
                 sub_policies: Sequence[Sequence[Tuple[Augmentation, float, Optional[int]]]]):
        """An AutoAugment policy (https://arxiv.org/abs/1805.09501).

        name: for presentation.
        num_magnitude_bins: how many bins the augmentations' magnitude ranges are divided into.
        sub_policies: sequences of (augmentation, probability, magnitude_bin). Each sample gets
            one sequence, chosen uniformly; each of its steps runs with its probability, with
            its magnitude bin (None for augmentations without a magnitude)."""
        self.name = name
        self.num_magnitude_bins = num_magnitude_bins
        check_num_magnitude_bins(num_magnitude_bins)
        if not isinstance(sub_policies, (list, tuple)):
            raise Exception(f"The `sub_policies` must be a list or tuple of sub policies, "
                            f"got {type(sub_policies)}.")
        for sub_policy in sub_policies:
            if not isinstance(sub_policy, (list, tuple)):
                raise Exception(f"Each sub policy must be a list or tuple, got {sub_policy}.")
            for step in sub_policy:
                self._check_step(step)
        self.sub_policies = _sub_policy_with_unique_names(sub_policies)

    def _check_step(self, step):
        name, bins = self.name, self.num_magnitude_bins
        if not isinstance(step, (list, tuple)) or len(step) != 3:
            raise Exception(f"Each operation in sub policy must be specified as a triple: "
                            f"(augmentation, probability, magnitude). Got {step}.")
        aug, p, mag = step
        if not isinstance(aug, Augmentation):
            raise Exception(f"Each augmentation in sub policies must be an instance of "
                            f"Augmentation. Got `{aug}`. Did you forget to use `@augmentation` "
                            f"decorator?")
        if not isinstance(p, (float, int)) or not 0 <= p <= 1:
            raise Exception(f"Probability of applying the augmentation must be a number from "
                            f"`[0, 1]` range. Got `{p}` for augmentation `{aug.name}`.")
        if p == 0:
            warnings.warn(f"The augmentation `{aug.name}` in policy `{name}` is used with "
                          f"probability 0 in one of the sub-policies.")
        if mag is None:
            if aug.mag_range is not None:
                raise Exception(
                    f"The augmentation `{aug.name}` has `mag_range` specified, so the "
                    f"magnitude bin is required. However, got `None` in the policy `{name}`.")
            return
        if aug.mag_range is None:
            warnings.warn(
                f"The magnitude bin `{mag}` for augmentation `{aug.name}` in policy `{name}` "
                f"will be ignored. The augmentation does not accept magnitudes (as it has no "
                f"`mag_range` specified). You can specify `None` instead of `{mag}` to silence "
                f"this warning.")
        if not isinstance(mag, int) or not 0 <= mag < bins:
            raise Exception(f"Magnitude of the augmentation must be an integer from "
                            f"`[0, {bins - 1}]` range. Got `{mag}` for augmentation "
                            f"`{aug.name}`.")

    @property
    def augmentations(self):
        """{name: augmentation} of the augmentations the policy uses, by name."""
        unique = {aug for sub_policy in self.sub_policies for aug, _, _ in sub_policy}
        return {aug.name: aug for aug in sorted(unique, key=lambda aug: aug.name)}

    def __repr__(self):
        subs = ",\n\t".join(repr([(aug.name, p, mag) for aug, p, mag in sub_policy])
                            for sub_policy in self.sub_policies)
        augs = ",\n\t".join(f"'{name}': {aug!r}" for name, aug in self.augmentations.items())
        return (f"Policy(name={self.name!r}, num_magnitude_bins={self.num_magnitude_bins!r}, "
                f"sub_policies=[{'' if not subs else chr(10) + chr(9)}{subs}], "
                f"augmentations={{{'' if not augs else chr(10) + chr(9)}{augs}}})")


def _sub_policy_with_unique_names(sub_policies):
    """The sub-policies as tuples; where two different augmentations share a name, every
    augmentation is renamed "<k>__<name>" (k in order of first use, zero-padded) so that the
    presentation is unambiguous."""
    in_order = []
    for sub_policy in sub_policies:
        for aug, _, _ in sub_policy:
            if aug not in in_order:
                in_order.append(aug)
    if len({aug.name for aug in in_order}) == len(in_order):
        return tuple(tuple(sub_policy) for sub_policy in sub_policies)
    digits = len(str(len(in_order) - 1))
    renamed = {aug: aug.augmentation(name=f"{str(k).zfill(digits)}__{aug.name}")
               for k, aug in enumerate(in_order)}
    return tuple(tuple((renamed[aug], p, mag) for aug, p, mag in sub_policy)
                 for sub_policy in sub_policies)
