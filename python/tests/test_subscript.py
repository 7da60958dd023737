"""DataNode subscripts (x[1], x[:, 1:3], x[::-1], x[i] per sample, stoker.newaxis) against
numpy's indexing, layouts, every error with its text, and the GPU backend against the CPU one."""
import re

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn

needs_gpu = pytest.mark.skipif(not _stoker.cuda_available(),
                               reason="no CUDA device: GPU test skipped")

na = stoker.newaxis


def _ragged(seed=0, dtype=np.int32):
    rng = np.random.default_rng(seed)
    return [rng.integers(-1000, 1000, shape).astype(dtype)
            for shape in ((2, 3, 4), (3, 4, 5), (2, 6, 2), (4, 2, 3))]


def _run(index, data, layout="HWC", device="cpu", extra=None):
    """index(x[, *extra_nodes]) on an external source of `data`: (samples, layout)."""
    pipe = stoker.Pipeline(batch_size=len(data), num_threads=2, seed=1,
                           device_id=0 if device == "gpu" else None)
    with pipe:
        x = fn.external_source(lambda: data, layout=layout)
        if device == "gpu":
            x = x.gpu()
        nodes = [fn.external_source((lambda v: lambda: v)(v)) for v in (extra or [])]
        pipe.set_outputs(index(x, *nodes))
    (out,) = pipe.run()
    if device == "gpu":
        out = out.as_cpu()
    return [np.array(out.at(i)) for i in range(len(data))], out.layout()


