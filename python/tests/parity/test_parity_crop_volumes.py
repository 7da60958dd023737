"""crop and flip on volumes (DHWC, CDHW), CHW images and sequences against DALI 2.4: crop's
depth (`crop` of three values, crop_d, crop_pos_z; a `crop` of two keeps the depth; images ignore
the depth), its out_of_bounds_policy names and border modes (pad with one fill value per
channel on the C axis wherever it is, trim_to_shape, edge/clamp, reflect, reflect_101, wrap),
4-D samples without a layout (DHWC for crop), and flip's `depthwise` (DHWC, CDHW, FDHWC;
nothing on images). Exact on the CPU and the GPU."""

import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_like_dali, dali

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)


def _volume(d, h, w, c, seed):
    z, y, x, k = np.meshgrid(np.arange(d), np.arange(h), np.arange(w), np.arange(c),
                             indexing="ij")
    return ((z * 53 + y * 17 + x * 5 + k * 101 + seed) % 251).astype(np.uint8)


# Ragged: every sample's depth, height and width differ.
DHWC = [_volume(5 + k, 6 + 2 * k, 7 + k, 2, k) for k in range(4)]
CDHW = [np.ascontiguousarray(v.transpose(3, 0, 1, 2)) for v in DHWC]
HWC = [v[0] for v in DHWC]
CHW = [np.ascontiguousarray(v.transpose(2, 0, 1)) for v in HWC]
FDHWC = [np.stack([v[:4, :5, :6], 255 - v[:4, :5, :6]]) for v in DHWC]
CFHW = [np.ascontiguousarray(v.transpose(3, 0, 1, 2)) for v in DHWC]  # depth as frames
DATA = {"DHWC": DHWC, "CDHW": CDHW, "HWC": HWC, "CHW": CHW, "FDHWC": FDHWC, "CFHW": CFHW,
        "": DHWC}
_ON_GPU = [False]


def _feed(fn, layout):
    data = DATA[layout]
    kw = {"layout": layout} if layout else {}
    x = fn.external_source(source=lambda: [a.copy() for a in data], batch=True, **kw)
    return x.gpu() if _ON_GPU[0] else x


def _per_sample(fn, values, dtype=np.float32):
    return fn.external_source(source=lambda: [np.array(v, dtype) for v in values], batch=True)


_CROPS = [
    ("DHWC", dict(crop=(3, 4, 5))),
    ("DHWC", dict(crop=(4, 5))),  # the depth kept
    ("DHWC", dict(crop_d=2, crop_h=3, crop_w=4)),
    ("DHWC", dict(crop_d=2, crop_h=3, crop_w=4, crop_pos_z=0.0, crop_pos_y=1.0, crop_pos_x=0.3)),
    ("DHWC", dict(crop=(2, 3, 4), crop_pos_z=0.25, rounding="truncate")),
    ("DHWC", dict(crop=(2, 0, 0))),
    ("DHWC", dict()),
    ("CDHW", dict(crop=(2, 3, 4), crop_pos_z=0.0, crop_pos_y=0.0, crop_pos_x=1.0)),
    ("CDHW", dict(crop=(4.7, 2.2))),
    ("", dict(crop=(2, 3, 4), crop_pos_z=0.7)),  # 4-D without a layout: DHWC
    ("HWC", dict(crop=(2, 3, 4))),  # an image ignores the depth
    ("HWC", dict(crop_d=2, crop_h=3, crop_w=4, crop_pos_z=0.9)),
    ("CHW", dict(crop=(3, 4), crop_pos_x=0.8)),
    ("CFHW", dict(crop=(3, 4), crop_pos_y=0.1)),  # every frame cut alike
    ("CFHW", dict(crop=(9, 12), out_of_bounds_policy="pad", fill_values=(1, 2))),
    # Outside the input: per-channel fill values on the C axis wherever it is.
    ("DHWC", dict(crop=(9, 7, 3), out_of_bounds_policy="pad", fill_values=(100, 200))),
    ("CDHW", dict(crop=(9, 7, 3), out_of_bounds_policy="pad", fill_values=(100, 200))),
    ("CHW", dict(crop=(9, 12), out_of_bounds_policy="pad", fill_values=(50, 60))),
    ("CHW", dict(crop=(9, 12), out_of_bounds_policy="constant", fill_values=7)),
    ("DHWC", dict(crop=(9, 3, 1), out_of_bounds_policy="trim_to_shape")),
    ("CDHW", dict(crop=(2, 30, 30), crop_pos_y=0.2, out_of_bounds_policy="trim_to_shape")),
    *[(layout, dict(crop=(8, 11, 13), crop_pos_z=0.2, crop_pos_x=0.7, out_of_bounds_policy=p))
      for layout in ("DHWC", "CDHW")
      for p in ("edge", "clamp", "reflect", "reflect_1001", "reflect_101", "wrap")],
    *[("HWC", dict(crop=(15, 4), crop_pos_y=0.3, out_of_bounds_policy=p))
      for p in ("clamp", "reflect_101", "wrap")],
]


