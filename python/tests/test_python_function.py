"""fn.python_function and fn.torch_python_function: Python code inside a pipeline, run on a
Python thread of stoker's (its pipeline threads never take the GIL), checked against the same
computation in numpy, per sample and per batch, with several inputs and outputs, errors with
the function's traceback and its time in the statistics (against DALI: parity/)."""

import numpy as np
import pytest

import stoker
from stoker import fn, ops, pipeline_def

BATCH = 4


def source(info):
    return np.arange(6, dtype=np.float32).reshape(2, 3) * (info.idx_in_epoch + 1)


def build(body, **kwargs):
    @pipeline_def(batch_size=BATCH, num_threads=2, seed=3, **kwargs)
    def p():
        x = fn.external_source(source, batch=False)
        return body(x)
    return p()


def arrays(batch):
    return [np.array(s) for s in batch]


def test_per_sample_with_two_inputs_and_two_outputs():
    def both(a, b):
        return a + b, (a * b).sum(axis=1).astype(np.float64)

    pipe = build(lambda x: fn.python_function(x, x * 2, function=both, num_outputs=2,
                                              output_layouts=["HW", ""]))
    s, p = pipe.run()
    for i in range(BATCH):
        a = np.arange(6, dtype=np.float32).reshape(2, 3) * (i + 1)
        np.testing.assert_array_equal(np.array(s[i]), a * 3)
        np.testing.assert_array_equal(np.array(p[i]), (a * a * 2).sum(axis=1))
    assert s.layout() == "HW" and p.dtype.name.lower() in ("float64", "f64")


def test_batch_processing_gets_lists_and_may_return_an_array():
    seen = []

    def batch(xs):
        seen.append(len(xs))
        return np.stack(xs)[:, 0, :] - 1  # one array whose first axis is the batch

    pipe = build(lambda x: fn.python_function(x, function=batch, batch_processing=True))
    (out,) = pipe.run()
    assert seen[0] == BATCH
    for i, o in enumerate(out):
        np.testing.assert_array_equal(np.array(o), np.arange(3) * (i + 1) - 1)


def test_torch_function_gets_tensors_without_a_copy():
    torch = pytest.importorskip("torch")

    def double(t):
        assert isinstance(t, torch.Tensor)
        return t * 2

    pipe = build(lambda x: fn.torch_python_function(x, function=double))
    (out,) = pipe.run()
    np.testing.assert_array_equal(np.array(out[1]), np.arange(6).reshape(2, 3) * 4)


def test_the_functions_error_names_the_operator_and_has_its_traceback():
    def broken(a):
        raise KeyError("no such label")

    pipe = build(lambda x: fn.python_function(x, function=broken))
    with pytest.raises(RuntimeError) as e:
        pipe.run()
    text = str(e.value)
    assert "python_function" in text and "broken" in text and "no such label" in text
    assert "Traceback" in text or "line" in text


def test_wrong_outputs_are_refused_clearly():
    pipe = build(lambda x: fn.python_function(x, function=lambda a: a, num_outputs=2))
    with pytest.raises(RuntimeError, match="num_outputs=2, so the function returns a tuple"):
        pipe.run()
    pipe = build(lambda x: fn.python_function(x, function=lambda xs: xs[:2],
                                              batch_processing=True))
    with pytest.raises(ValueError, match="output 0 has 2 samples, the batch has 4"):
        pipe.run()
    # Samples of one batch share their rank (DALI refuses others too).
    def ranks(xs):
        return xs[:1] + [x[0] for x in xs[1:]]

    pipe = build(lambda x: fn.python_function(x, function=ranks, batch_processing=True))
    with pytest.raises(RuntimeError, match="sample 1 has 1 dimensions, sample 0 has 2"):
        pipe.run()


def test_output_layouts_follow_dalis_rule():
    # DALI's python_function: without output_layouts no output has a layout (not even one of
    # an input's dimensions); a string goes to every output; a list to the first outputs.
    @pipeline_def(batch_size=BATCH, num_threads=1, seed=1)
    def p():
        x = fn.external_source(source, batch=False, layout="HW")
        plain = fn.python_function(x, function=lambda a: a + 1)
        both = fn.python_function(x, x, function=lambda a, b: (b, a), num_outputs=2,
                                  output_layouts="XY")
        first = fn.python_function(x, function=lambda a: (a, a[0]), num_outputs=2,
                                   output_layouts=["AB"])
        torch_like = fn.torch_python_function(x, function=lambda t: t, output_layouts=[]) \
            if _has_torch() else fn.python_function(x, function=lambda a: a, output_layouts=[])
        batch = fn.dl_tensor_python_function(x, function=lambda a: a)
        return (plain, *both, *first, torch_like, batch)

    outs = p().run()
    assert [o.layout() for o in outs] == ["", "XY", "XY", "AB", "", "", ""]
    np.testing.assert_array_equal(np.array(outs[4][1]), np.arange(3) * 2)


