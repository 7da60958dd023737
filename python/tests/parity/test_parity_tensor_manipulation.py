"""squeeze, expand_dims, reinterpret (and reshape's src_dims, shape-input and layout forms), copy,
cast_like, full, full_like, ones, ones_like, zeros, zeros_like and one_hot against DALI 2.4
(CPU): equal values, shapes, dtypes and layouts on ragged batches. Where stoker refuses what
DALI accepts (out-of-range squeeze axes, fills larger than the output: docs/dali_differences.md)
nothing is compared."""
import numpy as np
import pytest

from parity_util import SKIP_REASON, _lib, assert_same, dali, has_gpu, samples

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {op: "exact" for op in (
    "squeeze", "expand_dims", "reinterpret", "copy", "cast_like", "full", "full_like", "ones",
    "ones_like", "zeros", "zeros_like", "one_hot")}

_RNG = np.random.default_rng(4)
X3 = [_RNG.normal(size=s).astype(np.float32) for s in [(2, 1, 3), (4, 1, 1), (0, 1, 5)]]
X2 = [_RNG.integers(0, 100, s).astype(np.int32) for s in [(2, 3), (4, 1), (0, 2)]]
U8 = [np.arange(24, dtype=np.uint8).reshape(2, 3, 4), np.arange(8, dtype=np.uint8).reshape(1, 2, 4)]
F = [np.array([[-3, -1.5, 0], [1.5, 2.5, 4.5]], np.float32), np.array([[300], [-2.5]], np.float32)]
LABELS = [np.array([[0, 2, 1], [3, -1, 2]], np.int32), np.array([[1], [0]], np.int32),
          np.zeros((0, 2), np.int32)]


def _source(batch):
    return lambda: [x.copy() for x in batch]


def _run_both(build, batches, layouts, device="cpu", dali_device=None):
    """build(fn, types, *inputs) in both libraries on external sources feeding `batches` with
    `layouts` (on `device`; DALI on `dali_device` when given): {lib: [(layout, samples)] per
    output}."""
    out = {}
    for lib in ("stoker", "dali"):
        pipeline_def, fn, types, extra = _lib(lib)
        on = device if lib == "stoker" or dali_device is None else dali_device
        if on == "gpu":
            extra = {**extra, "device_id": 0}

        @pipeline_def(batch_size=len(batches[0]), num_threads=2, seed=3, **extra)
        def pipe():
            ins = [fn.external_source(source=_source(b), batch=True, layout=l)
                   for b, l in zip(batches, layouts)]
            if on == "gpu":
                ins = [x.gpu() for x in ins]
            res = build(fn, types, *ins)
            return res if isinstance(res, tuple) else (res,)

        p = pipe()
        p.build()
        res = p.run()
        out[lib] = [(str(b.layout()), samples(b)) for b in res]
    return out


def _compare(build, batches, layouts=None, what="", device="cpu", dali_device=None):
    layouts = layouts if isinstance(layouts, list) else [layouts] * len(batches)
    out = _run_both(build, batches, layouts, device, dali_device)
    for k, ((lay, ours), (dlay, theirs)) in enumerate(zip(out["stoker"], out["dali"])):
        assert lay == dlay, f"{what} output {k}: layout {lay!r} vs DALI {dlay!r}"
        assert_same(ours, theirs, what=f"{what} output {k}")


def test_squeeze_equals_dali():
    _compare(lambda fn, t, a: (fn.squeeze(a, axes=1), fn.squeeze(a, axes=[1]),
                               fn.squeeze(a, axis_names="W")), [X3], "HWC", "squeeze")
    _compare(lambda fn, t, a: fn.squeeze(a, axes=1), [X3], None, "squeeze without layout")
    _compare(lambda fn, t, a: fn.squeeze(a, axes=[0, 1, 2]), [[np.full((1, 1, 1), 7, np.uint8)]],
             "HWC", "squeeze to scalars")
    _compare(lambda fn, t, a: fn.squeeze(a, axes=1), [[np.zeros((0, 3), np.uint8)]], None,
             "squeeze of an empty sample")


def test_expand_dims_equals_dali():
    _compare(lambda fn, t, a: (fn.expand_dims(a, axes=0),
                               fn.expand_dims(a, axes=[0, 3], new_axis_names="FC"),
                               fn.expand_dims(a, axes=[3, 0], new_axis_names="FC"),
                               fn.expand_dims(a, axes=[0, 1], new_axis_names="FC"),
                               fn.expand_dims(a, axes=2, new_axis_names="C"),
                               fn.expand_dims(a, axes=[])), [X2], "HW", "expand_dims")
    _compare(lambda fn, t, a: fn.expand_dims(a, axes=[1, 0], new_axis_names="AB"),
             [[np.float32(3), np.float32(4)]], None, "expand_dims of scalars")


