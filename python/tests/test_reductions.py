"""fn.reductions.*: values against numpy on ragged batches of several dtypes (per sample, over
any axes, by index or by name, keep_dims), the output dtypes (defaults and `dtype`), empty
samples and empty `axes`, std_dev/variance about given means with ddof, every error with its
text, and the GPU backend against the CPU one."""
import numpy as np
import pytest

import stoker
from stoker import _stoker, fn, types

needs_gpu = pytest.mark.skipif(not _stoker.cuda_available(),
                               reason="no CUDA device: GPU test skipped")

_RNG = np.random.default_rng(4)
_SHAPES = [(4, 6, 3), (1, 9, 2), (0, 2, 5), (7, 1, 1)]


def _batch(dtype, shapes=_SHAPES, lo=-50, hi=50):
    if np.dtype(dtype).kind == "u":
        lo = 0
    if np.dtype(dtype).kind == "f":
        return [_RNG.uniform(lo, hi, s).astype(dtype) for s in shapes]
    return [_RNG.integers(lo, hi, s).astype(dtype) for s in shapes]


def _run(data, op, device="cpu", layout=None, mean=None, **kwargs):
    pipe = stoker.Pipeline(batch_size=len(data), num_threads=2, seed=3,
                           device_id=0 if device == "gpu" else None)
    with pipe:
        x = fn.external_source(lambda: data, layout=layout, device=device)
        f = getattr(fn.reductions, op)
        if mean is not None:
            pipe.set_outputs(f(x, fn.external_source(lambda: mean, device=device), **kwargs))
        else:
            pipe.set_outputs(f(x, **kwargs))
    (out,) = pipe.run()
    out = out.as_cpu()
    return [np.array(s) for s in out], out.layout()


def _np_axes(axes, ndim):
    if axes is None:
        return tuple(range(ndim))
    axes = [axes] if isinstance(axes, int) else axes
    return tuple(a % ndim for a in axes)


def _reference(op, x, axes, keep, out_dtype):
    ax = _np_axes(axes, x.ndim)
    wide = x.astype(np.float64)
    with np.errstate(all="ignore"):
        if op == "sum":
            return np.sum(x, axis=ax, keepdims=keep, dtype=out_dtype)
        if op in ("min", "max"):
            return getattr(np, op)(x, axis=ax, keepdims=keep, initial=(
                np.iinfo(x.dtype).max if op == "min" else np.iinfo(x.dtype).min)
                if x.dtype.kind in "iu" else (np.finfo(np.float32).max if op == "min"
                                              else np.finfo(np.float32).min))
        n = int(np.prod([x.shape[a] for a in ax]))
        if op == "mean":
            r = wide.sum(axis=ax, keepdims=keep) / n
        elif op == "mean_square":
            r = (wide ** 2).sum(axis=ax, keepdims=keep) / n
        else:
            r = np.sqrt((wide ** 2).sum(axis=ax, keepdims=keep) / n)
    return np.trunc(r).astype(out_dtype) if np.dtype(out_dtype).kind in "iu" else r.astype(
        out_dtype)


_DEFAULT = {"sum": {"uint8": "uint64", "int16": "int64", "int32": "int64", "float32": "float32",
                    "int64": "int64"},
            "min": {"uint8": "uint8", "int16": "int16", "int32": "int32", "float32": "float32",
                    "int64": "int64"}}


@pytest.mark.parametrize("dtype", ["uint8", "int16", "int32", "int64", "float32"])
@pytest.mark.parametrize("op", ["sum", "min", "max", "mean", "mean_square", "rms"])
@pytest.mark.parametrize("axes", [None, [0], [1, 2], -1, [0, 2]])
def test_values_match_numpy(op, dtype, axes):
    data = _batch(dtype)
    kwargs = {} if axes is None else {"axes": axes}
    for keep in (False, True):
        got, _ = _run(data, op, keep_dims=keep, **kwargs)
        out_dtype = _DEFAULT.get(op, _DEFAULT["min"] if op == "max" else {}).get(dtype, "float32")
        for x, g in zip(data, got):
            ref = _reference(op, x, axes, keep, out_dtype)
            assert g.dtype == np.dtype(out_dtype) and g.shape == ref.shape, (g.dtype, g.shape)
            if x.size and ref.size:
                np.testing.assert_allclose(g, ref, rtol=2e-6, atol=1e-5)


