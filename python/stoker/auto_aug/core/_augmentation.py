"""The Augmentation wrapper behind ``@augmentation``: it turns a magnitude bin into the
transformation's parameter (precomputed for every bin as one constant, picked per sample by
indexing), optionally negated at random per sample, and calls the transformation."""

import warnings
from typing import Callable, Optional, Tuple, Union

import numpy as np
from numpy import typing as npt

from stoker import fn, types
from stoker.auto_aug.core._args import (
    MissingArgException,
    filter_extra_accepted_kwargs,
    get_missing_kwargs,
    get_num_positional_args,
)
from stoker.node import DataNode as _DataNode


class _UndefinedParam:
    """Default of Augmentation.augmentation()'s arguments: "keep the current setting" (None is
    a setting of its own)."""


def _device_of(data):
    return "gpu" if isinstance(data, _DataNode) and data._on_gpu() else "cpu"


class _SignedMagnitudeBin:
    """A magnitude bin together with a random sign per sample (1: negate the magnitude).

    `signed_magnitude_idx` = 2 * bin + sign indexes the table of signed parameters
    [p(m0), p(-m0), p(m1), p(-m1), ...]; it is computed where the bin is made (before any
    conditional split), so that every branch reads the split value instead of recomputing it."""

    def __init__(self, magnitude_bin, random_sign, signed_magnitude_idx):
        self._magnitude_bin = magnitude_bin
        self._random_sign = random_sign
        self._signed_magnitude_idx = signed_magnitude_idx

    def __getitem__(self, idx: int):
        """The bin of stage `idx` when bins and signs were drawn for several stages at once."""
        mag = self._magnitude_bin
        mag = mag if isinstance(mag, int) else mag[idx]
        return type(self)(mag, self._random_sign[idx], self._signed_magnitude_idx[idx])

    @classmethod
    def create_from_bin(cls, magnitude_bin, random_sign=None, seed=None, shape=None):
        if not isinstance(magnitude_bin, (int, _DataNode)):
            raise Exception(
                f"The `magnitude_bin` must be an int or _DataNode (output of DALI op "
                f"or `types.Constant`) representing batch of ints from "
                f"`[0..num_magnitude_bins-1]` range. Got {magnitude_bin} instead.")
        if random_sign is not None and (seed is not None or shape is not None):
            raise Exception(
                "The `random_sign` cannot be specified together with neither `seed` nor `shape`.")
        if random_sign is None:
            random_sign = fn.random.uniform(values=[0, 1], dtype=types.INT32, seed=seed,
                                            shape=shape)
        return cls(magnitude_bin, random_sign, 2 * magnitude_bin + random_sign)

    @staticmethod
    def _remap_to_signed_magnitudes(magnitudes):
        """[m0, -m0, m1, -m1, ...]: entry 2 * bin + sign."""
        signed = []
        for m in magnitudes:
            signed += [m, -m]
        return np.array(signed)

    @property
    def bin(self):
        return self._magnitude_bin

    @property
    def random_sign(self):
        return self._random_sign

    @property
    def signed_magnitude_idx(self):
        return self._signed_magnitude_idx


def signed_bin(magnitude_bin: Union[int, _DataNode], random_sign: Optional[_DataNode] = None,
               seed: Optional[int] = None, shape: Optional[Tuple] = None) -> _SignedMagnitudeBin:
    """`magnitude_bin` (an int, or a batch of ints in [0, num_magnitude_bins - 1]) with a random
    sign per sample (`random_sign`, a batch of 0/1, drawn when not given): augmentations
    declared with ``randomly_negate=True`` negate their magnitude where the sign is 1. Make it
    before splitting the batch between augmentations (``select``), so the sign is drawn once
    for the whole batch."""
    return _SignedMagnitudeBin.create_from_bin(magnitude_bin, random_sign, seed, shape)


