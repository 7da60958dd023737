"""squeeze, expand_dims, reinterpret (and reshape's DALI forms), copy, cast_like, full,
full_like, ones, ones_like, zeros, zeros_like and one_hot: values against numpy on ragged
batches, layouts, per-sample arguments, the views sharing memory, every error's text, and the
GPU backends against the CPU ones."""
import re

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn, types

needs_gpu = pytest.mark.skipif(not _stoker.cuda_available(),
                               reason="no CUDA device: GPU test skipped")


def _source(batch):
    return lambda: batch


def _run(build, batches, layouts=None, device="cpu"):
    """build(*inputs) on external sources feeding `batches` (lists of arrays, one per input,
    with `layouts`): [(layout, [samples])] per output."""
    layouts = layouts if isinstance(layouts, list) else [layouts] * len(batches)
    # (a GPU is given to CPU-fed pipelines too: their definitions may move values with .gpu())
    pipe = stoker.Pipeline(batch_size=len(batches[0]) if batches else 2, num_threads=2, seed=0,
                           device_id=0 if stoker._stoker.cuda_available() else None)
    with pipe:
        ins = [fn.external_source(_source(b), layout=l, device=device)
               for b, l in zip(batches, layouts)]
        out = build(*ins)
        pipe.set_outputs(*(out if isinstance(out, tuple) else (out,)))
    res = pipe.run()
    return [(b.layout(), [s.numpy().copy() for s in b.as_cpu()]) for b in res]


def _one(build, batches, layouts=None, device="cpu"):
    return _run(build, batches, layouts, device)[0]


def _raises(kind, text, build, batches, layouts=None):
    with pytest.raises(kind, match=re.escape(text)):
        _run(build, batches, layouts)


def _address(a):
    return a.__array_interface__["data"][0]


def _assert_samples(got, expected):
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape, (g.dtype, g.shape, e.dtype, e.shape)
        np.testing.assert_array_equal(g, e)


RNG = np.random.default_rng(21)
X3 = [RNG.normal(size=s).astype(np.float32) for s in [(2, 1, 3), (4, 1, 1), (0, 1, 5)]]


# -- squeeze -------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,axes,layout", [
    (dict(axes=1), (1,), "HC"), (dict(axes=[1]), (1,), "HC"),
    (dict(axis_names="W"), (1,), "HC"), (dict(axes=[]), (), "HWC"),
])
def test_squeeze_removes_axes_of_one(kwargs, axes, layout):
    lay, got = _one(lambda a: fn.squeeze(a, **kwargs), [X3], "HWC")
    assert lay == layout
    _assert_samples(got, [np.squeeze(x, axis=axes) for x in X3])


def test_squeeze_to_scalars_and_of_empty_samples():
    lay, got = _one(lambda a: fn.squeeze(a, axes=[0, 2]), [[np.ones((1, 4, 1), np.int16)] * 2])
    assert lay == "" and got[0].shape == (4,)
    # Removing every axis gives a scalar; an empty sample may lose any axis and stay empty.
    lay, got = _one(lambda a: fn.squeeze(a, axes=[0, 1, 2]), [[np.full((1, 1, 1), 7, np.uint8)]],
                    "HWC")
    assert lay == "" and got[0].shape == () and got[0] == 7
    _, got = _one(lambda a: fn.squeeze(a, axes=1), [[np.zeros((0, 3), np.uint8)]])
    assert got[0].shape == (0,)


def test_squeeze_shares_memory():
    pipe = stoker.Pipeline(batch_size=2, num_threads=1, seed=0)
    with pipe:
        a = fn.external_source(_source(X3[:2]))
        pipe.set_outputs(a, fn.squeeze(a, axes=1), fn.expand_dims(a, axes=0),
                         fn.reinterpret(a, dtype=types.INT32), fn.copy(a))
    a, s, e, r, c = pipe.run()
    for i in range(2):
        base = _address(a[i].numpy())
        assert _address(s[i].numpy()) == base and _address(e[i].numpy()) == base
        assert _address(r[i].numpy()) == base and _address(c[i].numpy()) != base


