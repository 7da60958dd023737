"""slice against DALI 2.4: windows from anchor/shape inputs (fractions and pixels) under every
out_of_bounds_policy, per-channel fill, and windows from start/end/shape arguments (absolute,
relative, by axes and by axis names)."""
import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, run

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {"slice": "exact"}

_RNG = np.random.default_rng(1)
_IMAGES = [_RNG.integers(0, 255, (h, w, 3), dtype=np.uint8) for h, w in [(20, 30), (7, 5),
                                                                          (16, 16)]]
_ANCHORS = [np.float32([0.1, 0.2]), np.float32([-0.3, 0.5]), np.float32([0.5, 0.5])]
_SHAPES = [np.float32([0.5, 0.7]), np.float32([1.2, 0.9]), np.float32([0.8, 0.8])]
_PIXEL_ANCHORS = [np.int32([-2, 1]), np.int32([0, 0]), np.int32([3, -4])]
_PIXEL_SHAPES = [np.int32([6, 5]), np.int32([9, 9]), np.int32([4, 4])]


def _both(**kwargs):
    def define(fn, types):
        x = fn.external_source(source=lambda: _IMAGES, batch=True, layout="HWC")
        a = fn.external_source(source=lambda: _ANCHORS, batch=True)
        s = fn.external_source(source=lambda: _SHAPES, batch=True)
        pa = fn.external_source(source=lambda: _PIXEL_ANCHORS, batch=True)
        ps = fn.external_source(source=lambda: _PIXEL_SHAPES, batch=True)
        return fn.slice(x, a, s, **kwargs), fn.slice(x, pa, ps, **kwargs)
    return {lib: run(lib, define, 3)[0] for lib in ("stoker", "dali")}


@pytest.mark.parametrize("policy", ["pad", "constant", "trim_to_shape", "edge", "clamp",
                                    "reflect", "reflect_1001", "reflect_101", "wrap"])
def test_inputs_and_policies_equal_dali(policy):
    out = _both(out_of_bounds_policy=policy)
    for k in range(2):
        assert_same(out["stoker"][k], out["dali"][k], what=f"{policy} output {k}")


def test_per_channel_fill_equals_dali():
    out = _both(out_of_bounds_policy="pad", fill_values=[10, 20, 30])
    for k in range(2):
        assert_same(out["stoker"][k], out["dali"][k], what=f"output {k}")


@pytest.mark.parametrize("kwargs", [
    {"rel_start": [0.1, 0.3], "rel_shape": [0.5, 0.5]},
    {"start": [1, 1], "end": [4, 5]},
    {"rel_start": [0.25], "rel_end": [0.75], "axes": [0]},
    {"start": [1], "shape": [2], "axis_names": "C"},
    {"start": [-2, -3], "shape": [9, 9], "out_of_bounds_policy": "pad"},
    {"rel_start": [-0.1, 0.2], "rel_end": [0.9, 1.3], "out_of_bounds_policy": "reflect_101"},
    {"start": [0, 2], "shape": [4, 3], "axes": [-3, 1]},
], ids=lambda k: ",".join(f"{a}={v}" for a, v in k.items()))
def test_named_windows_equal_dali(kwargs):
    def define(fn, types):
        x = fn.external_source(source=lambda: _IMAGES, batch=True, layout="HWC")
        return fn.slice(x, **kwargs)
    ours, theirs = (run(lib, define, 3)[0][0] for lib in ("stoker", "dali"))
    assert_same(ours, theirs)
