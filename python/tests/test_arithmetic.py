"""Arithmetic on pipeline values: Python operators and stoker.math against numpy, one fused
operator per expression, type promotion, numpy broadcasting per sample, the output's layout,
errors, and the GPU backend against the CPU one."""

import numpy as np
import pytest

import stoker
import stoker.math as smath
from stoker import _stoker, fn, types

needs_gpu = pytest.mark.skipif(not _stoker.cuda_available(),
                               reason="no CUDA device: GPU test skipped")


def _run(build, *batches, layouts=None, device="cpu"):
    pipe = stoker.Pipeline(batch_size=len(batches[0]), num_threads=2, seed=0,
                           device_id=0 if device == "gpu" else None)
    layouts = layouts or [None] * len(batches)
    with pipe:
        ins = [fn.external_source((lambda b: lambda: b)(b), layout=lay)
               for b, lay in zip(batches, layouts)]
        if device == "gpu":
            ins = [x.gpu() for x in ins]
        pipe.set_outputs(*build(*ins))
    outs = pipe.run()
    if device == "gpu":
        outs = [o.as_cpu() for o in outs]
    return pipe, [[np.array(o[i].numpy() if device == "cpu" else o.at(i))
                   for i in range(len(o))] for o in outs]


def _layouts(build, *batches, layouts):
    pipe = stoker.Pipeline(batch_size=len(batches[0]), num_threads=1, seed=0)
    with pipe:
        ins = [fn.external_source((lambda b: lambda: b)(b), layout=lay)
               for b, lay in zip(batches, layouts)]
        pipe.set_outputs(*build(*ins))
    return [o.layout() for o in pipe.run()]


def _samples(shapes, dtype, seed):
    rng = np.random.default_rng(seed)
    return [(rng.integers(-50, 50, s) if dtype != np.uint8 else rng.integers(0, 255, s))
            .astype(dtype) for s in shapes]


# Per case: each operand's per-sample shapes (two samples of different shapes).
BROADCAST_CASES = {
    "per-channel vector": [[(4, 5, 3), (2, 7, 3)], [(3,), (3,)]],
    "(1, 1, C) vector": [[(4, 5, 3), (2, 7, 3)], [(1, 1, 3), (1, 1, 3)]],
    "one-channel mask": [[(4, 5, 3), (2, 7, 3)], [(4, 5, 1), (2, 7, 1)]],
    "outer product": [[(4, 1), (300, 1)], [(1, 6), (1, 2)]],
    "rank extension": [[(4, 5, 3), (1, 2)], [(1, 1, 1, 1), (3, 1, 2)]],
    "scalar samples": [[(4, 5, 3), ()], [(), (6,)]],
    "zero volume": [[(0, 3), (2, 0)], [(3,), (2, 1)]],
}