def test_reinterpret_equals_dali():
    def build(fn, t, a):
        return (fn.reinterpret(a, dtype=t.INT32), fn.reinterpret(a, dtype=t.FLOAT16),
                fn.reinterpret(a, dtype=t.INT16, shape=[-1]),
                fn.reinterpret(a, rel_shape=[1, 1, 0.25], dtype=t.INT32),
                fn.reinterpret(a, shape=[4, -1]), fn.reinterpret(a, layout="ABC"),
                fn.reinterpret(a, layout=""), fn.reinterpret(a, dtype=t.BOOL))
    _compare(build, [U8], "HWC", "reinterpret")
    _compare(lambda fn, t, a: fn.reinterpret(a, dtype=t.UINT8), [[np.ones((2, 2), np.float32)]],
             "HW", "reinterpret float32 as bytes")
    shapes = [np.array([6, 2], np.int8), np.array([2, 2], np.int8)]
    _compare(lambda fn, t, a, s: (fn.reinterpret(a, s, dtype=t.INT16),
                                  fn.reinterpret(a, shape=s, dtype=t.INT16)),
             [U8, shapes], None, "reinterpret with a shape input")


def test_reshape_forms_equal_dali():
    _compare(lambda fn, t, a: (fn.reshape(a, src_dims=[1, 0, 2]),
                               fn.reshape(a, rel_shape=[1, -1]),
                               fn.reshape(a, shape=[-1])), [U8], "HWC", "reshape")
    _compare(lambda fn, t, a: (fn.reshape(a, shape=[4, 3, 2]),
                               fn.reshape(a, rel_shape=[1, 1, 1, -1]),
                               fn.reshape(a, rel_shape=[0.5, 2, -1]),
                               fn.reshape(a, src_dims=[-1, 1, 0, 2], rel_shape=[-1, 1, 1, 1]),
                               fn.reshape(a, src_dims=[2, 0, 1], shape=[4, -1])),
             [[U8[0]]], "HWC", "reshape of one sample")
    shapes = [np.array([4, -1], np.int64), np.array([8, 1], np.int64)]
    _compare(lambda fn, t, a, s: fn.reshape(a, s), [U8, shapes], None, "reshape shape input")


def test_copy_and_cast_like_equal_dali():
    refs = {dt: [np.zeros(1, dt), np.zeros(3, dt)] for dt in (np.int16, np.uint8, np.float64)}
    _compare(lambda fn, t, a, b, c, d: (fn.copy(a), fn.cast_like(a, b), fn.cast_like(a, c),
                                        fn.cast_like(a, d)),
             [F, refs[np.int16], refs[np.uint8], refs[np.float64]], ["HW", None, None, None],
             "copy and cast_like")


def test_full_equals_dali():
    fills = [np.array([[1, 2, 3]], np.int16), np.array([[7], [8]], np.int16)]
    _compare(lambda fn, t, f: (fn.full(f, shape=[2, 3]), fn.full(f, shape=[2, 3], layout="HW"),
                               fn.full(f, shape=[4, 2, 3])), [fills], None, "full")
    fills = [np.arange(6, dtype=np.float64).reshape(2, 1, 3), np.ones((1, 4, 1), np.float64)]
    _compare(lambda fn, t, f: fn.full(f, shape=[2, 4, 3]), [fills], None, "full in 3-D")
    shapes = [np.array([2, 2], np.int32), np.array([3, 1], np.int32)]
    _compare(lambda fn, t, f, s: (fn.full(f, shape=s), fn.full(f)),
             [[np.float32(1), np.float32(2)], shapes], None, "full per-sample shape")
    _compare(lambda fn, t, f: fn.full(f, shape=[0, 3]), [[np.arange(3, dtype=np.int8)]], None,
             "full of an empty shape")


def test_full_like_equals_dali():
    like = [np.zeros((2, 3), np.uint8), np.zeros((1, 3), np.uint8)]
    fill = [np.array([-5.5, 300, 2.5], np.float32), np.array([7.5], np.float32)]
    _compare(lambda fn, t, a, f: fn.full_like(a, f), [like, fill], ["HW", None], "full_like")


def test_ones_and_zeros_equal_dali():
    shapes = [np.array([2, 2], np.int32), np.array([3, 1], np.int32)]

    def build(fn, t, s):
        out = ()
        for op in (fn.ones, fn.zeros):
            out += (op(shape=[2, 3], layout="AB"), op(), op(shape=s),
                    op(shape=2, dtype=t.FLOAT16), op(shape=2, dtype=t.BOOL),
                    op(shape=2, dtype=t.UINT64), op(shape=[1, 2], dtype=t.FLOAT64))
        return out
    _compare(build, [shapes], None, "ones and zeros")


