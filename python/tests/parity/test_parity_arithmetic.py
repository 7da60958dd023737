"""Arithmetic expressions against DALI 2.4's: numpy broadcasting per sample (per-channel vectors,
masks, rank extension, scalars, zero volumes), the result types, the output's layout (DALI's
rule, node by node) and the errors for shapes that do not broadcast and layouts that clash.
(`arithmetic` is no DALI operator name, so this module declares no PARITY.)"""

import numpy as np
import pytest

from parity_util import SKIP_REASON, _lib, assert_same, dali

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

import stoker.math as smath  # noqa: E402
import nvidia.dali.math as dmath  # noqa: E402

MATH = {"stoker": smath, "dali": dmath}


def _samples(shapes, dtype, seed):
    rng = np.random.default_rng(seed)
    hi = 255 if dtype == np.uint8 else 60
    return [rng.integers(0 if dtype == np.uint8 else -60, hi, s).astype(dtype) for s in shapes]


def _run_lib(lib, build, batches, layouts):
    """build(math, types, *inputs) on `lib`: (samples per output, layouts)."""
    pipeline_def, fn, types, extra = _lib(lib)

    @pipeline_def(batch_size=len(batches[0]), num_threads=1, seed=1, **extra)
    def pipe():
        ins = [fn.external_source(source=(lambda b: (lambda: b))(b), layout=lay, batch=True)
               for b, lay in zip(batches, layouts)]
        return build(MATH[lib], types, *ins)
    p = pipe()
    p.build()
    res = p.run()
    res = res if isinstance(res, (list, tuple)) else [res]
    return [[np.array(r.at(i)) for i in range(len(r))] for r in res], [r.layout() for r in res]


def _both(build, batches, layouts):
    return {lib: _run_lib(lib, build, batches, layouts) for lib in ("stoker", "dali")}


