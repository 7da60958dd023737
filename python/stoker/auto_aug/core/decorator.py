"""The ``@augmentation`` decorator."""

from typing import Callable, Optional, Tuple, Type, Union

import numpy as np
from numpy import typing as npt

from stoker.auto_aug.core._augmentation import Augmentation
from stoker.node import DataNode as _DataNode


def augmentation(function: Optional[Callable[..., _DataNode]] = None, *,
                 mag_range: Optional[Union[Tuple[float, float], np.ndarray]] = None,
                 randomly_negate: Optional[bool] = None,
                 mag_to_param: Optional[Callable[[float], npt.ArrayLike]] = None,
                 param_device: Optional[str] = None, name: Optional[str] = None,
                 augmentation_cls: Optional[Type[Augmentation]] = None):
    """Makes `function(samples, parameter, **extra)`, written with stoker operators, an
    augmentation for AutoAugment, RandAugment and TrivialAugment (DALI's decorator, same
    arguments). The decorated augmentation takes the samples and `magnitude_bin`,
    `num_magnitude_bins` instead of the parameter, which is
    `mag_to_param(magnitudes[magnitude_bin] * (-1) ** random_sign)` with
    `magnitudes = linspace(mag_range[0], mag_range[1], num_magnitude_bins)`.

    mag_range: (lo, hi), or an array of the magnitudes themselves; None: no magnitude (the
        parameter is None).
    randomly_negate: negate the magnitude for a random half of the samples.
    mag_to_param: magnitude -> parameter (numpy arrays of one shape and dtype for every
        magnitude; the parameters are precomputed into one constant).
    param_device: "cpu" (default), "gpu", or "auto" (where the samples are).
    name: the augmentation's name (default: the function's)."""

    def decorate(func):
        return (augmentation_cls or Augmentation)(
            func, mag_range=mag_range, mag_to_param=mag_to_param,
            randomly_negate=randomly_negate, param_device=param_device, name=name)

    if function is None:
        return decorate
    if not callable(function):
        raise Exception(f"The `@augmentation` decorator was used to decorate the object that "
                        f"is not callable: {function}.")
    if isinstance(function, Augmentation):
        raise Exception(
            f"The `@augmentation` was applied to already decorated Augmentation. "
            f"Please call `{function.name}.augmentation` method to modify the augmentation "
            f"setup or apply the decorator to the underlying `{function.name}.op` directly.\n"
            f"Error in augmentation: {function}.")
    return decorate(function)