# (expression on the DataNode, the same on a numpy array, the result's layout from "HWC")
CASES = [
    (lambda x: x[1], lambda a: a[1], "WC"),
    (lambda x: x[-1], lambda a: a[-1], "WC"),
    (lambda x: x[:, 1:3], lambda a: a[:, 1:3], "HWC"),
    (lambda x: x[0, 0, 1], lambda a: a[0, 0, 1], ""),
    (lambda x: x[::2], lambda a: a[::2], "HWC"),
    (lambda x: x[::-1], lambda a: a[::-1], "HWC"),
    (lambda x: x[:, ::-2, 1:], lambda a: a[:, ::-2, 1:], "HWC"),
    (lambda x: x[:, 3:0:-1], lambda a: a[:, 3:0:-1], "HWC"),
    (lambda x: x[-100:100, 100:-100:-1], lambda a: a[-100:100, 100:-100:-1], "HWC"),
    (lambda x: x[:, 5:1], lambda a: a[:, 5:1], "HWC"),
    (lambda x: x[0][0], lambda a: a[0][0], "C"),
    (lambda x: x[None, 0], lambda a: a[:, 0], "HC"),  # as DALI: None is a full range
    (lambda x: x[:, :, :], lambda a: a, "HWC"),
    (lambda x: x[()], lambda a: a, "HWC"),
    (lambda x: x[True], lambda a: a[1], "WC"),
    (lambda x: x[np.int64(-2)], lambda a: a[-2], "WC"),
    (lambda x: (x + 1)[:, -1], lambda a: (a + 1)[:, -1], "HC"),
    (lambda x: x[na], lambda a: a[None], ""),
    (lambda x: x[1, na], lambda a: a[1, None], ""),
    (lambda x: x[:, :, :, na], lambda a: a[..., None], ""),
    (lambda x: x[0, 0, 0, na, na], lambda a: a[0, 0, 0, None, None], ""),
    (lambda x: x[na("F")], lambda a: a[None], "FHWC"),
    (lambda x: x[na("A"), na("B"), 0], lambda a: a[None, None, 0], "ABWC"),
    (lambda x: x[1, na("A"), ::-1], lambda a: a[1, None, ::-1], "AWC"),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_equals_numpy(case):
    index, reference, layout = CASES[case]
    data = _ragged(case)
    got, got_layout = _run(index, data)
    assert got_layout == layout
    for g, a in zip(got, data):
        want = reference(a)
        assert g.shape == want.shape and g.dtype == want.dtype
        np.testing.assert_array_equal(g, want)


def test_random_subscripts_equal_numpy():
    """Random indices and ranges (both directions, out-of-range bounds) on up to 7 axes."""
    rng = np.random.default_rng(3)
    for trial in range(40):
        ndim = int(rng.integers(1, 8))
        data = [rng.integers(0, 100, tuple(int(rng.integers(1, 4)) for _ in range(ndim)))
                .astype(np.uint16) for _ in range(3)]
        smallest = np.min([a.shape for a in data], axis=0)
        subs = []
        for k in range(int(rng.integers(0, ndim + 1))):
            kind = rng.integers(0, 3)
            if kind == 0:
                subs.append(int(rng.integers(-smallest[k], smallest[k])))
            else:
                def bound():
                    return None if rng.random() < 0.3 else int(rng.integers(-5, 6))
                subs.append(slice(bound(), bound(), [None, 1, 2, -1, -2, 3][rng.integers(0, 6)]))
        subs = tuple(subs)
        got, _ = _run(lambda x: x[subs], data, layout="")
        for g, a in zip(got, data):
            np.testing.assert_array_equal(g, a[subs], err_msg=f"trial {trial}: {subs}")


def test_per_sample_indices_and_bounds():
    data = _ragged(7)
    idx = [np.int32(v) for v in (1, -1, 0, 3)]
    got, layout = _run(lambda x, i: x[i], data, extra=[idx])
    assert layout == "WC"
    for g, a, i in zip(got, data, idx):
        np.testing.assert_array_equal(g, a[int(i)])
    lo = [np.int64(v) for v in (1, -2, 0, 5)]
    step = [np.uint8(v) for v in (1, 2, 3, 1)]
    got, _ = _run(lambda x, lo, s: x[:, lo::s], data, extra=[lo, step])
    for g, a, b, s in zip(got, data, lo, step):
        np.testing.assert_array_equal(g, a[:, int(b)::int(s)])
    neg = [np.int16(v) for v in (-1, -2, -1, -3)]
    got, _ = _run(lambda x, s: x[1::s, 0], data[:1] * 4, extra=[neg])
    for g, s in zip(got, neg):
        np.testing.assert_array_equal(g, data[0][1::int(s), 0])


def _error(index, data, extra=None, layout="HWC"):
    with pytest.raises(Exception) as e:
        _run(index, data, layout=layout, extra=extra)
    return e.type, re.sub(r"\(defined at [^)]*\)", "(defined at ...)", str(e.value))


def test_run_time_errors_name_the_problem():
    data = _ragged(1)
    prefix = "Error in operator _tensor_subscript (defined at ...), iteration 0, "
    assert _error(lambda x: x[3], data) == (
        IndexError, prefix + "sample 0: _tensor_subscript: index 3 is out of range for axis 0 "
                             "of length 2 (shape (2, 3, 4))")
    assert _error(lambda x: x[:, -5], data) == (
        IndexError, prefix + "sample 0: _tensor_subscript: index -5 is out of range for axis 1 "
                             "of length 3 (shape (2, 3, 4))")
    assert _error(lambda x: x[0, 0, 0, 0], data) == (
        IndexError, prefix + "_tensor_subscript: too many indices (4) for a 3-D tensor")
    assert _error(lambda x: x[:, :, :, na, :], data) == (
        IndexError, prefix + "_tensor_subscript: too many indices (4) for a 3-D tensor")
    assert _error(lambda x: x[:, :, :, :, na], data) == (
        IndexError, prefix + "_tensor_subscript: too many indices: a new axis at position 4 "
                             "of a result with 4 dimensions")
    assert _error(lambda x: x[na("A")], data, layout="") == (
        ValueError, prefix + "_tensor_subscript: naming new axes ('A') needs an input with a "
                             "layout")
    assert _error(lambda x: x[:, :, :, :], data) == (
        IndexError, "Error in operator _subscript_dim_check (defined at ...), iteration 0, "
                    "_subscript_dim_check: too many indices (4) for a 3-D tensor")
    assert _error(lambda x, s: x[::s], data, extra=[[np.int32(v) for v in (1, 0, 1, 1)]]) == (
        ValueError, prefix + "sample 1: _tensor_subscript: the step of axis 0 is 0")
    assert _error(lambda x, i: x[i], data, extra=[[np.float32(1)] * 4]) == (
        TypeError, prefix + "_tensor_subscript: the index of axis 0 (`at_0`) must be an "
                            "integer, got float32")
    assert _error(lambda x, i: x[:, :i], data, extra=[[np.array([1], np.int32)] * 4]) == (
        ValueError, prefix + "sample 0: _tensor_subscript: the end of axis 1 (`hi_1`) must be "
                             "a scalar (0-D) per sample, got shape (1,)")
    scalars = [np.int32(5)] * 2
    assert _error(lambda x: x[0], scalars, layout="") == (
        IndexError, prefix + "_tensor_subscript: cannot index a scalar (a 0-D tensor)")


def test_definition_errors():
    pipe = stoker.Pipeline(batch_size=1)
    with pipe:
        x = fn.external_source(lambda: [np.zeros((2, 2))])
        with pytest.raises(NotImplementedError, match="^Ellipsis in indexing is not "
                                                      "implemented$"):
            x[..., 0]
        with pytest.raises(TypeError, match="^Invalid type for an index: float$"):
            x[1.5]
        with pytest.raises(TypeError, match="^Invalid type for an index: list"):
            x[[0, 1]]
        with pytest.raises(ValueError, match="^New axis name must be specified for all axes "
                                             "or none.$"):
            x[na("A"), na]
        with pytest.raises(TypeError, match="a DataNode is not iterable"):
            list(x)
        with pytest.raises(ValueError, match="single-character"):
            na("AB")
        with pytest.raises(TypeError, match="single-character"):
            na(3)
    for args, message in [
            (dict(at_0=1, lo_0=0), "_tensor_subscript: the subscript of axis 0 is both an index "
                                   "(at_0) and a range (lo_0/hi_0)"),
            (dict(at_1=1, step_1=2), "_tensor_subscript: the subscript of axis 1 is an index "
                                     "(at_1): it cannot have a step (step_1)"),
            (dict(at_1=1, num_subscripts=1), "_tensor_subscript: num_subscripts (1) is less "
                                             "than the subscripts given (2)")]:
        pipe = stoker.Pipeline(batch_size=1)
        with pipe:
            x = fn.external_source(lambda: [np.zeros((2, 2))])
            pipe.set_outputs(fn._tensor_subscript(x, **args))
        with pytest.raises(ValueError, match=re.escape(message) + "$"):
            pipe.build()


def test_views_and_copies_give_the_same_values_downstream():
    """x[1][0] (a view of the input) and x[:, 1][0] (a copy) feed other operators like any
    value."""
    data = _ragged(9, np.float32)
    got, _ = _run(lambda x: fn.cast(x[1][0], dtype=stoker.types.INT32) + x[:, 1][0], data)
    for g, a in zip(got, data):
        np.testing.assert_array_equal(g, a[1][0].astype(np.int32) + a[:, 1][0])


def test_dali_names_are_accepted():
    """DALI's own spelling of the internal operator works too."""
    data = _ragged(2)
    got, _ = _run(lambda x: fn._tensor_subscript(x, lo_1=1, step_1=-1, num_subscripts=2), data)
    for g, a in zip(got, data):
        np.testing.assert_array_equal(g, a[:, 1::-1])


@needs_gpu
@pytest.mark.parametrize("case", range(len(CASES)))
def test_gpu_equals_cpu(case):
    index = CASES[case][0]
    data = _ragged(case, np.float32)
    cpu, cpu_layout = _run(index, data)
    gpu, gpu_layout = _run(index, data, device="gpu")
    assert gpu_layout == cpu_layout
    for g, c in zip(gpu, cpu):
        np.testing.assert_array_equal(g, c)


@needs_gpu
def test_gpu_per_sample_indices():
    data = _ragged(5)
    idx = [[np.int32(v) for v in (1, -1, 0, 2)]]
    cpu, _ = _run(lambda x, i: x[:, ::-1][i], data, extra=idx)
    gpu, _ = _run(lambda x, i: x[:, ::-1][i], data, extra=idx, device="gpu")
    for g, c in zip(gpu, cpu):
        np.testing.assert_array_equal(g, c)
