"""cast, transpose, reshape, pad, cat and stack against numpy."""

import numpy as np
import pytest

import stoker
from stoker import fn


def _run(build, batches, layout=None):
    """Runs fn built by build(*inputs) on external sources feeding `batches` (lists)."""
    pipe = stoker.Pipeline(batch_size=len(batches[0]), num_threads=2, seed=0)
    with pipe:
        ins = [fn.external_source((lambda b: lambda: b)(b), layout=layout) for b in batches]
        pipe.set_outputs(build(*ins))
    (out,) = pipe.run()
    return out, [out[i].numpy() for i in range(len(out))]


def _cast_ref(x, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return x != 0
    if dtype.kind == "f":
        return x.astype(dtype)
    info = np.iinfo(dtype)
    if x.dtype.kind == "f":  # element by element in Python ints: inf and 2^64 stay exact
        out = []
        for v in x.astype(np.float64):
            if np.isnan(v):
                out.append(0)
            elif np.isinf(v):
                out.append(info.max if v > 0 else info.min)
            else:
                r = int(np.sign(v) * np.floor(abs(v) + 0.5))
                out.append(min(max(r, info.min), info.max))
        return np.array(out, dtype)
    return np.clip(x.astype(object), info.min, info.max).astype(dtype)


@pytest.mark.parametrize("src", ["float32", "float64", "int64", "uint8", "int16", "float16"])
@pytest.mark.parametrize("dst", ["uint8", "int8", "int32", "uint64", "int64", "float16",
                                 "float32", "bool"])
def test_cast_rounds_and_saturates(src, dst):
    vals = np.array([0, 1, -1, 2.5, -2.5, 127.5, 128, 255.49, 256, -129, 1e10, -1e10, 3e4],
                    np.float64)
    if np.dtype(src).kind == "f":
        x = vals.astype(src)
        if src != "float16":
            x = np.append(x, np.nan).astype(src)
    else:
        info = np.iinfo(src)
        x = np.clip(np.round(vals), info.min, info.max).astype(src)
        x = np.append(x, [info.min, info.max]).astype(src)
    with np.errstate(invalid="ignore", over="ignore"):
        _, got = _run(lambda a: fn.cast(a, dtype=getattr(stoker.types, {
            "uint8": "UINT8", "int8": "INT8", "int32": "INT32", "uint64": "UINT64",
            "int64": "INT64", "float16": "FLOAT16", "float32": "FLOAT", "bool": "BOOL"}[dst])),
            [[x]])
        np.testing.assert_array_equal(got[0], _cast_ref(x, dst))


def test_transpose_and_layouts():
    rng = np.random.default_rng(1)
    imgs = [rng.integers(0, 255, (h, w, 3), dtype=np.uint8) for h, w in [(4, 5), (1, 7)]]
    out, got = _run(lambda a: fn.transpose(a, perm=[2, 0, 1]), [imgs], layout="HWC")
    assert out.layout() == "CHW"
    for a, g in zip(imgs, got):
        np.testing.assert_array_equal(g, a.transpose(2, 0, 1))
    for perm in ([0, 1, 2, 3], [3, 1, 0, 2], [1, 3, 2, 0]):
        x = [rng.normal(size=(2, 3, 4, 5)).astype(np.float32)]
        _, got = _run(lambda a, p=perm: fn.transpose(a, perm=p, output_layout="ABCD"), [x])
        np.testing.assert_array_equal(got[0], x[0].transpose(perm))
    with pytest.raises(ValueError, match="perm \\[0, 0, 1\\] is not a permutation of 0..2"):
        _run(lambda a: fn.transpose(a, perm=[0, 0, 1]), [imgs])
    with pytest.raises(ValueError, match="perm has 2 axes but sample 0 has shape \\(4, 5, 3\\)"):
        _run(lambda a: fn.transpose(a, perm=[1, 0]), [imgs])


def test_reshape_views_the_input():
    x = [np.arange(24, dtype=np.int32).reshape(2, 3, 4), np.arange(12, dtype=np.int32)[:, None]]
    out, got = _run(lambda a: fn.reshape(a, shape=[-1, 4]), [x])
    np.testing.assert_array_equal(got[0], x[0].reshape(-1, 4))
    np.testing.assert_array_equal(got[1], x[1].reshape(-1, 4))
    shapes = [np.array([4, 6]), np.array([2, 2, 3])]
    pipe = stoker.Pipeline(batch_size=2, num_threads=2, seed=0)
    with pipe:
        a = fn.external_source(lambda: x)
        s = fn.external_source(lambda: shapes)
        r = fn.reshape(a, shape=s)  # samples of 2 and 3 axes: no layout fits both
        pipe.set_outputs(r, fn.cast(r, dtype=stoker.types.INT32))
    reshaped, copied = pipe.run()
    assert reshaped[0].numpy().shape == (4, 6) and reshaped[1].numpy().shape == (2, 2, 3)
    np.testing.assert_array_equal(reshaped[1].numpy().ravel(), x[1].ravel())
    _, got = _run(lambda a: fn.reshape(a, rel_shape=[0.5, 2, 1]), [[x[0]]])
    assert got[0].shape == (1, 6, 4)
    with pytest.raises(ValueError, match="sample 0 of shape \\(2, 3, 4\\) \\(24 elements\\) "
                                         "cannot become \\(5, 5\\) \\(25\\)"):
        _run(lambda a: fn.reshape(a, shape=[5, 5]), [[x[0]]])
    # 111620 x 429509837 x 384773 x 24 is 6 x (2^64 + 4): wrapped around it would pass for 24.
    with pytest.raises(ValueError, match="a sample of shape \\(111620, 429509837, 384773, 24\\) "
                                         "would have more elements than 2\\^63 - 1"):
        _run(lambda a: fn.reshape(a, shape=[111620, 429509837, 384773, 24]), [[x[0]]])
    # Byte counts are checked too: 2^62 + 1 eight-byte elements wrap around to 8 bytes (a cast
    # of them wrote past its output: SIGSEGV), and an inferred extent beside 2^31 x 2^31 4-byte
    # elements divided by zero (SIGFPE).
    b = [np.arange(8, dtype=np.uint8)]
    with pytest.raises(ValueError, match="\\(27905, 429509837, 384773\\) of 8-byte elements "
                                         "would have more bytes than 2\\^63 - 1"):
        _run(lambda a: fn.cast(fn.reinterpret(a, shape=[27905, 429509837, 384773],
                                              dtype=stoker.types.INT64),
                               dtype=stoker.types.FLOAT), [b])
    with pytest.raises(ValueError, match="\\(2147483648, 2147483648\\) of 4-byte elements"):
        _run(lambda a: fn.reinterpret(a, shape=[-1, 2**31, 2**31],
                                      dtype=stoker.types.INT32), [b])


def test_pad_to_batch_max_shape_and_alignment():
    rng = np.random.default_rng(2)
    x = [rng.normal(size=s).astype(np.float32) for s in [(3, 5), (4, 2), (1, 1)]]
    _, got = _run(lambda a: fn.pad(a, fill_value=-1), [x])
    for a, g in zip(x, got):
        assert g.shape == (4, 5)
        np.testing.assert_array_equal(g[:a.shape[0], :a.shape[1]], a)
        assert (g[a.shape[0]:] == -1).all() and (g[:, a.shape[1]:] == -1).all()
    _, got = _run(lambda a: fn.pad(a, axes=[1], shape=[8], align=[3]), [x])
    assert [g.shape for g in got] == [(3, 9), (4, 9), (1, 9)]
    _, got = _run(lambda a: fn.pad(a, axes=[0], align=[4]), [x])
    assert [g.shape for g in got] == [(4, 5), (4, 2), (4, 1)]
    with pytest.raises(ValueError, match="pad: sample 0 of shape \\(3, 5\\) is larger than the "
                                         "requested 2 along axis 1"):
        _run(lambda a: fn.pad(a, axes=[1], shape=[2]), [x])


def test_cat_and_stack():
    rng = np.random.default_rng(3)
    a = [rng.integers(0, 9, (2, 3, 4)).astype(np.int16) for _ in range(2)]
    b = [rng.integers(0, 9, (2, 5, 4)).astype(np.int16) for _ in range(2)]
    c = [rng.integers(0, 9, (2, 3, 4)).astype(np.int16) for _ in range(2)]
    _, got = _run(lambda x, y, z: fn.cat(x, y, z, axis=1), [a, b, c])
    for i in range(2):
        np.testing.assert_array_equal(got[i], np.concatenate([a[i], b[i], c[i]], axis=1))
    for axis in range(4):
        out, got = _run(lambda x, y, ax=axis: fn.stack(x, y, axis=ax, axis_name="F"), [a, c],
                        layout="HWC")
        for i in range(2):
            np.testing.assert_array_equal(got[i], np.stack([a[i], c[i]], axis=axis))
        assert out.layout() == "HWC"[:axis] + "F" + "HWC"[axis:]
    with pytest.raises(ValueError, match="stack: sample 0 of input 1 has shape \\(2, 5, 4\\), "
                                         "input 0's has \\(2, 3, 4\\) \\(stack needs equal"):
        _run(lambda x, y: fn.stack(x, y), [a, b])
    with pytest.raises(ValueError, match="cat: sample 0 of input 1 has shape \\(2, 5, 4\\), "
                                         "input 0's has \\(2, 3, 4\\) \\(only the axis may"):
        _run(lambda x, y: fn.cat(x, y, axis=0), [a, b])
    with pytest.raises(TypeError, match="fn.cat expects 1 or more input\\(s\\)"):
        _run(lambda x: fn.cat(), [a])