class Augmentation:
    """A transformation made of stoker operators, usable by the automatic augmentations. Made
    with the ``@augmentation`` decorator rather than directly."""

    def __init__(self, op: Callable[..., _DataNode],
                 mag_range: Optional[Union[Tuple[float, float], np.ndarray]] = None,
                 randomly_negate: Optional[bool] = None,
                 mag_to_param: Optional[Callable[[float], npt.ArrayLike]] = None,
                 param_device: Optional[str] = None, name: Optional[str] = None):
        self._op = op
        self._mag_range = mag_range
        self._randomly_negate = randomly_negate
        self._mag_to_param = mag_to_param
        self._param_device = param_device
        self._name = name
        if get_num_positional_args(op) <= 1:
            raise Exception(
                f"The {op} accepts {get_num_positional_args(op)} positional argument(s), "
                f"but the functions decorated with `@augmentation` must accept at least two "
                f"positional arguments: the samples and parameters.\nError in: {self}.")

    def __repr__(self):
        params = [f"{k}={v!r}" for k, v in self._get_config().items() if v is not None]
        return f"Augmentation({', '.join([repr(self.op)] + params)})"

    def __call__(self, data: _DataNode, *,
                 magnitude_bin: Optional[Union[int, _DataNode, _SignedMagnitudeBin]] = None,
                 num_magnitude_bins: Optional[int] = None, **kwargs) -> _DataNode:
        """`self.op(data, param, **kwargs)` with
        `param = mag_to_param(magnitudes[magnitude_bin] * (-1) ** random_sign)`, where
        `magnitudes = linspace(mag_range[0], mag_range[1], num_magnitude_bins)` (or `mag_range`
        itself when it is an array). Of `kwargs`, only the names the op takes are passed."""
        param = self._get_param(magnitude_bin, num_magnitude_bins,
                                self._infer_param_device(data))
        op_kwargs = filter_extra_accepted_kwargs(self.op, kwargs, 2)
        missing = get_missing_kwargs(self.op, kwargs, 2)
        if missing:
            raise MissingArgException(
                f"The augmentation `{self.name}` requires following named argument(s) "
                f"which were not provided to the call: {', '.join(missing)}. "
                f"Please make sure to pass the required arguments when calling the "
                f"augmentation.", augmentation=self, missing_args=missing)
        return self.op(data, param, **op_kwargs)

    @property
    def op(self):
        return self._op

    @property
    def mag_range(self):
        return self._mag_range

    @property
    def mag_to_param(self):
        return self._mag_to_param or _np_wrap

    @property
    def randomly_negate(self):
        return self._randomly_negate or False

    @property
    def param_device(self):
        return self._param_device or "cpu"

    @property
    def name(self):
        return self._name or self.op.__name__

    def augmentation(self, mag_range=_UndefinedParam, randomly_negate=_UndefinedParam,
                     mag_to_param=_UndefinedParam, param_device=_UndefinedParam,
                     name=_UndefinedParam, augmentation_cls=None):
        """A new augmentation of the same op with the settings given here replaced (the others
        kept)."""
        config = self._get_config()
        updates = dict(mag_range=mag_range, randomly_negate=randomly_negate,
                       mag_to_param=mag_to_param, param_device=param_device, name=name)
        config.update({k: v for k, v in updates.items() if v is not _UndefinedParam})
        return (augmentation_cls or type(self))(self.op, **config)

    def _get_config(self):
        return {"mag_range": self._mag_range, "mag_to_param": self._mag_to_param,
                "randomly_negate": self._randomly_negate, "param_device": self._param_device,
                "name": self._name}

    def _infer_param_device(self, sample):
        if self.param_device != "auto":
            return self.param_device
        return _device_of(sample)

    def _has_custom_magnitudes(self):
        return isinstance(self.mag_range, np.ndarray)

    def _map_mag_to_param(self, magnitude):
        param = self.mag_to_param(magnitude)
        if _contains_data_node(param):
            raise Exception(
                f"The `mag_to_param` callback of `{self.name}` augmentation returned `DataNode`, "
                f"i.e. an output of a pipeline operator, which is not supported there. "
                f"Instead, the `mag_to_param` callback must return parameter that is `np.ndarray` "
                f"or is directly convertible to `np.ndarray`, so that the all parameters can "
                f"be precomputed and reused across iterations.\n\n"
                f"You can move the operators from `mag_to_param` callback to the "
                f"decorated augmentation code.\n\nError in augmentation: {self}.")
        return np.array(param)

    def _map_mags_to_params(self, magnitudes):
        params = [self._map_mag_to_param(m) for m in magnitudes]
        for param, mag in zip(params[1:], magnitudes[1:]):
            if param.shape != params[0].shape or param.dtype != params[0].dtype:
                raise Exception(
                    f"The `mag_to_param` callback of `{self.name}` augmentation must return "
                    f"the arrays of the same type and shape for different magnitudes. "
                    f"Got param of shape {params[0].shape} and {params[0].dtype} type for "
                    f"magnitude {magnitudes[0]}, but for magnitude {mag} the returned array "
                    f"has shape {param.shape} and type {param.dtype}.\n\n"
                    f"Error in augmentation: {self}.")
        return np.array(params)

    def _get_magnitudes(self, num_magnitude_bins):
        mag_range = self.mag_range
        if mag_range is None:
            return None
        if self._has_custom_magnitudes():
            if num_magnitude_bins is not None and len(mag_range) != num_magnitude_bins:
                raise Exception(
                    f"The augmentation `{self.name}` has nd.array of length {len(mag_range)} "
                    f"specified as the `mag_range`. However, the `num_magnitude_bins` "
                    f"passed to the call is {num_magnitude_bins}.")
            return mag_range
        if num_magnitude_bins is None:
            raise Exception(
                f"The `num_magnitude_bins` argument is missing in the call of "
                f"the `{self.name}` augmentation. Please specify the `num_magnitude_bins` "
                f"along with the samples and magnitude_bin.\nError in augmentation: {self}.")
        if not hasattr(mag_range, "__len__") or len(mag_range) != 2:
            raise Exception(
                f"The `mag_range` must be a tuple of (low, high) ends of magnitude range or "
                f"nd.array of explicitly defined magnitudes. Got `{self.mag_range}` for "
                f"augmentation `{self.name}`.")
        lo, hi = mag_range
        return np.linspace(lo, hi, num_magnitude_bins, dtype=np.float32)

    def _get_param(self, magnitude_bin, num_magnitude_bins, param_device):
        magnitudes = self._get_magnitudes(num_magnitude_bins)
        if magnitudes is None:
            return None  # the augmentation takes no magnitude
        if magnitude_bin is None:
            raise Exception(
                f"The augmentation `{self.name}` has `mag_range` specified, "
                f"so when called, it requires `magnitude_bin` parameter to select "
                f"the magnitude from the `mag_range`.\nError in augmentation: {self}.")
        if self.randomly_negate and not isinstance(magnitude_bin, _SignedMagnitudeBin):
            magnitude_bin = signed_bin(magnitude_bin)
            warnings.warn(
                f"The augmentation `{self.name}` was declared with `random_negate=True`, "
                f"but unsigned `magnitude_bin` was passed to the augmentation call. "
                f"The augmentation will randomly negate the magnitudes manually. "
                f"However, for better performance, if you conditionally split batch "
                f"between multiple augmentations, it is better to call "
                f"`signed_magnitude_bin = signed_bin(magnitude_bin)` before the split "
                f"and pass the signed bins instead.", Warning)
        if self.randomly_negate:
            if isinstance(magnitude_bin.bin, int):
                # one magnitude: the table is [p(m), p(-m)], picked by the sign
                magnitudes = [magnitudes[magnitude_bin.bin]]
                index = magnitude_bin.random_sign
            else:
                index = magnitude_bin.signed_magnitude_idx
            signed = _SignedMagnitudeBin._remap_to_signed_magnitudes(magnitudes)
            table = types.Constant(self._map_mags_to_params(signed), device=param_device)
            return table[index]
        # Signs drawn for other augmentations of the suite are not used here.
        index = magnitude_bin.bin if isinstance(magnitude_bin, _SignedMagnitudeBin) \
            else magnitude_bin
        if isinstance(index, int):
            return types.Constant(self._map_mag_to_param(magnitudes[index]), device=param_device)
        table = types.Constant(self._map_mags_to_params(magnitudes), device=param_device)
        return table[index]


def _np_wrap(mag):
    return np.array(mag)


def _contains_data_node(obj):
    if isinstance(obj, (tuple, list)):
        return any(_contains_data_node(x) for x in obj)
    return isinstance(obj, _DataNode)