def test_squeeze_errors():
    _raises(ValueError, "squeeze: axis 1 is given twice", lambda a: fn.squeeze(a, axes=[1, 1]),
            [X3])
    _raises(ValueError, "squeeze: axis 3 is not an axis of sample 0 of shape (2, 1, 3) "
            "(expected 0 to 2)", lambda a: fn.squeeze(a, axes=3), [X3])
    _raises(ValueError, "squeeze: axis -1 is not an axis of sample 0 of shape (2, 1, 3)",
            lambda a: fn.squeeze(a, axes=-1), [X3])
    _raises(ValueError, "squeeze: sample 0 of shape (2, 1, 3) has extent 2 on axis 0; only axes "
            "of extent 1 can be removed", lambda a: fn.squeeze(a, axes=0), [X3])
    _raises(ValueError, "squeeze: axis 'X' of axis_names 'X' is not in the input's layout 'HWC'",
            lambda a: fn.squeeze(a, axis_names="X"), [X3], "HWC")
    _raises(ValueError, "squeeze: axis 'W' of axis_names 'W' is not in the input's layout ''",
            lambda a: fn.squeeze(a, axis_names="W"), [X3])
    _raises(ValueError, "squeeze: give `axes` or `axis_names` (the axes to remove)",
            lambda a: fn.squeeze(a), [X3])
    _raises(ValueError, "squeeze: give `axes` or `axis_names`, not both",
            lambda a: fn.squeeze(a, axes=1, axis_names="W"), [X3], "HWC")
    _raises(TypeError, "argument 'axes' must be a constant",
            lambda a, b: fn.squeeze(a, axes=b), [X3, [np.array([1], np.int32)] * 3])


# -- expand_dims ---------------------------------------------------------------------------

X2 = [RNG.integers(0, 100, s).astype(np.int32) for s in [(2, 3), (4, 1), (0, 2)]]


@pytest.mark.parametrize("axes,names,layout", [
    ([0], None, ""), ([0, 3], "FC", "FHWC"), ([3, 0], "FC", "CHWF"), ([0, 1], "FC", "FCHW"),
    ([2], "C", "HWC"), ([], None, "HW"),
])
def test_expand_dims_inserts_axes_of_one(axes, names, layout):
    lay, got = _one(lambda a: fn.expand_dims(a, axes=axes, new_axis_names=names), [X2], "HW")
    assert lay == layout
    expected = []
    for x in X2:
        for ax in sorted(axes):
            x = np.expand_dims(x, ax)
        expected.append(x)
    _assert_samples(got, expected)


def test_expand_dims_of_scalars_and_errors():
    lay, got = _one(lambda a: fn.expand_dims(a, axes=[1, 0], new_axis_names="AB"),
                    [[np.float32(3), np.float32(4)]])
    assert lay == "BA" and [g.shape for g in got] == [(1, 1), (1, 1)]
    _raises(ValueError, "expand_dims: axis 1 is given twice",
            lambda a: fn.expand_dims(a, axes=[1, 1]), [X2], "HW")
    _raises(ValueError, "expand_dims: axis 3 is out of range for sample 0 of shape (2, 3): the "
            "output has 3 axes", lambda a: fn.expand_dims(a, axes=3), [X2], "HW")
    _raises(ValueError, "expand_dims: axis -1 is negative; axes are positions in the output, "
            "from 0", lambda a: fn.expand_dims(a, axes=-1), [X2], "HW")
    _raises(ValueError, "expand_dims: 2 axes but 1 new_axis_names ('F'); give one name per axis",
            lambda a: fn.expand_dims(a, axes=[0, 1], new_axis_names="F"), [X2], "HW")
    _raises(ValueError, "expand_dims: new_axis_names needs an input with a layout; sample 0 has "
            "shape (2, 3) and none", lambda a: fn.expand_dims(a, axes=0, new_axis_names="F"),
            [X2])
    _raises(TypeError, "missing required argument 'axes'", lambda a: fn.expand_dims(a), [X2])


# -- reinterpret and reshape ---------------------------------------------------------------

U8 = [np.arange(24, dtype=np.uint8).reshape(2, 3, 4), np.arange(8, dtype=np.uint8).reshape(1, 2, 4)]