def test_ones_and_zeros_like_equal_dali():
    _compare(lambda fn, t, a: (fn.ones_like(a), fn.zeros_like(a),
                               fn.ones_like(a, dtype=t.UINT8), fn.zeros_like(a, dtype=t.INT64)),
             [F], "HW", "ones_like and zeros_like")


@pytest.mark.parametrize("axis", [None, -1, 0, 1, 2])
def test_one_hot_axes_equal_dali(axis):
    kwargs = {} if axis is None else {"axis": axis}
    _compare(lambda fn, t, a: (fn.one_hot(a, num_classes=3, **kwargs),
                               fn.one_hot(a, num_classes=3, axis_name="C", **kwargs)),
             [LABELS], "AB", f"one_hot axis {axis}")


def test_one_hot_values_equal_dali():
    _compare(lambda fn, t, a: (
        fn.one_hot(a, num_classes=3, dtype=t.INT32, on_value=2.5, off_value=-2.5),
        fn.one_hot(a, num_classes=3, dtype=t.UINT8, on_value=300, off_value=-2.5),
        fn.one_hot(a, num_classes=3, dtype=t.FLOAT64, on_value=0.1),
        fn.one_hot(a, num_classes=3, dtype=t.INT64, on_value=-7),
        fn.one_hot(a)), [LABELS], None, "one_hot values")
    _compare(lambda fn, t, a: fn.one_hot(a, num_classes=4),
             [[np.array([0.7, 1.2, 2.5, 3.9, -0.5, 7.0], np.float32)]], None, "float labels")
    _compare(lambda fn, t, a: fn.one_hot(a, num_classes=2),
             [[np.array([2**32, 1, -3], np.int64)]], None, "int64 labels")
    _compare(lambda fn, t, a: fn.one_hot(a, num_classes=5),
             [[np.array([4, 250], np.uint8), np.array([1, 0, 3], np.uint8)]], None,
             "uint8 labels")


def test_one_hot_single_labels_equal_dali():
    _compare(lambda fn, t, a: (fn.one_hot(a, num_classes=4), fn.one_hot(a, num_classes=4,
                                                                        axis_name="C")),
             [[np.int64(2), np.int64(0)]], None, "one_hot of scalars")
    _compare(lambda fn, t, a: (fn.one_hot(a, num_classes=4), fn.one_hot(a, num_classes=4, axis=-1),
                               fn.one_hot(a, num_classes=4, axis=0)),
             [[np.array([[2]], np.uint8), np.array([[1]], np.uint8)]], "XY",
             "one_hot of one-label samples")
    _compare(lambda fn, t, a: fn.one_hot(a, num_classes=4),
             [[np.array([2], np.uint8), np.array([1, 0], np.uint8)]], None,
             "one_hot of mixed samples")


GPU_CASES = [
    ("squeeze", lambda fn, t, a: fn.squeeze(a, axes=1), X3, "HWC"),
    ("expand_dims", lambda fn, t, a: fn.expand_dims(a, axes=[3, 0], new_axis_names="FC"), X2,
     "HW"),
    ("reinterpret", lambda fn, t, a: (fn.reinterpret(a, dtype=t.INT32),
                                      fn.reinterpret(a, dtype=t.INT16, shape=[-1])), U8, "HWC"),
    ("copy", lambda fn, t, a: fn.copy(a), F, "HW"),
    ("cast_like", lambda fn, t, a: (fn.cast_like(a, fn.cast(a, dtype=t.INT16)),
                                    fn.cast_like(a, fn.cast(a, dtype=t.UINT8))), F, "HW"),
    ("one_hot", lambda fn, t, a: (fn.one_hot(a, num_classes=3, axis=1, axis_name="C"),
                                  fn.one_hot(a, num_classes=4, dtype=t.UINT8, on_value=9)),
     LABELS, "AB"),
]


@pytest.mark.parametrize("name,build,data,layout", GPU_CASES, ids=[c[0] for c in GPU_CASES])
def test_gpu_backends_equal_dali(name, build, data, layout):
    if not has_gpu():
        pytest.skip("no CUDA device: the GPU backends are compared on the GPU machine")
    # cast_like's float -> int casts: DALI's GPU rounds halves to even, its CPU away from zero;
    # stoker's GPU equals its CPU (docs/dali_differences.md, "GPU backends"), so it is compared
    # with DALI's CPU (seen on the H200: 2.5 -> 2 on DALI's GPU).
    _compare(build, [data], layout, f"{name} (gpu)", device="gpu",
             dali_device="cpu" if name == "cast_like" else None)
