"""Arithmetic on pipeline values: Python operators and stoker.math against numpy, one fused
operator per expression, type promotion, broadcasting of one-element operands, errors."""

import numpy as np
import pytest

import stoker
import stoker.math as smath
from stoker import fn


def _run(build, *batches):
    pipe = stoker.Pipeline(batch_size=len(batches[0]), num_threads=2, seed=0)
    with pipe:
        ins = [fn.external_source(lambda b=b: b) for b in batches]
        pipe.set_outputs(*build(*ins))
    outs = pipe.run()
    return pipe, [[o[i].numpy() for i in range(len(o))] for o in outs]


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
    with pytest.raises(ValueError, match="operands of shapes \\(2,\\) and \\(3,\\)"):
        _run(lambda x, y: [x + y], [np.zeros(2, np.float32)], [np.zeros(3, np.float32)])
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