def test_reinterpret_dtype_rescales_the_innermost_extent():
    lay, got = _one(lambda a: fn.reinterpret(a, dtype=types.INT32), [U8], "HWC")
    assert lay == "HWC"
    _assert_samples(got, [x.view(np.int32) for x in U8])
    _, got = _one(lambda a: fn.reinterpret(a, dtype=types.FLOAT16), [U8], "HWC")
    _assert_samples(got, [x.view(np.float16) for x in U8])
    lay, got = _one(lambda a: fn.reinterpret(a, dtype=types.UINT8), [[np.ones((2, 2), np.float32)]],
                    "HW")
    assert lay == "HW" and got[0].shape == (2, 8)
    np.testing.assert_array_equal(got[0], np.ones((2, 2), np.float32).view(np.uint8))


def test_reinterpret_shapes():
    # a new shape with a new dtype: the inferred extent counts bytes
    lay, got = _one(lambda a: fn.reinterpret(a, dtype=types.INT16, shape=[-1]), [U8], "HWC")
    assert lay == ""
    _assert_samples(got, [x.reshape(-1).view(np.int16) for x in U8])
    _, got = _one(lambda a: fn.reinterpret(a, rel_shape=[1, 1, 0.25], dtype=types.INT32), [U8])
    _assert_samples(got, [x.view(np.int32) for x in U8])
    # the shape input (DALI's second form), of any integer type, and a per-sample `shape`
    shapes = [np.array([6, 2], np.int8), np.array([2, 2], np.int8)]
    _, got = _one(lambda a, s: fn.reinterpret(a, s, dtype=types.INT16), [U8, shapes])
    _assert_samples(got, [U8[0].view(np.int16).reshape(6, 2), U8[1].view(np.int16).reshape(2, 2)])
    shapes = [np.array([4, -1], np.int64), np.array([-1], np.int64)]
    _, got = _one(lambda a, s: fn.reinterpret(a, shape=s), [U8, shapes])
    _assert_samples(got, [U8[0].reshape(4, 6), U8[1].reshape(-1)])
    lay, got = _one(lambda a: fn.reinterpret(a, layout="ABC"), [U8], "HWC")
    assert lay == "ABC"
    lay, got = _one(lambda a: fn.reinterpret(a, layout=""), [U8], "HWC")
    assert lay == ""


def test_reshape_src_dims_rel_shape_and_layouts():
    # the layout survives where the number of axes does
    lay, got = _one(lambda a: fn.reshape(a, shape=[4, 3, 2]), [[U8[0]]], "HWC")
    assert lay == "HWC" and got[0].shape == (4, 3, 2)
    lay, got = _one(lambda a: fn.reshape(a, src_dims=[1, 0, 2]), [U8], "HWC")
    assert lay == "HWC" and [g.shape for g in got] == [(3, 2, 4), (2, 1, 4)]
    lay, got = _one(lambda a: fn.reshape(a, src_dims=[2, -1, 0, 1]), [U8], "HWC")
    assert lay == "" and [g.shape for g in got] == [(4, 1, 2, 3), (4, 1, 1, 2)]
    _, got = _one(lambda a: fn.reshape(a, src_dims=[-1, 1, 0, 2], rel_shape=[-1, 1, 1, 1]),
                  [[U8[0]]])
    assert got[0].shape == (1, 3, 2, 4)
    _, got = _one(lambda a: fn.reshape(a, rel_shape=[1, 1, 1, -1]), [[U8[0]]])
    assert got[0].shape == (2, 3, 4, 1)
    _, got = _one(lambda a: fn.reshape(a, rel_shape=[0.5, 2, -1]), [[U8[0]]])
    assert got[0].shape == (1, 6, 4)
    rel = [np.array([1, -1], np.float32)] * 2
    _, got = _one(lambda a, r: fn.reshape(a, rel_shape=r), [U8, rel])
    assert [g.shape for g in got] == [(2, 12), (1, 8)]
    _, got = _one(lambda a, s: fn.reshape(a, s), [[U8[0]], [np.array([[4, 6]], np.int32)]])
    assert got[0].shape == (4, 6)