CASES = {
    "per-channel vector": ([[(4, 5, 3), (2, 7, 3)], [(3,), (3,)]], ["HWC", None]),
    "(1, 1, C) vector": ([[(4, 5, 3), (2, 7, 3)], [(1, 1, 3), (1, 1, 3)]], ["HWC", "HWC"]),
    "mask": ([[(4, 5, 3), (2, 7, 3)], [(4, 5, 1), (2, 7, 1)]], [None, "HWC"]),
    "outer": ([[(4, 1), (300, 1)], [(1, 6), (1, 2)]], [None, None]),
    "rank extension": ([[(4, 5, 3), (2, 1, 2)], [(1, 1, 1, 1), (3, 1, 1, 2)]], ["HWC", "FHWC"]),
    "vector first": ([[(3,), (3,)], [(4, 5, 3), (2, 2, 3)]], ["C", "HWC"]),
    "unlaid larger": ([[(3,), (3,)], [(4, 5, 3), (2, 2, 3)]], ["C", None]),
    "zero volume": ([[(0, 3), (2, 0)], [(1, 3), (2, 1)]], [None, None]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_broadcasting_values_types_and_layouts_equal_dalis(case):
    (a_shapes, b_shapes), layouts = CASES[case]
    a, b = _samples(a_shapes, np.uint8, 1), _samples(b_shapes, np.float32, 2)
    c = _samples(b_shapes, np.int16, 3)

    def build(m, types, x, y, z):
        return (x * y, x - z, x < y, m.min(x, z), (x + z) * y,
                types.Constant(255, dtype=types.UINT8) - x, m.clamp(y, z, 10))
    out = _both(build, [a, b, c], layouts + [None])
    (ours, our_layouts), (theirs, their_layouts) = out["stoker"], out["dali"]
    assert our_layouts == their_layouts
    for k, (x, y) in enumerate(zip(ours, theirs)):
        assert_same(x, y, atol=1e-4, what=f"{case} output {k}")


def test_constant_minus_images_is_hwc_and_invert_like():
    imgs = _samples([(6, 5, 3), (3, 4, 3)], np.uint8, 4)

    def build(m, types, x):
        return (types.Constant(255, dtype=types.UINT8) - x, 255 - x, x ^ 255, -x)
    out = _both(build, [imgs], ["HWC"])
    assert out["stoker"][1] == out["dali"][1] == ["HWC"] * 4
    # (-x of uint8 wraps in DALI and saturates in stoker: docs/dali_differences.md)
    for k, (x, y) in enumerate(zip(out["stoker"][0][:3], out["dali"][0][:3])):
        assert_same(x, y, what=f"output {k}")


def test_lists_and_numpy_operands_are_constants_that_broadcast():
    imgs = [x // 4 for x in _samples([(6, 5, 3), (3, 4, 3)], np.uint8, 9)]  # no uint8 overflow

    def build(m, types, x):
        return (x * [1, 2, 3], x * (0.5, 1, 2), x * np.array([1, 2, 3], np.uint8),
                x * np.float32(2), x + np.int64(7),
                m.min(x, np.array([[[10, 100, 200]]], np.uint8)))
    out = _both(build, [imgs], ["HWC"])
    assert out["stoker"][1] == out["dali"][1]
    for k, (x, y) in enumerate(zip(out["stoker"][0], out["dali"][0])):
        assert_same(x, y, what=f"output {k}")


def test_64_bit_numpy_arrays_are_32_bit_constants():
    # DALI's types.Constant (and so numpy operands) carries float64 arrays as float32 and,
    # without a dtype, int64 arrays as int32: numpy's default types do not widen the result.
    imgs = _samples([(6, 5, 3), (3, 4, 3)], np.uint8, 4)

    def build(m, types, x):
        return (x * np.array([0.5, 1.0, 2.0]), x + np.arange(3), types.Constant(np.arange(4)),
                types.Constant(np.array([[1.5, 2.5]])), types.Constant(np.uint64([7])),
                types.Constant(np.arange(3), dtype=types.INT64))
    out = _both(build, [imgs], ["HWC"])
    assert [x[0].dtype for x in out["dali"][0]] == [np.float32, np.int32, np.int32, np.float32,
                                                    np.uint32, np.int64]
    for k, (x, y) in enumerate(zip(out["stoker"][0], out["dali"][0])):
        assert_same(x, y, what=f"output {k}")


def test_64_bit_constants_out_of_32_bit_range_fail_alike():
    for lib in ("stoker", "dali"):
        pipeline_def, _, types, extra = _lib(lib)

        @pipeline_def(batch_size=1, num_threads=1, **extra)
        def pipe():
            return types.Constant(np.int64([1, 2 ** 40]))
        with pytest.raises(OverflowError, match="out of range for int32"):
            pipe().build()


@pytest.mark.parametrize("a_shape,b_shape,axis,dali_dims", [
    ((4, 5, 3), (4, 1), -2, ("4 x 5 x 3 (d=1", "4 x 1 (d=0")),
    ((4, 5, 3), (2,), -1, ("4 x 5 x 3 (d=2", "2 (d=0")),
    ((0, 3), (2, 3), -2, ("0 x 3 (d=0", "2 x 3 (d=0")),
], ids=["inner", "last", "zero"])
def test_shapes_that_do_not_broadcast_fail_alike(a_shape, b_shape, axis, dali_dims):
    a, b = _samples([a_shape], np.float32, 5), _samples([b_shape], np.float32, 6)

    def build(m, types, x, y):
        return x * y
    with pytest.raises(RuntimeError, match="Can't broadcast shapes") as e:
        _run_lib("dali", build, [a, b], [None, None])
    for d in dali_dims:
        assert d in str(e.value)
    with pytest.raises(ValueError, match=rf"arithmetic: sample 0 has operands of shapes "
                                         rf"\({', '.join(map(str, a_shape))},?\), "
                                         rf"\({', '.join(map(str, b_shape))},?\), which do not "
                                         rf"broadcast: .* \(axis {axis} differs\)"):
        _run_lib("stoker", build, [a, b], [None, None])


def test_clashing_layouts_fail_alike():
    img, vec = _samples([(4, 5, 3)], np.float32, 7), _samples([(5, 3)], np.float32, 8)

    def build(m, types, x, y):
        return x * y
    with pytest.raises(RuntimeError, match="Layouts of subexpressions 0 and 1 .* must be equal or "
                                           "one must be a suffix of the other. Got HWC and HC"):
        _run_lib("dali", build, [img, vec], ["HWC", "HC"])
    with pytest.raises(ValueError, match="the layouts of the operands of `mul` are HWC and HC "
                                         r"\(operands 0 and 1\): they must be equal, or one a "
                                         "suffix of the other"):
        _run_lib("stoker", build, [img, vec], ["HWC", "HC"])