def _has_torch():
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def test_output_layout_errors():
    one = lambda x: fn.python_function(x, function=lambda a: a,  # noqa: E731
                                       output_layouts=["HW", "C"])
    with pytest.raises(ValueError, match="output_layouts has 2 entries, more than the 1"):
        build(one)
    with pytest.raises(TypeError, match="output_layouts must be a layout string"):
        build(lambda x: fn.python_function(x, function=lambda a: a, output_layouts=5))
    with pytest.raises(TypeError, match="output_layouts must be a layout string"):
        build(lambda x: fn.python_function(x, function=lambda a: a, output_layouts=["H", 1]))
    # A layout that does not fit the samples fails where the batch shows it (DALI: ValueError
    # when the batch is next used).
    pipe = build(lambda x: fn.python_function(x, function=lambda a: a, output_layouts="HWC"))
    with pytest.raises(ValueError, match="the layout 'HWC', but its samples have 2 dim"):
        pipe.run()


def test_its_time_is_in_the_statistics():
    import time

    def slow(a):
        time.sleep(0.01)
        return a

    pipe = build(lambda x: fn.python_function(x, function=slow, name="slow"))
    for _ in range(3):
        pipe.run()
    counters = pipe.operator_stats("slow")
    assert counters["calls"] >= 3
    assert counters["function_seconds"] >= 3 * BATCH * 0.01 * 0.9
    op = next(o for o in pipe.stats()["operators"] if o["name"] == "slow")
    assert op["seconds"] >= counters["function_seconds"] * 0.9


def test_the_class_form_and_many_pipelines_at_once():
    pf = ops.PythonFunction(function=lambda a: a + 1)
    pipes = [build(lambda x: pf(x)) for _ in range(3)]
    for p in pipes:
        (out,) = p.run()
        np.testing.assert_array_equal(np.array(out[0]), np.arange(6).reshape(2, 3) + 1)


def test_a_pipeline_with_a_python_function_is_not_serialized():
    @pipeline_def(batch_size=BATCH, num_threads=1, seed=1)
    def p():
        return fn.python_function(fn.random.uniform(shape=[2]), function=np.negative,
                                  name="neg")
    pipe = p()
    assert np.all(np.array(pipe.run()[0][0]) <= 0)
    with pytest.raises(ValueError, match="python_function 'neg' runs a Python function"):
        pipe.serialize()


def _gpu():
    from stoker import _stoker

    if not _stoker.cuda_available():
        pytest.skip("no GPU: the GPU forms run on the GPU machine")


def test_on_the_gpu_torch_gets_cuda_tensors():
    _gpu()
    torch = pytest.importorskip("torch")

    def f(t):
        assert t.is_cuda
        return t * 2 + 1

    def g(ts):  # per batch: a list of tensors in, one stacked tensor out
        return torch.stack(ts) - 1

    pipe = build(lambda x: (fn.torch_python_function(x.gpu(), function=f),
                            fn.torch_python_function(x.gpu(), function=g, batch_processing=True)),
                 device_id=0)
    a, b = pipe.run()
    for i in range(BATCH):
        x = np.arange(6, dtype=np.float32).reshape(2, 3) * (i + 1)
        np.testing.assert_array_equal(np.array(a.as_cpu()[i]), x * 2 + 1)
        np.testing.assert_array_equal(np.array(b.as_cpu()[i]), x - 1)


def test_on_the_gpu_cupy_takes_the_samples():
    _gpu()
    cupy = pytest.importorskip("cupy")

    def f(s):
        return cupy.asarray(s) ** 2  # CUDA array interface in, out

    pipe = build(lambda x: fn.python_function(x.gpu(), function=f), device_id=0)
    (out,) = pipe.run()
    x = np.arange(6, dtype=np.float32).reshape(2, 3) * 3
    np.testing.assert_array_equal(np.array(out.as_cpu()[2]), x ** 2)
    with pytest.raises(TypeError, match="is host data; on the GPU the function returns GPU"):
        build(lambda x: fn.python_function(x.gpu(), function=lambda s: np.zeros(1)),
              device_id=0).run()