def test_reinterpret_and_reshape_errors():
    _raises(ValueError, "reinterpret: the innermost extent of sample 0 of shape (2, 3, 4) holds 4 "
            "bytes, not a multiple of the 8-byte output element",
            lambda a: fn.reinterpret(a, dtype=types.INT64), [U8])
    _raises(ValueError, "reinterpret: sample 0 of shape (2, 3, 4) (24 bytes) cannot become (5,) "
            "of 4-byte elements (20 bytes)", lambda a: fn.reinterpret(a, shape=[5],
                                                                     dtype=types.INT32), [U8])
    _raises(ValueError, "reshape: sample 1 of shape (1, 2, 4) (8 elements) cannot become (4, 3, 0)"
            " (0)", lambda a: fn.reshape(a, shape=[4, 3, -1]), [U8])
    _raises(ValueError, "reinterpret: nothing to do: give `shape`, `rel_shape`, a shape input, "
            "`src_dims`, `dtype` or `layout`", lambda a: fn.reinterpret(a), [U8])
    _raises(ValueError, "reshape: nothing to do: give `shape`, `rel_shape`, a shape input, "
            "`src_dims` or `layout`", lambda a: fn.reshape(a), [U8])
    _raises(ValueError, "reinterpret: layout 'AB' has 2 axes but sample 0 has the 3-D shape "
            "(2, 3, 4)", lambda a: fn.reinterpret(a, layout="AB"), [U8])
    _raises(TypeError, "reinterpret: the shape input must hold integers, got float32",
            lambda a, s: fn.reinterpret(a, s), [U8, [np.array([24], np.float32)] * 2])
    _raises(ValueError, "reinterpret: the shape input, `shape` and `rel_shape` are mutually "
            "exclusive; give one of them", lambda a, s: fn.reinterpret(a, s, shape=[-1]),
            [U8, [np.array([24], np.int32)] * 2])
    _raises(ValueError, "reinterpret: `shape` [0, -1] has an extent of 0",
            lambda a: fn.reinterpret(a, shape=[0, -1]), [U8])
    _raises(ValueError, "reinterpret: `shape` [-1, -1] has more than one negative extent (only "
            "one can be inferred)", lambda a: fn.reinterpret(a, shape=[-1, -1]), [U8])
    _raises(ValueError, "reshape: src_dims[0] = 3 is not an axis of sample 0 of shape (2, 3, 4) "
            "(expected 0 to 2, or -1 for a new axis)", lambda a: fn.reshape(a, src_dims=[3, 0]),
            [U8])
    _raises(ValueError, "reshape: rel_shape has 4 values for sample 0 of shape (2, 3, 4) (use "
            "`src_dims` to add axes)", lambda a: fn.reshape(a, rel_shape=[1, 1, 1, 1]), [U8])
    _raises(ValueError, "reinterpret: sample 0 is a scalar: it has no innermost extent to hold "
            "1-byte elements; give `shape`", lambda a: fn.reinterpret(a, dtype=types.INT8),
            [[np.int16(5)]])
    _raises(TypeError, "unknown argument 'dtype'", lambda a: fn.reshape(a, dtype=types.INT8), [U8])


# -- copy and cast_like --------------------------------------------------------------------

F = [np.array([[-3, -1.5, 0], [1.5, 2.5, 4.5]], np.float32), np.array([[300], [-2.5]], np.float32)]


def test_copy():
    lay, got = _one(lambda a: fn.copy(a), [F], "HW")
    assert lay == "HW"
    _assert_samples(got, F)


@pytest.mark.parametrize("ref,expected", [
    (np.int16, [np.array([[-3, -2, 0], [2, 3, 5]], np.int16), np.array([[300], [-3]], np.int16)]),
    (np.uint8, [np.array([[0, 0, 0], [2, 3, 5]], np.uint8), np.array([[255], [0]], np.uint8)]),
    (np.float64, [f.astype(np.float64) for f in F]),
])
def test_cast_like_takes_the_reference_dtype(ref, expected):
    refs = [np.zeros(1, ref), np.zeros((2, 2, 2), ref)]  # shapes and values are not read
    lay, got = _one(lambda a, b: fn.cast_like(a, b), [F, refs], ["HW", None])
    assert lay == "HW"
    _assert_samples(got, expected)
    _, got = _one(lambda a: fn.cast_like(a, types.Constant(1, dtype=types.INT64)), [F])
    assert all(g.dtype == np.int64 for g in got)


# -- full, ones, zeros and their _like forms -----------------------------------------------