def _crop_case(layout, kw):
    return lambda fn, t: fn.crop(_feed(fn, layout), **kw)


_CASES = [(f"crop-{layout or 'none'}-{'-'.join(f'{k}={v}' for k, v in kw.items()) or 'all'}",
           _crop_case(layout, kw)) for layout, kw in _CROPS]
_CASES += [
    ("crop-per-sample-pos-z", lambda fn, t: fn.crop(
        _feed(fn, "DHWC"), crop=(2, 3, 3), crop_pos_z=_per_sample(fn, [0.0, 1.0, 0.3, 0.6]))),
    ("crop-per-sample-crop", lambda fn, t: fn.crop(
        _feed(fn, "CDHW"), crop=_per_sample(fn, [(1, 2, 3), (2, 2, 2), (3.9, 4.1, 2), (4, 5, 6)]))),
    *[(f"flip-{layout}-{kw}", lambda fn, t, layout=layout, kw=kw: fn.flip(
        _feed(fn, layout), **kw))
      for layout in ("DHWC", "CDHW", "FDHWC", "HWC", "CHW")
      for kw in (dict(horizontal=0, depthwise=1), dict(horizontal=1, vertical=1, depthwise=1),
                 dict(vertical=1))],
    ("flip-per-sample-depthwise", lambda fn, t: fn.flip(
        _feed(fn, "DHWC"), horizontal=0, depthwise=_per_sample(fn, [0, 1, 2, 0], np.int32))),
]


def _place(on_gpu):
    _ON_GPU[0] = on_gpu


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("case", _CASES, ids=[c[0] for c in _CASES])
def test_like_dali(case, device):
    name, define = case
    assert_like_dali(define, len(DHWC), device, 0, 0, name, _place)


@pytest.mark.parametrize("channels", [1, 2, 3, 5])
@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_cmn_pad_output_rounds_channels_up_to_a_power_of_two(channels, device):
    # DALI pads to the next power of two (1 and 2 stay, 3 -> 4, 5 -> 8), the added channels 0.
    data = [_volume(1, 6 + k, 7, channels, k)[0] for k in range(3)]

    def feed(fn):
        x = fn.external_source(source=lambda: [a.copy() for a in data], batch=True,
                               layout="HWC")
        return x.gpu() if _ON_GPU[0] else x

    for layout in ("CHW", "HWC"):
        assert_like_dali(lambda fn, t: fn.crop_mirror_normalize(
            feed(fn), crop=(4, 5), mean=[10.0] * channels, std=[3.0] * channels, pad_output=True,
            output_layout=layout), len(data), device, 1e-5, 0, f"pad_output {layout}", _place)


CMN_CHW = [
    dict(),
    dict(output_layout="HWC", crop=(5, 6), crop_pos_x=0.2, mirror=1),
    dict(output_layout="", mean=(1.0, 2.0), std=(2.0, 3.0), dtype="uint8"),
    dict(pad_output=True, crop=(4, 4), crop_pos_y=0.9),
]


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("kw", CMN_CHW, ids=[str(k) for k in CMN_CHW])
def test_cmn_of_chw_images_is_dalis(kw, device):
    def define(fn, t):
        args = dict(kw)
        if "dtype" in args:
            args["dtype"] = getattr(t, args["dtype"].upper())
        return fn.crop_mirror_normalize(_feed(fn, "CHW"), **args)
    assert_like_dali(define, len(CHW), device, 1e-5, 0, f"cmn CHW {kw}", _place)