@pytest.mark.parametrize("case", list(BROADCAST_CASES))
def test_broadcasting_matches_numpy(case):
    a_shapes, b_shapes = BROADCAST_CASES[case]
    a = _samples(a_shapes, np.float32, 1)
    b = _samples(b_shapes, np.int32, 2)
    _, (prod, cmp, clamp, expr) = _run(
        lambda x, y: [x * y, x < y, smath.clamp(x, y, 20), (x - y) * 0.5 + y // 3], a, b)
    for i in range(2):
        np.testing.assert_array_equal(prod[i], a[i] * b[i])
        assert prod[i].dtype == np.float32
        np.testing.assert_array_equal(cmp[i], a[i] < b[i])
        np.testing.assert_array_equal(clamp[i], np.minimum(np.maximum(a[i], b[i]), 20))
        np.testing.assert_allclose(expr[i], (a[i] - b[i]) * 0.5 + b[i] // 3, rtol=1e-6)


def test_three_operands_broadcast_together():
    a = _samples([(6, 1, 5)], np.uint8, 3)
    b = _samples([(1, 4, 1)], np.int16, 4)
    c = _samples([(5,)], np.float32, 5)
    _, (out,) = _run(lambda x, y, z: [smath.clamp(x - y, z, 100)], a, b, c)
    expect = np.minimum(np.maximum((a[0].astype(np.int16) - b[0]), c[0]), 100)
    assert out[0].shape == (6, 4, 5) and out[0].dtype == np.float32
    np.testing.assert_array_equal(out[0], expect)


def test_lists_and_numpy_values_are_broadcast_constants():
    img = _samples([(4, 5, 3)], np.uint8, 8)
    _, (a, b, c, d) = _run(lambda x: [x * [1, 2, 3], x * np.array([0.5, 1, 2], np.float32),
                                      x + np.int64(7), smath.clamp(x, (10, 20, 30), 200)], img)
    np.testing.assert_array_equal(a[0], img[0].astype(np.int32) * [1, 2, 3])
    assert a[0].dtype == np.int32  # a list of Python ints: int32, as DALI's types.Constant
    np.testing.assert_array_equal(b[0], img[0] * np.array([0.5, 1, 2], np.float32))
    assert c[0].dtype == np.int64
    np.testing.assert_array_equal(d[0], np.clip(img[0].astype(np.int32), [10, 20, 30], 200))


def test_the_output_layout_is_dalis():
    img = [np.zeros((4, 5, 3), np.uint8)]
    vec = [np.ones(3, np.uint8)]
    big = [np.ones((1, 4, 5, 3), np.uint8)]
    # The first operand with a layout gives it (a constant has none).
    assert _layouts(lambda x, v: [types.Constant(255, dtype=types.UINT8) - x, 255 - x, -x],
                    img, vec, layouts=["HWC", None]) == ["HWC", "HWC", "HWC"]
    # A suffix of the other's: the longer; a layout of fewer letters than the output's axes:
    # none.
    assert _layouts(lambda x, v: [v * x, x * v, v + 1], img, vec,
                    layouts=["HWC", "C"]) == ["HWC", "HWC", "C"]
    assert _layouts(lambda x, v: [v * x], img, vec, layouts=[None, "C"]) == [""]
    assert _layouts(lambda x, b: [x * b], img, big, layouts=["HWC", None]) == [""]
    assert _layouts(lambda x, b: [x * b], img, big, layouts=["HWC", "FHWC"]) == ["FHWC"]
    # Node by node: (C + unlaid HWC-shaped) has none, so XYZ is kept.
    assert _layouts(lambda v, x, y: [(v + x) * y], vec, img, img,
                    layouts=["C", None, "XYZ"]) == ["XYZ"]
    with pytest.raises(ValueError, match="the layouts of the operands of `mul` are HWC and CHW "
                                         r"\(operands 0 and 1\): they must be equal, or one a "
                                         "suffix of the other"):
        _layouts(lambda x, y: [x * y], img, img, layouts=["HWC", "CHW"])
    with pytest.raises(ValueError, match="operands of `clamp` are ABC and XYZ"):
        _layouts(lambda x, v, y: [smath.clamp(x, v, y)], img, vec, img,
                 layouts=["ABC", "C", "XYZ"])


def test_expressions_match_numpy_and_fuse():
    rng = np.random.default_rng(1)
    a = [rng.normal(size=(3, 4)).astype(np.float32) for _ in range(2)]
    b = [rng.integers(-5, 5, (3, 4)).astype(np.int32) for _ in range(2)]
    pipe, (e1, e2, e3, e4) = _run(lambda x, y: [x * 2 + y, (y // 3) % 4, -x ** 2 < y,
                                                smath.sqrt(smath.abs(x)) + smath.clamp(y, -1, 2)],
                                  a, b)
    for i in range(2):
        np.testing.assert_allclose(e1[i], a[i] * 2 + b[i], rtol=1e-6)
        assert e1[i].dtype == np.float32
        np.testing.assert_array_equal(e2[i], (b[i] // 3) % 4)
        assert e2[i].dtype == np.int32
        np.testing.assert_array_equal(e3[i], -a[i] ** 2 < b[i])
        assert e3[i].dtype == np.bool_
        np.testing.assert_allclose(e4[i], np.sqrt(np.abs(a[i])) + np.clip(b[i], -1, 2),
                                   rtol=1e-6)
    ops = [n["op"] for n in pipe._nodes]
    assert ops.count("arithmetic") == 4  # one operator per expression


def test_promotion_broadcast_and_division():
    u8 = [np.array([200, 100, 3], np.uint8)]
    i8 = [np.array([-100, 50, 7], np.int8)]
    scal = [np.array(2, np.uint8)]
    _, (s, d, m, bits) = _run(lambda x, y, z: [x + y, x / z, x * z, (x & 0xF0) | (y ^ 1)],
                              u8, i8, scal)
    assert s[0].dtype == np.int16 and s[0].tolist() == [100, 150, 10]  # u8 + i8 -> i16
    assert d[0].dtype == np.float32 and d[0].tolist() == [100, 50, 1.5]
    assert m[0].dtype == np.uint8 and m[0].tolist() == [255, 200, 6]  # u8 saturates
    assert bits[0].tolist() == ((u8[0].astype(np.int16) & 0xF0) | (i8[0] ^ 1)).tolist()


def test_errors():
    with pytest.raises(ValueError, match=r"arithmetic: sample 0 has operands of shapes \(2,\), "
                                         r"\(3,\), which do not broadcast: aligned from the last "
                                         r"axis, extents must be equal or 1 \(axis -1 differs\)"):
        _run(lambda x, y: [x + y], [np.zeros(2, np.float32)], [np.zeros(3, np.float32)])
    with pytest.raises(ValueError, match=r"sample 1 has operands of shapes \(4, 5, 3\), "
                                         r"\(4, 1\), .*\(axis -2 differs\)"):
        _run(lambda x, y: [x * y], [np.zeros((5, 3), np.float32), np.zeros((4, 5, 3), np.float32)],
             [np.zeros((1, 3), np.float32), np.zeros((4, 1), np.float32)])
    with pytest.raises(ValueError, match=r"shapes \(0, 3\), \(2, 3\)"):  # 0 meets 0 or 1 only
        _run(lambda x, y: [x * y], [np.zeros((0, 3), np.float32)], [np.zeros((2, 3), np.float32)])
    with pytest.raises(ValueError, match=r"broadcasts operands of shapes \(2, 1, 2, 1, 2, 1, 2\), "
                                         r"\(2, 1, 2, 1, 2, 1\) to \(2, 2, 2, 2, 2, 2, 2\) "
                                         r"along more than 6 alternating groups of axes"):
        _run(lambda x, y: [x * y], [np.zeros((2, 1, 2, 1, 2, 1, 2), np.float32)],
             [np.zeros((2, 1, 2, 1, 2, 1), np.float32)])
    with pytest.raises(ValueError, match="integer division by zero"):
        _run(lambda x: [x // 0], [np.ones(2, np.int32)])
    with pytest.raises(TypeError, match="&, | and ^ need integer or bool operands"):
        _run(lambda x: [x & 1], [np.ones(2, np.float32)])
    with pytest.raises(TypeError, match="constants must be bool, int or float, got str"):
        _run(lambda x: [x + "1"], [np.ones(2, np.float32)])
    with pytest.raises(TypeError, match="has no truth value"):
        _run(lambda x: [x if x else x], [np.ones(2, np.float32)])
    # A serialised or hand-written expression nested past any real one: refused, not recursed
    # into until the stack runs out; the message quotes the start of it only.
    deep = "neg(" * 200_000 + "&0" + ")" * 200_000
    with pytest.raises(ValueError, match=r"nests deeper than 1024 levels at position 4096 of "
                                         r"'neg\(neg.{100,}\.\.\.'$"):
        _run(lambda x: [fn.arithmetic(x, expr=deep)], [np.ones(2, np.float32)])
    with pytest.raises(ValueError, match="unknown function"):
        _run(lambda x: [fn.arithmetic(x, expr="nope(&0)")], [np.ones(2, np.float32)])


def test_an_expression_as_an_argument_leaves_the_operator_its_own_output():
    """Regression: an expression first used as a per-sample argument becomes a node while the
    operator is being added; the operator's output must still be its own (not the
    expression's)."""
    imgs = [np.arange(12, dtype=np.uint8).reshape(2, 2, 3)]
    pipe = stoker.Pipeline(batch_size=1, num_threads=1, seed=0)
    with pipe:
        data = fn.external_source(lambda: imgs, layout="HWC")
        coin = fn.random.coin_flip(probability=0.0)
        flipped = fn.flip(data, horizontal=1 - coin, vertical=coin)
        pipe.set_outputs(flipped)
    (out,) = pipe.run()
    np.testing.assert_array_equal(out[0].numpy(), imgs[0][:, ::-1])


@needs_gpu
def test_gpu_equals_cpu_with_broadcasting():
    for case in ("per-channel vector", "one-channel mask", "rank extension", "zero volume"):
        a_shapes, b_shapes = BROADCAST_CASES[case]
        a, b = _samples(a_shapes, np.uint8, 6), _samples(b_shapes, np.float32, 7)

        def build(x, y):
            return [x * y - 3, smath.max(x, y) // 2]
        _, cpu = _run(build, a, b)
        _, gpu = _run(build, a, b, device="gpu")
        for c, g in zip(cpu, gpu):
            for x, y in zip(c, g):
                np.testing.assert_array_equal(y, x)