def test_full_broadcasts_each_samples_fill():
    fills = [np.array([1, 2, 3], np.int16), np.array([[7], [8]], np.int16)]
    lay, got = _one(lambda f: fn.full(f, shape=[2, 3], layout="HW"), [fills])
    assert lay == "HW"
    _assert_samples(got, [np.broadcast_to(f, (2, 3)) for f in fills])
    fills = [np.arange(6, dtype=np.float64).reshape(2, 1, 3), np.float64(2.5)]
    _, got = _one(lambda f: fn.full(f, shape=[2, 4, 3]), [fills])
    _assert_samples(got, [np.broadcast_to(f, (2, 4, 3)) for f in fills])
    # no shape: one scalar per sample; a per-sample shape
    _, got = _one(lambda f: fn.full(f), [[np.uint8(4), np.uint8(5)]])
    _assert_samples(got, [np.uint8(4).reshape(()), np.uint8(5).reshape(())])
    shapes = [np.array([2, 2], np.int32), np.array([3, 1], np.int32)]
    _, got = _one(lambda f, s: fn.full(f, shape=s), [[np.float32(1), np.float32(2)], shapes])
    _assert_samples(got, [np.full((2, 2), 1, np.float32), np.full((3, 1), 2, np.float32)])
    _, got = _one(lambda f: fn.full(f, shape=[0, 3]), [[np.arange(3, dtype=np.int8)]])
    assert got[0].shape == (0, 3)
    _, got = _one(lambda a: fn.full(types.Constant(3), shape=[2]), [[np.uint8(1)]])
    _assert_samples(got, [np.full(2, 3, np.int32)])


def test_full_like_converts_the_fill():
    like = [np.zeros((2, 3), np.uint8), np.zeros((1, 3), np.uint8)]
    fill = [np.array([-5.5, 300, 2.5], np.float32), np.array([7.5], np.float32)]
    lay, got = _one(lambda a, f: fn.full_like(a, f), [like, fill], ["HW", None])
    assert lay == "HW"
    _assert_samples(got, [np.array([[0, 255, 3]] * 2, np.uint8), np.full((1, 3), 8, np.uint8)])


@pytest.mark.parametrize("op,value", [(fn.ones, 1), (fn.zeros, 0)])
def test_ones_and_zeros(op, value):
    lay, got = _one(lambda a: op(shape=[2, 3], layout="AB"), [[np.uint8(0)] * 2])
    assert lay == "AB"
    _assert_samples(got, [np.full((2, 3), value, np.int32)] * 2)
    _, got = _one(lambda a: op(), [[np.uint8(0)]])
    _assert_samples(got, [np.array(value, np.int32)])
    for dtype, np_dtype in [(types.FLOAT16, np.float16), (types.BOOL, np.bool_),
                            (types.UINT64, np.uint64), (types.FLOAT64, np.float64)]:
        _, got = _one(lambda a: op(shape=2, dtype=dtype), [[np.uint8(0)]])
        _assert_samples(got, [np.full(2, value, np_dtype)])
    shapes = [np.array([2, 2], np.int32), np.array([3], np.int32)]
    _, got = _one(lambda s: op(shape=s), [shapes])
    _assert_samples(got, [np.full((2, 2), value, np.int32), np.full(3, value, np.int32)])


@pytest.mark.parametrize("op,value", [(fn.ones_like, 1), (fn.zeros_like, 0)])
def test_ones_and_zeros_like(op, value):
    lay, got = _one(lambda a: op(a), [F], "HW")
    assert lay == "HW"
    _assert_samples(got, [np.full(f.shape, value, np.float32) for f in F])
    lay, got = _one(lambda a: op(a, dtype=types.UINT8), [F], "HW")
    assert lay == "HW"
    _assert_samples(got, [np.full(f.shape, value, np.uint8) for f in F])


