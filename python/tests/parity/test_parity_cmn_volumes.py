"""crop_mirror_normalize against DALI 2.4 beyond HWC images: volumes (DHWC, CDHW) and clips
(CFHW) with any output_layout that permutes the input's, out_of_bounds_policy (pad with the
fill written raw, per output channel with pad_output; trim_to_shape), mean and std given per
sample, and DALI's input types (int16, uint16, int32, float16). Within float32 rounding on the
CPU (the arithmetic order differs: stoker computes (in - mean) * (scale / std) + shift); the GPU
backend against DALI's."""

import re

import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_like_dali, dali, run

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)


def _volume(d, h, w, c, seed):
    z, y, x, k = np.meshgrid(np.arange(d), np.arange(h), np.arange(w), np.arange(c),
                             indexing="ij")
    return ((z * 53 + y * 17 + x * 5 + k * 101 + seed) % 251).astype(np.uint8)


DHWC = [_volume(5 + k, 6 + 2 * k, 7 + k, 3, k) for k in range(3)]
DATA = {
    "DHWC": DHWC,
    "CDHW": [np.ascontiguousarray(v.transpose(3, 0, 1, 2)) for v in DHWC],
    "CFHW": [np.ascontiguousarray(v.transpose(3, 0, 1, 2)) for v in DHWC],  # depth as frames
    "HWC": [v[0] for v in DHWC],
    "CHW": [np.ascontiguousarray(v[0].transpose(2, 0, 1)) for v in DHWC],
    "": DHWC,  # 4-D without a layout: DHWC
}
_ON_GPU = [False]


def _place(on_gpu):
    _ON_GPU[0] = on_gpu


def _feed(fn, layout, dtype=np.uint8):
    data = [a.astype(dtype) for a in DATA[layout]]
    kw = {"layout": layout} if layout else {}
    x = fn.external_source(source=lambda: [a.copy() for a in data], batch=True, **kw)
    return x.gpu() if _ON_GPU[0] else x


def _per_sample(fn, values):
    return fn.external_source(source=lambda: [np.array(v, np.float32) for v in values],
                              batch=True)


MEAN, STD = [10.0, 20.0, 30.0], [2.0, 4.0, 8.0]
_CASES = [
    ("DHWC", dict(output_layout="DHWC")),
    ("DHWC", dict(output_layout="CDHW", crop=(2, 3, 4), crop_pos_z=0.2, mean=MEAN, std=STD)),
    ("DHWC", dict(output_layout="HWDC", mirror=1, crop=(3, 5))),
    ("DHWC", dict(output_layout="", crop_d=2, crop_h=3, crop_w=2, crop_pos_x=1.0, scale=2.0,
                  shift=-5.0, dtype="int8")),
    ("CDHW", dict(output_layout="DHWC", crop=(1, 2, 2), mirror=1)),
    ("CDHW", dict(output_layout="CDHW", crop=(9, 4, 11), out_of_bounds_policy="pad",
                  fill_values=(7, 8, 9), mean=MEAN, std=STD)),
    ("", dict(output_layout="", crop=(3, 4, 5), dtype="float16")),
    ("CFHW", dict(output_layout="", crop=(4, 4), mirror=1)),
    ("CFHW", dict(output_layout="FCHW", crop=(4, 4), mean=MEAN, std=STD)),
    ("CFHW", dict(output_layout="FHWC", crop=(3, 5), crop_pos_y=0.0)),
    ("CFHW", dict(output_layout="CFHW", crop=(3, 5), crop_pos_y=0.0, dtype="float16")),
    ("DHWC", dict(output_layout="DHWC", crop=(9, 2, 12), out_of_bounds_policy="trim_to_shape")),
    ("DHWC", dict(output_layout="DHWC", crop=(7, 9, 3), out_of_bounds_policy="pad",
                  fill_values=200.7, dtype="uint8")),
    # Images: a window outside (raw fill, per output channel with pad_output), trimmed.
    ("HWC", dict(crop=(9, 12), out_of_bounds_policy="pad", fill_values=-2.5, dtype="int8",
                 mean=MEAN, std=STD)),
    ("HWC", dict(output_layout="HWC", crop=(9, 12), crop_pos_x=0.1, out_of_bounds_policy="pad",
                 fill_values=(1, 2, 3, 4), pad_output=True, mirror=1)),
    ("HWC", dict(crop=(5, 5), out_of_bounds_policy="pad", fill_values=9, pad_output=True,
                 mean=5.0, std=2.0, scale=3.0, shift=1.0)),
    ("HWC", dict(crop=(30, 3), out_of_bounds_policy="trim_to_shape", pad_output=True)),
    ("CHW", dict(output_layout="CHW", crop=(9, 12), out_of_bounds_policy="constant",
                 fill_values=(50, 60, 70), mirror=1)),
]
_TYPES = ["int16", "uint16", "int32", "float16"]


