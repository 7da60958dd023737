"""Automatic augmentations (DALI's ``nvidia.dali.auto_aug``): AutoAugment, RandAugment and
TrivialAugment Wide built from stoker's operators, with DALI 2.4's modules, names, policies,
magnitude ranges and defaults.

    from stoker.auto_aug import auto_augment, rand_augment, trivial_augment
    from stoker.auto_aug import augmentations
    from stoker.auto_aug.core import augmentation, Policy, select, signed_bin

The per-sample choice of augmentation is made with conditionals, so the pipeline must be
defined with ``pipeline_def(enable_conditionals=True)`` (as in DALI)."""
