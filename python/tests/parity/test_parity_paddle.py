"""The PaddlePaddle iterators against DALI 2.4's (nvidia.dali.plugin.paddle), each script written
once and run with `nvidia.dali` or `stoker` as its package: the tensors (type, shape, LoD, dtype,
values) of every step over several `for` loops, for every last-batch policy with and without a
padded reader, one or two pipelines, `reader_name` or `size`, LoD levels 1 and 2, the epoch-loop
variants, the helper functions and the errors.

DALI's iterator on the CPU: it builds `paddle.CUDAPlace(device_id)` and asks Paddle for the CUDA
stream for every pipeline, CPU ones included: CUDAPlace(None) is a TypeError and Paddle's CPU
build crashes (SIGSEGV) asking for a stream. DALI's runs therefore get those two answered with the
CPU place and no stream, what its CPU path then uses (`_dali_on_cpu`; stoker's runs are not
patched: stoker asks neither for CPU batches). LoD outputs need DALI's non-dynamic executor
(`exec_dynamic=False`): under its default dynamic executor DALI's iterator calls `__dlpack__` on
the batch of a LoD output, which TensorListCPU lacks. Both are rows of docs/dali_differences.md,
asserted at the end."""

import contextlib
import importlib
import importlib.util
import os
import subprocess
import sys
import types as pytypes
import warnings

import numpy as np
import pytest

from parity_util import SKIP_REASON, dali

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)
if importlib.util.find_spec("paddle") is None:
    pytest.skip("PaddlePaddle is needed for the paddle plugin", allow_module_level=True)
import stoker.plugins.paddle  # noqa: E402,F401 (Paddle's import that survives TensorFlow's)

import paddle  # noqa: E402

FILES = 9  # one file per class (the label says which), file k holds 2 (k + 1) bytes
PACKAGES = ("stoker", "nvidia.dali")


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    d = tmp_path_factory.mktemp("paddle")
    for k in range(FILES):
        (d / f"c{k}").mkdir()
        (d / f"c{k}" / "x.jpg").write_bytes(bytes(range(10 * k, 10 * k + 2 * (k + 1))))
    return str(d)


@contextlib.contextmanager
def _dali_on_cpu(package):
    if package == "stoker":
        yield
        return
    cuda_place, stream = paddle.CUDAPlace, paddle.device.cuda.current_stream
    paddle.CUDAPlace = lambda d: paddle.CPUPlace() if d is None else cuda_place(d)
    paddle.device.cuda.current_stream = lambda d=None: pytypes.SimpleNamespace(cuda_stream=None)
    try:
        yield
    finally:
        paddle.CUDAPlace, paddle.device.cuda.current_stream = cuda_place, stream


def _modules(package):
    return (importlib.import_module(package), importlib.import_module(f"{package}.fn"),
            importlib.import_module(f"{package}.types"),
            importlib.import_module(f"{package}.plugin.paddle"))


def _pipes(package, root, n=1, lod=True, batch=4, **reader):
    """n pipelines, pipeline k reading shard k of n. Outputs: the bytes padded to one shape
    ("dense"), the labels, and with `lod` the bytes as they are ("data": LoD 1) and as pairs
    ("pairs", shape (k + 1, 2): LoD 2)."""
    lib, fn, types, _ = _modules(package)

    @lib.pipeline_def(batch_size=batch, num_threads=1, device_id=None, exec_dynamic=False)
    def pipe(shard):
        data, label = fn.readers.file(file_root=root, name="Reader", shard_id=shard,
                                      num_shards=n, **reader)
        dense = fn.pad(data, axes=(0,), shape=(2 * FILES,))
        if not lod:
            return dense, label
        return data, dense, fn.reshape(data, shape=[-1, 2]), label

    return [pipe(k) for k in range(n)]


def _map(lod=True):
    return [("data", 1), "dense", ("pairs", 2), "label"] if lod else ["dense", "label"]


def _describe(t):
    return (type(t).__name__, t.shape(), t.lod(), str(t._dtype()), np.array(t).tolist())


def _loops(package, make, loops=3, reset_between=False, break_after=None):
    """What each `for` loop over the iterator `make()` gives: per step, per pipeline, per name
    the tensor's description."""
    with _dali_on_cpu(package), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        it = make()
        seen = []
        for k in range(loops):
            steps = []
            for i, step in enumerate(it):
                steps.append([{name: _describe(t) for name, t in d.items()} for d in step])
                if break_after is not None and k == 0 and i + 1 == break_after:
                    break
            seen.append(steps)
            if reset_between:
                it.reset()
        return seen


def _both(make, **kwargs):
    results = {p: _loops(p, lambda p=p: make(p), **kwargs) for p in PACKAGES}
    assert results["stoker"] == results["nvidia.dali"]
    assert all(results["stoker"])  # every loop had steps
    return results["stoker"]


