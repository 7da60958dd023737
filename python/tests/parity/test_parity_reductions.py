"""fn.reductions.* against DALI 2.4, bit for bit (NaN, -0.0 and integer wrap-around included):
ragged batches of every input type DALI takes, every output `dtype` it allows, axes given by
index (negative too), by name and not at all, empty `axes`, keep_dims, empty samples, and
std_dev/variance about given means with several ddof; output layouts too."""
import warnings

import numpy as np
import pytest

from parity_util import SKIP_REASON, _lib, dali, samples

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

_SIMPLE = ("sum", "min", "max", "mean", "mean_square", "rms")
_WITH_MEAN = ("std_dev", "variance")
PARITY = {f"reductions.{op}": "exact" for op in _SIMPLE + _WITH_MEAN}

_INT_TYPES = ("uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64")
_TYPES = _INT_TYPES + ("float32",)
# The output types DALI 2.4 allows per reduction and input (its `dtype`).
_WIDE = {t: ("int64" if t.startswith("int") else "uint64") for t in _INT_TYPES}


def _out_types(op, t):
    if t == "float32":
        return ["float32"]
    if op == "sum":
        return [t, _WIDE[t]] + ([] if t.endswith("64") else ["float32"])
    if op in ("mean", "rms"):
        return [t, "float32"]
    return sorted({_WIDE[t], "float32"})  # mean_square


def _data(t, shapes, seed):
    rng = np.random.default_rng(seed)
    out = []
    for s in shapes:
        if t == "float32":
            x = (rng.standard_normal(s) * 100).astype(np.float32)
        else:
            info = np.iinfo(t)
            # Full-range values: sums, squares and conversions wrap and overflow as DALI's.
            x = rng.integers(info.min, info.max, s, dtype=t, endpoint=True)
        out.append(x)
    return out


def _run(lib, data, layout, build, batch_size=None):
    pipeline_def, fn, types, extra = _lib(lib)

    @pipeline_def(batch_size=batch_size or len(data), num_threads=2, seed=1, **extra)
    def pipe_def():
        x = fn.external_source(source=lambda: [d.copy() for d in data], batch=True,
                               layout=layout or None)
        res = build(fn, types, x)
        return tuple(res) if isinstance(res, (list, tuple)) else (res,)

    pipe = pipe_def()
    pipe.build()
    return [(str(b.layout() or ""), samples(b)) for b in pipe.run()]


def _const(batch):
    return lambda: batch


def _bits(x):
    x = np.ascontiguousarray(x)
    return x.view(np.uint32) if x.dtype == np.float32 else x


def _assert_like_dali(data, layout, build, what):
    ours = _run("stoker", data, layout, build)
    theirs = _run("dali", data, layout, build)
    assert len(ours) == len(theirs)
    for k, ((lo, a), (ld, b)) in enumerate(zip(ours, theirs)):
        assert lo == ld, f"{what} output {k}: layout {lo!r} vs DALI {ld!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            where = f"{what} output {k} sample {i}"
            assert x.shape == y.shape, f"{where}: shape {x.shape} vs DALI {y.shape}"
            assert x.dtype == y.dtype, f"{where}: dtype {x.dtype} vs DALI {y.dtype}"
            assert np.array_equal(_bits(x), _bits(y)), f"{where}:\n{x}\nDALI:\n{y}"


_SHAPES = [(3, 40, 5), (0, 7, 2), (1, 1, 1), (9, 2, 37)]
_AXES = [None, [], [0], [1], [2], -1, [0, 2], [1, 2], [0, 1, 2], [-3, 1]]


@pytest.mark.parametrize("t", _TYPES)
@pytest.mark.parametrize("op", _SIMPLE)
def test_types_and_axes_equal_dali(op, t):
    data = _data(t, _SHAPES, seed=len(op) + _TYPES.index(t))
    dtypes = [None] + ([] if op in ("min", "max") else _out_types(op, t))

    def build(fn, types, x):
        outs = []
        for axes in _AXES:
            for dt in dtypes:
                kw = {} if axes is None else {"axes": axes}
                if dt is not None:
                    kw["dtype"] = getattr(types, dt.upper() if dt != "float32" else "FLOAT")
                outs.append(getattr(fn.reductions, op)(x, **kw))
        return outs

    _assert_like_dali(data, "", build, f"{op} {t}")