def test_fill_errors():
    _raises(ValueError, "full: the fill_value of sample 0 has shape (2,), which does not broadcast "
            "to the output's (2, 3) (each extent, from the innermost, must be the output's or 1)",
            lambda f: fn.full(f, shape=[2, 3]), [[np.array([1, 2], np.int16)]])
    _raises(ValueError, "full: the fill_value of sample 0 has shape (3,), which does not broadcast "
            "to the output's ()", lambda f: fn.full(f), [[np.array([1, 2, 3], np.int16)]])
    _raises(ValueError, "full_like: the fill_value of sample 0 has shape (2,), which does not "
            "broadcast to the output's (2, 3)", lambda a, f: fn.full_like(a, f),
            [[np.zeros((2, 3), np.uint8)], [np.array([1, 2], np.float32)]])
    _raises(ValueError, "full: layout 'HWC' has 3 axes but sample 0 has the 2-D shape (2, 3)",
            lambda f: fn.full(f, shape=[2, 3], layout="HWC"), [[np.float32(1)]])
    _raises(ValueError, "zeros: negative extent -1 in the shape of sample 0",
            lambda a: fn.zeros(shape=[2, -1]), [[np.float32(1)]])
    _raises(TypeError, "unknown argument 'dtype'",
            lambda a, f: fn.full_like(a, f, dtype=types.INT8),
            [[np.zeros(2, np.float32)], [np.float32(1)]])
    _raises(TypeError, "unknown argument 'layout'", lambda a: fn.ones_like(a, layout="X"),
            [[np.zeros(2, np.float32)]])


# -- one_hot -------------------------------------------------------------------------------

def _one_hot(x, classes, axis=-1, on=1.0, off=0.0, dtype=np.float32):
    labels = np.trunc(x).astype(np.int64) if x.dtype.kind == "f" else x.astype(np.int64)
    hot = labels[..., None] == np.arange(classes)
    out = np.where(hot, on, off).astype(dtype)
    return np.moveaxis(out, -1, axis if axis >= 0 else out.ndim - 1)


LABELS = [np.array([[0, 2, 1], [3, -1, 2]], np.int32), np.array([[1], [0]], np.int32),
          np.zeros((0, 2), np.int32)]


@pytest.mark.parametrize("axis", [None, -1, 0, 1, 2])
def test_one_hot_along_any_axis(axis):
    kwargs = {} if axis is None else dict(axis=axis)
    lay, got = _one(lambda a: fn.one_hot(a, num_classes=3, **kwargs), [LABELS], "AB")
    assert lay == ""
    _assert_samples(got, [_one_hot(x, 3, -1 if axis is None else axis) for x in LABELS])
    lay, _ = _one(lambda a: fn.one_hot(a, num_classes=3, axis_name="C", **kwargs), [LABELS], "AB")
    at = 2 if axis in (None, -1) else axis
    assert lay == "AB"[:at] + "C" + "AB"[at:]


def test_one_hot_values_dtypes_and_labels():
    _, got = _one(lambda a: fn.one_hot(a, num_classes=3, dtype=types.INT32, on_value=2.5,
                                       off_value=-2.5), [LABELS])
    _assert_samples(got, [_one_hot(x, 3, on=2, off=-2, dtype=np.int32) for x in LABELS])
    # uint8 wraps out-of-range values as DALI's conversion does (300 -> 44, -2.5 -> 254)
    _, got = _one(lambda a: fn.one_hot(a, num_classes=3, dtype=types.UINT8, on_value=300,
                                       off_value=-2.5), [LABELS])
    _assert_samples(got, [_one_hot(x, 3, on=44, off=254, dtype=np.uint8) for x in LABELS])
    _, got = _one(lambda a: fn.one_hot(a, num_classes=3, dtype=types.FLOAT64, on_value=0.1),
                  [LABELS])
    _assert_samples(got, [_one_hot(x, 3, on=np.float32(0.1), dtype=np.float64) for x in LABELS])
    # float labels truncate toward zero; int64 labels are read by their low 32 bits
    floats = [np.array([0.7, 1.2, 2.5, 3.9, -0.5], np.float32)]
    _, got = _one(lambda a: fn.one_hot(a, num_classes=4), [floats])
    _assert_samples(got, [_one_hot(floats[0], 4)])
    _, got = _one(lambda a: fn.one_hot(a, num_classes=2), [[np.array([2**32, 1], np.int64)]])
    _assert_samples(got, [np.eye(2, dtype=np.float32)])
    _, got = _one(lambda a: fn.one_hot(a), [LABELS])
    assert [g.shape for g in got] == [(2, 3, 0), (2, 1, 0), (0, 2, 0)]