POLICIES = ("FILL", "PARTIAL", "DROP")


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("pad", [False, True])
@pytest.mark.parametrize("n", [1, 2])
def test_reader_epochs_equal_dalis(root, policy, pad, n):
    # PARTIAL over two shards of 4 and 5 samples: shard 0's last batch is empty, which DALI
    # cannot give as a LoD tensor (see test_documented_differences): dense outputs there.
    lod = not (policy == "PARTIAL" and n == 2)

    def make(package):
        pp = _modules(package)[3]
        return pp.DALIGenericIterator(_pipes(package, root, n, lod=lod, pad_last_batch=pad),
                                      _map(lod), reader_name="Reader",
                                      last_batch_policy=getattr(pp.LastBatchPolicy, policy))
    _both(make)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("n", [1, 2])
def test_size_epochs_equal_dalis(root, policy, padded, n):
    """`size` instead of reader_name: the iterator counts the samples (summed over the
    pipelines); with two pipelines and PARTIAL, DALI returns only the pipelines that hold
    the epoch's end."""
    def make(package):
        pp = _modules(package)[3]
        return pp.DALIGenericIterator(_pipes(package, root, n, lod=n == 1, batch=2,
                                             pad_last_batch=padded),
                                      _map(n == 1), size=FILES, last_batch_padded=padded,
                                      last_batch_policy=getattr(pp.LastBatchPolicy, policy))
    _both(make)


LOOPS = {
    "auto_reset": (dict(auto_reset=True), {}),
    "auto_reset_yes": (dict(auto_reset="yes"), {}),
    "reset_between": ({}, dict(reset_between=True)),
    "broken_off": ({}, dict(break_after=1)),
    "fill_last_batch_false": (dict(fill_last_batch=False), {}),
    "not_prepared": (dict(prepare_first_batch=False), {}),
    "dynamic_shape": (dict(dynamic_shape=True), {}),
}


@pytest.mark.parametrize("case", sorted(LOOPS))
def test_epoch_loops_equal_dalis(root, case):
    """A new `for` loop over an iterator that has given batches starts the next epoch (no
    reset() needed), with DALI's variants of the loop."""
    it_kwargs, loop_kwargs = LOOPS[case]
    _both(lambda package: _classification(package, root, it_kwargs), loops=4, **loop_kwargs)


def _classification(package, root, it_kwargs):
    lib, fn, _, pp = _modules(package)

    @lib.pipeline_def(batch_size=4, num_threads=1, device_id=None)
    def pipe():
        data, label = fn.readers.file(file_root=root, name="Reader")
        return fn.pad(data, axes=(0,), shape=(2 * FILES,)), label

    # positionally, in DALI's order: pipelines, size, reader_name
    return pp.DALIClassificationIterator(pipe(), -1, "Reader", **it_kwargs)


SHAPES = [(2, 1, 3), (1, 2, 3), (3, 3, 3), (2, 2, 3), (1, 1, 3)]


def test_external_source_until_its_data_ends_with_lod_equals_dalis():
    """size -1 without reader_name: steps until the source ends; LoD 2 over samples that differ
    in their first two dimensions."""
    def make(package):
        lib, fn, _, pp = _modules(package)
        batches = [[np.full(s, 10 * k + i, dtype=np.int32) for i, s in enumerate(SHAPES)]
                   for k in range(3)]

        @lib.pipeline_def(batch_size=len(SHAPES), num_threads=1, device_id=None,
                          exec_dynamic=False)
        def pipe():
            x = fn.external_source(source=iter(batches), batch=True)
            return fn.reshape(x, shape=[-1, 3]), x
        return pp.DALIGenericIterator(pipe(), [("lod1", 1), ("lod2", 2)])
    assert len(_both(make, loops=1)[0]) == 3


def test_helpers_equal_dalis(root):
    results = {}
    for package in PACKAGES:
        lib, fn, types, pp = _modules(package)
        names = ("BOOL", "FLOAT", "FLOAT64", "FLOAT16", "UINT8", "INT8", "INT16", "INT32",
                 "INT64")

        @lib.pipeline_def(batch_size=3, num_threads=1, device_id=None, exec_dynamic=False)
        def pipe():
            data, _ = fn.readers.file(file_root=root)
            return tuple([fn.reshape(data, shape=[-1, 2])] +
                         [fn.cast(data, dtype=getattr(types, t)) for t in names])
        p = pipe()
        p.build()
        out = p.run()
        core = paddle.framework.core
        lod = core.DenseTensor()
        lod.set(np.arange(12, dtype=np.float32).reshape(6, 2), paddle.CPUPlace())
        lod.set_recursive_sequence_lengths([[2, 1], [1, 2, 3]])
        dense = core.DenseTensor()
        dense._set_dims([12])  # the 2 + 4 + 6 bytes of 3 files
        ptr = dense._mutable_data(paddle.CPUPlace(), core.VarDesc.VarType.UINT8)
        with _dali_on_cpu(package):
            results[package] = {
                "types": [pp.to_paddle_type(b) for b in out[1:]],
                "map": len(pp.dtype_map),
                "recursive_length": [pp.recursive_length(out[0], k) for k in (1, 2, 3)],
                "array_length": pp.recursive_length(np.zeros((2, 3, 1)), 2),
                "clip": [_describe(pp.lod_tensor_clip(lod, k)) for k in (1, 2)],
                "feed": (pp.feed_ndarray(out[5], ptr) == ptr,
                         np.array(dense).tolist()),
                "clip_dense": _describe(pp.lod_tensor_clip(dense, 5)),  # (after the feed)
            }
    assert results["stoker"] == results["nvidia.dali"]