@pytest.mark.parametrize("op", _SIMPLE)
def test_axis_names_keep_dims_and_layouts_equal_dali(op):
    data = _data("float32", [(4, 6, 3), (2, 50, 3), (0, 3, 3)], seed=3)

    def build(fn, types, x):
        f = getattr(fn.reductions, op)
        return [f(x, axis_names="HW"), f(x, axis_names="C", keep_dims=True),
                f(x, axis_names="WH"), f(x, keep_dims=True), f(x), f(x, axis_names=""),
                f(x, axes=[0], keep_dims=True), f(x, axes=1)]

    _assert_like_dali(data, "HWC", build, op)


def test_long_runs_sum_in_dalis_order():
    # Long and oddly split runs: the pairwise order decides the float32 result's last bits.
    data = _data("float32", [(1000,), (33,), (4097,), (65,)], seed=9)
    big = _data("float32", [(7, 1, 300), (64, 3, 33), (5, 1, 1)], seed=10)

    def build(fn, types, x):
        return [fn.reductions.sum(x), fn.reductions.mean(x), fn.reductions.rms(x)]

    def build3(fn, types, x):
        return [fn.reductions.sum(x, axes=[0, 2]), fn.reductions.mean_square(x, axes=[0, 2]),
                fn.reductions.sum(x, axes=[0, 1])]

    _assert_like_dali(data, "", build, "1-D runs")
    _assert_like_dali(big, "", build3, "split runs")


def test_special_values_equal_dali():
    x = np.float32([[-0.0, np.inf, -np.inf], [1, -2, np.nan], [np.inf, np.inf, 3]])
    data = [x, x.T.copy(), np.zeros((0, 3), np.float32)]

    def build(fn, types, x):
        r = fn.reductions
        return [r.min(x), r.max(x, axes=0), r.min(x, axes=1), r.sum(x, axes=[]),
                r.min(x, axes=[]), r.rms(x, axes=[]), r.mean(x, axes=0), r.mean(x)]

    _assert_like_dali(data, "", build, "special values")


@pytest.mark.parametrize("t", _TYPES)
@pytest.mark.parametrize("op", _WITH_MEAN)
def test_std_dev_and_variance_equal_dali(op, t):
    data = _data(t, [(3, 40, 5), (0, 7, 2), (2, 1, 1), (5, 3, 37)], seed=_TYPES.index(t))
    # Means of the same shapes as the outputs (and keep_dims shapes), and single values.
    cases = [(None, False), ([1], False), ([0, 2], True), ([2], False), (-1, True)]

    def means(axes, keep):
        out = []
        for i, d in enumerate(data):
            ax = tuple(range(d.ndim)) if axes is None else (
                tuple(axes) if isinstance(axes, list) else axes)
            with warnings.catch_warnings():  # means of empty samples: NaN, then 0
                warnings.simplefilter("ignore", RuntimeWarning)
                m = d.astype(np.float64).mean(axis=ax, keepdims=keep) + 0.25 * i
            out.append(np.array(np.nan_to_num(m), dtype=np.float32))
        return out

    def build(fn, types, x):
        f = getattr(fn.reductions, op)
        outs = []
        for axes, keep in cases:
            ms = means(axes, keep)
            m = fn.external_source(source=_const(ms), batch=True)
            kw = {} if axes is None else {"axes": axes}
            for ddof in (0, 1, 3):
                outs.append(f(x, m, ddof=ddof, keep_dims=keep, **kw))
        one = fn.external_source(source=lambda: [np.array(1.5 * i, np.float32) for i in range(4)],
                                 batch=True)
        outs.append(f(x, one))
        outs.append(f(x, m, axes=[]))  # empty axes: zeros in DALI
        return outs

    _assert_like_dali(data, "", build, f"{op} {t}")