# `dtype` (crop, slice): float32, float16, uint8 or the input's; into uint8 toward zero and
# saturated, into float16 saturated to +-65504; padding written in the output's type.
_TYPED = {
    "float32": [np.linspace(-300.7, 70000.9, 4 * 5 * 2, dtype=np.float32).reshape(4, 5, 2),
                np.linspace(2.5, -3.5, 3 * 6 * 2, dtype=np.float32).reshape(3, 6, 2)],
    # Padding crops convert in DALI with a plain static_cast (1501.9 becomes 221): in range.
    "float32_in_range": [np.linspace(-0.9, 255.9, 4 * 5 * 2, dtype=np.float32).reshape(4, 5, 2),
                         np.linspace(2.5, 250.5, 3 * 6 * 2, dtype=np.float32).reshape(3, 6, 2)],
    "int32": [np.arange(-40, 80, 3, dtype=np.int32).reshape(4, 5, 2) * 997,
              np.arange(36, dtype=np.int32).reshape(3, 6, 2) * 13],
    "uint8": [v[0, :4, :5] for v in DHWC[:2]],
}
_DTYPE_CASES = [
    ("float32_in_range", "UINT8", lambda fn, x, d: fn.crop(x, crop=(5, 7),
                                                           out_of_bounds_policy="pad",
                                                  fill_values=(2.9, 300.0 - 45.2), dtype=d)),
    ("float32", "FLOAT16", lambda fn, x, d: fn.crop(x, crop=(2, 3), dtype=d)),
    ("int32", "UINT8", lambda fn, x, d: fn.crop(x, crop=(2, 3), crop_pos_x=0.0, dtype=d)),
    ("int32", "FLOAT16", lambda fn, x, d: fn.crop(x, crop=(3, 3), dtype=d)),
    ("uint8", "FLOAT", lambda fn, x, d: fn.crop(x, crop=(6, 6), out_of_bounds_policy="pad",
                                                fill_values=2.5, dtype=d)),
    ("uint8", "UINT8", lambda fn, x, d: fn.crop(x, crop=(2, 2), dtype=d)),
    ("float32_in_range", "UINT8", lambda fn, x, d: fn.slice(
        x, 1, 7, axes=[1], out_of_bounds_policy="pad", fill_values=1.5, dtype=d)),
    ("float32", "UINT8", lambda fn, x, d: fn.slice(x, 1, 3, axes=[1], dtype=d)),
    ("int32", "FLOAT", lambda fn, x, d: fn.slice(x, 0, 2, axes=[0], dtype=d)),
]


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("case", _DTYPE_CASES, ids=[f"{a}-{b}-{k}" for k, (a, b, _) in
                                                    enumerate(_DTYPE_CASES)])
def test_crop_and_slice_dtype_like_dali(case, device):
    src, dtype, op = case
    data = _TYPED[src]

    def define(fn, t):
        x = fn.external_source(source=lambda: [a.copy() for a in data], batch=True,
                               layout="HWC")
        return op(fn, x.gpu() if _ON_GPU[0] else x, getattr(t, dtype))
    assert_like_dali(define, len(data), device, 0, 0, f"{src} -> {dtype}", _place)


def test_crop_dtype_of_another_type_fails_in_both():
    from parity_util import run
    for lib in ("stoker", "dali"):
        def define(fn, t):
            x = fn.external_source(source=lambda: [a.copy() for a in _TYPED["float32"]],
                                   batch=True, layout="HWC")
            return fn.crop(x, crop=(2, 2), dtype=t.INT16)
        with pytest.raises(Exception) as err:
            run(lib, define, 2)
        if lib == "stoker":
            assert "crop: dtype int16 is not supported for float32 input" in str(err.value)