def _error(package, make):
    with _dali_on_cpu(package), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            next(make())
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            return type(e), str(e)
    return None, ""


ERRORS = {  # case -> (stoker's message, DALI's exception type)
    "ragged_without_lod": ("give the output a LoD level in output_map", AssertionError),
    "repeated_names": ("output_map has repeated names", AssertionError),
    "size_and_reader_name": ("size and reader_name are mutually exclusive", AssertionError),
    "size_0": ("size cannot be 0", AssertionError),
    "pipelines_without_size": ("with several pipelines give size or reader_name",
                               AssertionError),
    "policy_not_an_enum": ("last_batch_policy must be a LastBatchPolicy", ValueError),
    "auto_reset_unknown": ("auto_reset must be True, False, 'yes' or 'no'", ValueError),
    "too_few_names": ("output_map names 1 outputs, the pipeline has 2", IndexError),
    "lod_deeper_than_samples": ("LoD level 2 needs samples of at least 2 dimensions",
                                IndexError),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_where_dali_refuses(root, case):
    """stoker refuses what DALI refuses, with a ValueError saying why (DALI: assertions and
    index errors; docs/dali_differences.md)."""
    def make(package):
        pp = _modules(package)[3]
        one = _pipes(package, root, lod=True)
        it = pp.DALIGenericIterator
        return {
            "ragged_without_lod": lambda: it(one, ["data", "dense", ("pairs", 2), "label"],
                                             reader_name="Reader"),
            "repeated_names": lambda: it(one, ["a", "a", "b", "c"], reader_name="Reader"),
            "size_and_reader_name": lambda: it(one, _map(), size=9, reader_name="Reader"),
            "size_0": lambda: it(one, _map(), size=0),
            "pipelines_without_size": lambda: it(_pipes(package, root, 2), _map()),
            "policy_not_an_enum": lambda: it(one, _map(), reader_name="Reader",
                                             last_batch_policy="FILL"),
            "auto_reset_unknown": lambda: it(one, _map(), reader_name="Reader",
                                             auto_reset="sometimes"),
            "too_few_names": lambda: it(_pipes(package, root, lod=False), ["dense"],
                                        reader_name="Reader"),
            "lod_deeper_than_samples": lambda: it(one, [("data", 2), "dense", ("pairs", 2),
                                                        "label"], reader_name="Reader"),
        }[case]
    message, dali_type = ERRORS[case]
    ours, text = _error("stoker", make("stoker"))
    theirs, _ = _error("nvidia.dali", make("nvidia.dali"))
    assert theirs is dali_type
    assert ours is ValueError and message in text, text


def test_documented_differences(root):
    """The rows of docs/dali_differences.md's PaddlePaddle part, as they stand."""
    def iterator(package, **pipe):
        lib, fn, _, pp = _modules(package)

        @lib.pipeline_def(batch_size=4, num_threads=1, device_id=None, **pipe)
        def p():
            data, label = fn.readers.file(file_root=root, name="Reader")
            return data, label
        return pp.DALIGenericIterator(p(), [("data", 1), "label"], reader_name="Reader")

    # CPU pipelines: DALI's iterator needs a CUDAPlace (without the stand-ins above)
    with pytest.raises(TypeError, match="incompatible constructor arguments"):
        iterator("nvidia.dali", exec_dynamic=False)
    assert next(iterator("stoker"))[0]["data"].lod()[0][:3] == [0, 2, 6]
    # LoD outputs under DALI's default (dynamic) executor
    with _dali_on_cpu("nvidia.dali"), pytest.raises(AttributeError, match="__dlpack__"):
        iterator("nvidia.dali")
    # PARTIAL's empty last batch of a shorter shard, as a LoD tensor
    for package in PACKAGES:
        pp = _modules(package)[3]
        make = lambda: pp.DALIGenericIterator(  # noqa: E731
            _pipes(package, root, 2), _map(), reader_name="Reader",
            last_batch_policy=pp.LastBatchPolicy.PARTIAL)
        if package == "stoker":
            last = _loops(package, make, loops=1)[0][-1]
            assert last[0]["data"][1:3] == ([0], [])  # no samples, no LoD
            assert last[1]["data"][1] == [18]  # the last file's 18 bytes
        else:
            with pytest.raises(ValueError, match="recursive_sequence_lengths info is invalid"):
                _loops(package, make, loops=1)


@pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None,
                    reason="TensorFlow is not installed")
def test_dalis_plugin_crashes_after_tensorflow():
    """DALI's plugin imports Paddle plainly: after TensorFlow the process dies (SIGSEGV);
    stoker's loads (test_plugin_paddle.py runs it)."""
    r = subprocess.run([sys.executable, "-c", "import tensorflow\n"
                        "import nvidia.dali.plugin.paddle\n"], capture_output=True,
                       timeout=300, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert r.returncode == -11