def test_one_hot_single_labels_become_vectors():
    # DALI's legacy rule: every sample one label, `axis` not given -> vectors of num_classes
    for batch in ([np.int64(2), np.int64(0)],
                  [np.array([[2]], np.uint8), np.array([[0]], np.uint8)]):
        lay, got = _one(lambda a: fn.one_hot(a, num_classes=4, axis_name="C"), [batch],
                        None if np.ndim(batch[0]) == 0 else "XY")
        assert lay == "C"
        _assert_samples(got, [np.eye(4, dtype=np.float32)[2], np.eye(4, dtype=np.float32)[0]])
    _, got = _one(lambda a: fn.one_hot(a, num_classes=4, axis=-1),
                  [[np.array([2], np.uint8), np.array([1], np.uint8)]])
    assert [g.shape for g in got] == [(1, 4), (1, 4)]
    _, got = _one(lambda a: fn.one_hot(a, num_classes=4),
                  [[np.array([2], np.uint8), np.array([1, 0], np.uint8)]])
    assert [g.shape for g in got] == [(1, 4), (2, 4)]


def test_one_hot_errors():
    _raises(ValueError, "one_hot: axis 3 is out of range for 2-D input (expected -1 to 2)",
            lambda a: fn.one_hot(a, num_classes=3, axis=3), [LABELS])
    _raises(ValueError, "one_hot: axis -2 is out of range for 2-D input (expected -1 to 2)",
            lambda a: fn.one_hot(a, num_classes=3, axis=-2), [LABELS])
    _raises(ValueError, "one_hot: axis_name needs the input's layout to name its 2 axes; got ''",
            lambda a: fn.one_hot(a, num_classes=3, axis_name="C"), [LABELS])
    _raises(ValueError, "one_hot: axis_name must be a single character, got 'CD'",
            lambda a: fn.one_hot(a, num_classes=3, axis_name="CD"), [LABELS], "AB")
    _raises(ValueError, "one_hot: num_classes must be 0 or more, got -1",
            lambda a: fn.one_hot(a, num_classes=-1), [LABELS])
    _raises(TypeError, "one_hot output: unsupported dtype bool; expected one of uint8, int8, "
            "uint16, int16, uint32, int32, uint64, int64, float32, float64",
            lambda a: fn.one_hot(a, num_classes=2, dtype=types.BOOL), [LABELS])
    _raises(TypeError, "one_hot input: unsupported dtype float16",
            lambda a: fn.one_hot(a, num_classes=2), [[np.array([0, 1], np.float16)]])


# -- GPU backends ---------------------------------------------------------------------------

GPU_CASES = [
    ("squeeze", lambda a: fn.squeeze(a, axes=1), X3),
    ("expand_dims", lambda a: fn.expand_dims(a, axes=[0, 3], new_axis_names="FC"), X2),
    ("reinterpret", lambda a: fn.reinterpret(a, dtype=types.INT16, shape=[-1]), U8),
    ("reshape", lambda a: fn.reshape(a, src_dims=[2, -1, 0, 1]), U8),
    ("copy", lambda a: fn.copy(a), F),
    ("cast_like", lambda a: fn.cast_like(a, fn.cast(a, dtype=types.UINT8)), F),
    ("cast_like_same", lambda a: fn.cast_like(a, a), F),
    ("one_hot", lambda a: fn.one_hot(a, num_classes=4, axis=1, dtype=types.UINT8, on_value=7),
     LABELS),
    ("one_hot_float", lambda a: fn.one_hot(fn.cast(a, dtype=types.FLOAT64), num_classes=3),
     LABELS),
]


@needs_gpu
@pytest.mark.parametrize("name,build,data", GPU_CASES, ids=[c[0] for c in GPU_CASES])
def test_gpu_equals_cpu(name, build, data):
    layout = {2: "HW", 3: "HWC"}[data[0].ndim]
    cpu = _one(build, [data], layout)
    gpu = _one(build, [data], layout, device="gpu")
    assert gpu[0] == cpu[0]
    _assert_samples(gpu[1], cpu[1])


@needs_gpu
def test_gpu_shape_input_stays_on_the_host():
    shapes = [np.array([6, 4], np.int32), np.array([2, 4], np.int32)]
    _, got = _one(lambda a, s: fn.reshape(a.gpu(), s), [U8, shapes])
    _assert_samples(got, [U8[0].reshape(6, 4), U8[1].reshape(2, 4)])