@pytest.mark.parametrize("op,dtype,allowed", [
    ("sum", "uint8", ["uint8", "uint64", "float32"]),
    ("sum", "int64", ["int64"]),
    ("mean", "int16", ["int16", "float32"]),
    ("mean_square", "uint16", ["uint64", "float32"]),
    ("rms", "int32", ["int32", "float32"]),
])
def test_dtype_gives_the_output_and_accumulation_type(op, dtype, allowed):
    data = _batch(dtype, [(3, 5)], 0, 40)
    for t in allowed:
        (g,), _ = _run(data, op, dtype=getattr(types, t.upper()))
        assert g.dtype == np.dtype(t)
        ref = _reference(op, data[0], None, False, t)
        np.testing.assert_allclose(g, ref, rtol=1e-6)
    with pytest.raises(TypeError, match=f"reductions.{op}: dtype int8 is not available for "
                                        f"{dtype} input; expected one of {', '.join(allowed)}"):
        _run(data, op, dtype=types.INT8)


def test_integer_outputs_wrap_and_truncate_as_dali():
    (s,), _ = _run([np.uint8([[200, 100, 3], [250, 1, 2]])], "sum", dtype=types.UINT8)
    assert s == np.uint8(44)  # 556 mod 256
    (m,), _ = _run([np.uint8([1, 2, 2])], "mean", dtype=types.UINT8)
    assert m == 1  # 5/3 truncated
    (r,), _ = _run([np.uint8([255, 255, 255])], "rms", dtype=types.UINT8)
    assert r == 1  # squares accumulate in uint8: 65025 -> 1
    (q,), _ = _run([np.uint16([65535])], "mean_square")
    assert q == np.float32(-131071)  # DALI squares uint16 in int, which overflows


def test_axis_names_and_layouts():
    data = _batch("float32", [(4, 6, 3), (2, 5, 3)])
    got, layout = _run(data, "sum", layout="HWC", axis_names="HW")
    assert layout == "C"
    for x, g in zip(data, got):
        np.testing.assert_allclose(g, x.sum(axis=(0, 1)), rtol=1e-5)
    got, layout = _run(data, "max", layout="HWC", axis_names="C", keep_dims=True)
    assert layout == "HWC" and got[0].shape == (4, 6, 1)
    _, layout = _run(data, "mean", layout="HWC")
    assert layout == ""
    _, layout = _run(data, "mean", layout="HWC", axes=[1])
    assert layout == "HC"


def test_empty_axes_reduce_nothing_and_empty_samples():
    x = np.float32([[-0.0, np.inf], [-2, np.nan]])
    (s,), _ = _run([x], "min", axes=[])
    np.testing.assert_array_equal(s, x)
    assert np.signbit(s[0, 0])
    (r,), _ = _run([x], "rms", axes=[])
    np.testing.assert_array_equal(r, np.abs(x))
    (v,), _ = _run([x], "variance", mean=[x], axes=[])
    np.testing.assert_array_equal(v, np.zeros_like(x))  # DALI gives zeros
    e = [np.zeros((0, 3), np.float32)]
    assert _run(e, "sum")[0][0] == 0
    assert np.isnan(_run(e, "mean")[0][0])
    assert _run(e, "min")[0][0] == np.finfo(np.float32).max
    assert _run(e, "max", axes=[0])[0][0].tolist() == [np.finfo(np.float32).min] * 3
    assert _run([np.zeros((0, 3), np.uint8)], "min")[0][0] == 255


@pytest.mark.parametrize("op", ["std_dev", "variance"])
@pytest.mark.parametrize("dtype", ["uint8", "int32", "float32"])
def test_std_dev_and_variance_about_the_mean(op, dtype):
    data = _batch(dtype, [(5, 4), (3, 4), (8, 4)])
    means = [x.astype(np.float64).mean(axis=0).astype(np.float32) for x in data]
    for ddof in (0, 1):
        for keep in (False, True):
            m = [mm.reshape(1, 4) if keep else mm for mm in means]
            got, _ = _run(data, op, mean=m, axes=0, ddof=ddof, keep_dims=keep)
            for x, g in zip(data, got):
                ref = x.astype(np.float64).var(axis=0, ddof=ddof, keepdims=keep)
                ref = np.sqrt(ref) if op == "std_dev" else ref
                assert g.dtype == np.float32 and g.shape == ref.shape
                np.testing.assert_allclose(g, ref, rtol=1e-5)
    one = [np.array(mm.mean(), np.float32) for mm in means]  # one mean for every element
    got, _ = _run(data, "variance", mean=one, axes=[0])
    for x, mm, g in zip(data, one, got):
        np.testing.assert_allclose(g, ((x - mm.astype(np.float64)) ** 2).mean(axis=0),
                                   rtol=1e-5)


