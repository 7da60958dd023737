"""The building blocks of automatic augmentations (DALI's ``nvidia.dali.auto_aug.core``): the
``@augmentation`` decorator, ``Policy``, ``select`` and ``signed_bin``."""

from stoker.auto_aug.core._augmentation import Augmentation as _Augmentation
from stoker.auto_aug.core._augmentation import signed_bin
from stoker.auto_aug.core._select import select
from stoker.auto_aug.core.decorator import augmentation
from stoker.auto_aug.core.policy import Policy

__all__ = ("signed_bin", "augmentation", "select", "Policy", "_Augmentation")