def _args(kw, types):
    args = dict(kw)
    if "dtype" in args:
        args["dtype"] = getattr(types, args["dtype"].upper())
    return args


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("case", _CASES, ids=[f"{l or 'none'}-{kw}" for l, kw in _CASES])
def test_like_dali(case, device):
    layout, kw = case
    assert_like_dali(lambda fn, t: fn.crop_mirror_normalize(_feed(fn, layout), **_args(kw, t)),
                     len(DHWC), device, 1e-4, 0, f"cmn {layout} {kw}", _place)


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("dtype", _TYPES)
@pytest.mark.parametrize("layout", ["HWC", "DHWC"])
def test_dalis_input_types(layout, dtype, device):
    assert_like_dali(lambda fn, t: fn.crop_mirror_normalize(
        _feed(fn, layout, np.dtype(dtype)), output_layout="", crop=(3, 4), mean=MEAN, std=STD,
        mirror=1), len(DHWC), device, 1e-4, 0, f"cmn {layout} {dtype}", _place)


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("layout", ["HWC", "CDHW"])
def test_mean_and_std_per_sample(layout, device):
    # DALI wants the same count in every sample (stoker takes one or per channel in each).
    means = [[1.0, 2.0, 3.0], [40.0, 0.0, -3.0], [7.0, 8.0, 9.0]]
    stds = [[2.0, 2.0, 1.0], [3.0, 5.0, 7.0], [0.5, 0.25, 4.0]]
    assert_like_dali(lambda fn, t: fn.crop_mirror_normalize(
        _feed(fn, layout), output_layout="", crop=(3, 4), mean=_per_sample(fn, means),
        std=_per_sample(fn, stds)), len(DHWC), device, 1e-4, 0, f"cmn {layout} per sample",
        _place)


@pytest.mark.parametrize("layout,kw,match", [
    ("DHWC", dict(), "output_layout 'CHW' is not a permutation of the input's layout 'DHWC'"),
    ("HWC", dict(crop=(30, 3)), "crop_mirror_normalize: the window \\[-12, 18\\) on axis H"),
    ("HWC", dict(crop=(9, 9), out_of_bounds_policy="pad", fill_values=(1, 2)),
     "fill_values needs 1 or 3 values \\(one per output channel\\), got 2"),
    ("HWC", dict(crop=(9, 9), out_of_bounds_policy="pad", fill_values=(1, 2, 3),
                 pad_output=True), "fill_values needs 1 or 4 values"),
    ("HWC", dict(mean=[1.0, 2.0], std=[1.0, 2.0, 3.0]),
     "mean and std must have the same size, or one of them a single value"),
    ("HWC", dict(mean=[1.0, 2.0]), "mean and std need 1 or 3 values"),
    ("HWC", dict(out_of_bounds_policy="reflect_101"),
     "out_of_bounds_policy must be 'error', 'pad' \\(or 'constant'\\) or 'trim_to_shape'"),
])
def test_bad_arguments_fail_in_both(layout, kw, match):
    for lib in ("stoker", "dali"):
        with pytest.raises(Exception) as err:
            run(lib, lambda fn, t: fn.crop_mirror_normalize(_feed(fn, layout), **kw), len(DHWC))
        if lib == "stoker":
            assert re.search(match, str(err.value)), str(err.value)


def test_int8_input_fails_in_both():
    for lib in ("stoker", "dali"):
        with pytest.raises(Exception) as err:
            run(lib, lambda fn, t: fn.crop_mirror_normalize(_feed(fn, "HWC", np.int8)),
                len(DHWC))
        if lib == "stoker":
            assert "crop_mirror_normalize input" in str(err.value), str(err.value)