def test_errors_name_the_operator_and_what_is_wrong():
    x = [np.zeros((2, 3, 4), np.float32)]
    with pytest.raises(ValueError, match="reductions.sum: `axes` and `axis_names` are mutually "
                                         "exclusive; give one of them"):
        _run(x, "sum", layout="HWC", axes=[0], axis_names="H")
    with pytest.raises(ValueError, match=r"reductions.mean: axis 3 is out of range for sample "
                                         r"0, which has 3 dimensions \(expected -3 to 2\)"):
        _run(x, "mean", axes=[3])
    with pytest.raises(ValueError, match=r"reductions.min: axis 0 is reduced twice \(axes "
                                         r"\[0, -3\]\)"):
        _run(x, "min", axes=[0, -3])
    with pytest.raises(ValueError, match=r"reductions.max: axis 0 is reduced twice \(axis_names "
                                         r"'HH'\)"):
        _run(x, "max", layout="HWC", axis_names="HH")
    with pytest.raises(ValueError, match="reductions.rms: axis_names 'X': the input's layout "
                                         "'HWC' has no 'X'"):
        _run(x, "rms", layout="HWC", axis_names="X")
    with pytest.raises(ValueError, match=r"reductions.sum: sample 1 has 2 dimensions, sample 0 "
                                         r"has 3 \(the samples of a batch must agree\)"):
        _run(x + [np.zeros((2, 3), np.float32)], "sum")
    with pytest.raises(TypeError, match="reductions.sum: unsupported input dtype float16; "
                                        "expected one of uint8, int8, uint16, int16, uint32, "
                                        "int32, uint64, int64, float32"):
        _run([np.zeros(3, np.float16)], "sum")
    with pytest.raises(ValueError, match=r"reductions.variance: sample 0's mean has shape "
                                         r"\(5,\) \(5 values\); expected the output's \(3, 4\) "
                                         r"\(12 values\) or a single value"):
        _run(x, "variance", mean=[np.zeros(5, np.float32)], axes=[0])
    with pytest.raises(TypeError, match="reductions.std_dev: the mean must be float32, got int32"):
        _run(x, "std_dev", mean=[np.zeros((3, 4), np.int32)], axes=[0])
    with pytest.raises(TypeError, match="unknown argument 'dtype'"):
        _run(x, "min", dtype=types.FLOAT)


@needs_gpu
@pytest.mark.parametrize("op", ["sum", "min", "max", "mean", "mean_square", "rms"])
@pytest.mark.parametrize("dtype", ["uint8", "int16", "int64", "float32"])
def test_gpu_equals_cpu(op, dtype):
    data = _batch(dtype, [(40, 50, 3), (0, 4, 3), (1, 1, 1), (300, 200, 3)])
    for kwargs in ({}, {"axes": [0, 1]}, {"axes": [2], "keep_dims": True}, {"axes": []}):
        cpu, _ = _run(data, op, **kwargs)
        gpu, _ = _run(data, op, device="gpu", **kwargs)
        for c, g in zip(cpu, gpu):
            assert c.dtype == g.dtype and c.shape == g.shape
            if c.dtype == np.float32:  # float sums run in another order on the GPU
                # (relative ~1e-5 seen; sums that cancel need an absolute bound)
                scale = float(np.nanmax(np.abs(c), initial=1.0))
                np.testing.assert_allclose(g, c, rtol=1e-4, atol=1e-5 * scale, equal_nan=True)
            else:
                np.testing.assert_array_equal(g, c)


@needs_gpu
@pytest.mark.parametrize("op", ["std_dev", "variance"])
def test_gpu_std_dev_and_variance_equal_cpu(op):
    data = _batch("uint8", [(40, 50, 3), (3, 4, 3), (0, 2, 3)], 0, 255)
    means = [x.astype(np.float32).mean(axis=(0, 1)) if x.size else np.zeros(3, np.float32)
             for x in data]
    cpu, _ = _run(data, op, mean=means, axes=[0, 1], ddof=1)
    gpu, _ = _run(data, op, device="gpu", mean=means, axes=[0, 1], ddof=1)
    for c, g in zip(cpu, gpu):
        np.testing.assert_allclose(g, c, rtol=1e-5, equal_nan=True)