def test_dropping_a_pipeline_while_its_function_runs_does_not_hang():
    import gc
    import time

    def slow(a):
        time.sleep(0.05)  # the pipeline prefetches: calls are in flight when it goes
        return a

    pipe = build(lambda x: fn.python_function(x, function=slow))
    pipe.run()
    start = time.monotonic()
    del pipe
    gc.collect()
    assert time.monotonic() - start < 5


# -- dl_tensor_python_function: DLPack capsules in and out (DALI's DLTensorPythonFunction) --


class _Producer:
    """A capsule as a DLPack producer: numpy's from_dlpack takes producers, not capsules."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, stream=None, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


def from_capsule(capsule):
    return np.from_dlpack(_Producer(capsule))


def is_capsule(x):
    return type(x).__name__ == "PyCapsule"


def test_dl_tensor_function_takes_lists_of_capsules_per_batch_by_default():
    seen = []

    def f(xs, ys):  # batch_processing=True is DALI's default for this operator
        seen.append((len(xs), all(is_capsule(c) for c in xs + ys)))
        xs, ys = [from_capsule(x) for x in xs], [from_capsule(y) for y in ys]  # each once
        return ([(x + y).__dlpack__() for x, y in zip(xs, ys)],
                # strided: copied. x * 1: numpy marks arrays from legacy capsules read-only
                # and exports no read-only array as a legacy capsule.
                [(x * 1)[:, :1].__dlpack__() for x in xs])

    pipe = build(lambda x: fn.dl_tensor_python_function(x, x * 2, function=f, num_outputs=2,
                                                        output_layouts=["HW"]))
    s, c = pipe.run()
    assert seen[0] == (BATCH, True)
    for i in range(BATCH):
        a = np.arange(6, dtype=np.float32).reshape(2, 3) * (i + 1)
        np.testing.assert_array_equal(np.array(s[i]), a * 3)
        np.testing.assert_array_equal(np.array(c[i]), a[:, :1])
    assert (s.layout(), c.layout()) == ("HW", "")


def test_dl_tensor_function_per_sample_and_without_inputs():
    calls = []

    def count():
        calls.append(1)
        # a versioned capsule (DLPack 1.0) as well as the legacy ones DALI takes
        return np.full(2, len(calls), np.int64).__dlpack__(max_version=(1, 0))

    def one(c):
        assert is_capsule(c)
        return (c, 7)  # num_outputs=1: a tuple's first entry is the output (DALI's rule)

    pipe = build(lambda x: (fn.dl_tensor_python_function(function=count, batch_processing=False),
                            fn.dl_tensor_python_function(x, function=one,
                                                         batch_processing=False)))
    a, b = pipe.run()
    assert [np.array(s).tolist() for s in a] == [[k, k] for k in range(1, BATCH + 1)]
    np.testing.assert_array_equal(np.array(b[3]), np.arange(6).reshape(2, 3) * 4)


def test_dl_tensor_function_takes_objects_with_dlpack_and_its_class_form():
    # stoker's addition: arrays with __dlpack__ (numpy here) stand for capsules.
    op = ops.DLTensorPythonFunction(function=lambda xs: [from_capsule(x).sum(0) for x in xs],
                                    synchronize_stream=False)
    (out,) = build(lambda x: op(x)).run()
    np.testing.assert_array_equal(np.array(out[0]), [3, 5, 7])
    if _has_torch():
        import torch.utils.dlpack as tdl

        f = lambda xs: [tdl.to_dlpack(tdl.from_dlpack(x) * 2) for x in xs]  # noqa: E731
        (out,) = build(lambda x: fn.dl_tensor_python_function(x, function=f)).run()
        np.testing.assert_array_equal(np.array(out[1]), np.arange(6).reshape(2, 3) * 4)


def _pycapsule(name):
    import ctypes

    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p,
                                                   ctypes.c_void_p]
    return new(ctypes.c_void_p(8), name, None)


_OTHER_NAME = b"not a tensor"  # kept alive: the capsule holds a pointer to the name


@pytest.mark.parametrize("function,kwargs,error,match", [
    (lambda xs: [1] * len(xs), {}, RuntimeError,
     r"output 0, sample 0: the function returns DLPack capsules \(or objects with "
     r"__dlpack__\), got int"),
    (lambda xs: [_pycapsule(_OTHER_NAME) for _ in xs], {}, RuntimeError,
     "a capsule named b'not a tensor' is not a DLPack tensor"),
    (lambda xs: None, {}, RuntimeError, "returned None; num_outputs=1"),
    (lambda x: None, {"batch_processing": False}, RuntimeError,
     "returned None for sample 0"),
    (lambda xs: xs[0], {}, RuntimeError,
     "with batch_processing=True the function returns a list of samples .* got PyCapsule"),
    (lambda xs: np.stack([from_capsule(x) for x in xs]), {}, RuntimeError,
     "returns a list of samples .* got ndarray"),
    (lambda xs: xs[:2], {}, ValueError, "output 0 has 2 samples, the batch has 4"),
    (lambda xs: [xs, xs], {"num_outputs": 2}, RuntimeError,
     "num_outputs=2, so the function returns a tuple of 2 outputs; got list"),
    (lambda xs: (xs, xs, xs), {"num_outputs": 2}, RuntimeError,
     "num_outputs=2, but the function returned 3 outputs"),
    (lambda x: (x,), {"num_outputs": 2, "batch_processing": False}, RuntimeError,
     "num_outputs=2, but the function returned 1 outputs for sample 0"),
    (lambda xs: [xs[0]] * len(xs), {}, RuntimeError,
     "sample 1: the same DLPack capsule is returned twice"),
    (lambda xs: [(from_capsule(x), x)[1] for x in xs], {}, RuntimeError,
     "sample 0: the DLPack capsule was consumed already"),
    (lambda xs: [np.zeros(2, np.int32 if i else np.int16) for i in range(len(xs))], {},
     RuntimeError, "sample 1 has dtype int32, sample 0 has int16"),
    (lambda xs: [np.zeros((2,) * (1 + (i > 0))) for i in range(len(xs))], {}, RuntimeError,
     "sample 1 has 2 dimensions, sample 0 has 1"),
])
def test_dl_tensor_function_errors(function, kwargs, error, match):
    pipe = build(lambda x: fn.dl_tensor_python_function(x, function=function, **kwargs))
    with pytest.raises(error, match=match):
        pipe.run()


def test_dl_tensor_function_argument_errors():
    with pytest.raises(TypeError, match="synchronize_stream must be True or False, got 'no'"):
        build(lambda x: fn.dl_tensor_python_function(x, function=lambda xs: xs,
                                                      synchronize_stream="no"))
    with pytest.raises(TypeError, match="batch_processing must be True or False, got 2"):
        build(lambda x: fn.dl_tensor_python_function(x, function=lambda xs: xs,
                                                     batch_processing=2))
    with pytest.raises(TypeError, match="function must be callable"):
        build(lambda x: fn.dl_tensor_python_function(x, function=3))
    with pytest.raises(ValueError, match="output_layouts has 2 entries, more than the 1"):
        build(lambda x: fn.dl_tensor_python_function(x, function=lambda xs: xs,
                                                     output_layouts=["A", "B"]))


def test_dl_tensor_function_on_the_gpu_gets_cuda_capsules():
    _gpu()
    pytest.importorskip("torch")
    import torch.utils.dlpack as tdl

    def batch(xs):
        ts = [tdl.from_dlpack(x) for x in xs]
        assert all(t.is_cuda for t in ts)
        return [tdl.to_dlpack(t * 2) for t in ts]

    def sample(x):  # a CUDA tensor's __dlpack__ is taken too
        return tdl.from_dlpack(x) + 1

    pipe = build(lambda x: (fn.dl_tensor_python_function(x.gpu(), function=batch,
                                                         device="gpu"),
                            fn.dl_tensor_python_function(x.gpu(), function=sample,
                                                         batch_processing=False,
                                                         device="gpu")), device_id=0)
    a, b = pipe.run()
    for i in range(BATCH):
        x = np.arange(6, dtype=np.float32).reshape(2, 3) * (i + 1)
        np.testing.assert_array_equal(np.array(a.as_cpu()[i]), x * 2)
        np.testing.assert_array_equal(np.array(b.as_cpu()[i]), x + 1)
    host = lambda xs: [np.zeros(1) for _ in xs]  # noqa: E731
    with pytest.raises(TypeError, match="is host data; on the GPU the function returns GPU"):
        build(lambda x: fn.dl_tensor_python_function(x.gpu(), function=host),
              device_id=0).run()


def test_preserve_is_accepted_as_dali_scripts_pass_it():
    pipe = stoker.Pipeline(batch_size=2, num_threads=1)
    with pipe:
        x = fn.external_source(source=lambda: [np.arange(3, dtype=np.float32)] * 2)
        pipe.set_outputs(fn.python_function(x, function=lambda a: a * 2, preserve=True),
                         fn.dl_tensor_python_function(x, function=lambda b: b, preserve=True))
    a, b = pipe.run()
    assert a.as_array().tolist() == [[0, 2, 4]] * 2 and b.as_array().tolist() == [[0, 1, 2]] * 2
