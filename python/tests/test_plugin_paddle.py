"""stoker.plugins.paddle (DALI's nvidia.dali.plugin.paddle) against its definitions: outputs as
Paddle LoDTensors viewing stoker's memory (data pointers compared), LoD outputs, the last-batch
policies, epochs over several `for` loops, checkpoints, DALI's helper functions and the errors.
CPU Paddle; DALI's own iterator is compared in parity/test_parity_paddle.py."""

import importlib.util
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

if importlib.util.find_spec("paddle") is None:
    pytest.skip("PaddlePaddle is needed for the paddle plugin tests", allow_module_level=True)

# (stoker's plugin imports Paddle first: it then loads after TensorFlow too, see there)
import stoker  # noqa: E402
from stoker import fn, types  # noqa: E402
from stoker.plugins.paddle import (ClassificationIterator, GenericIterator,  # noqa: E402
                                   LastBatchPolicy, dtype_map, feed_ndarray, lod_tensor_clip,
                                   recursive_length, to_paddle_type)

import paddle  # noqa: E402

core = paddle.framework.core


def _pipe(root, batch=4, **reader):
    """The files' bytes and labels. Both pass through an operator: operators' outputs hold
    their samples back to back, which a tensor can view (the reader's own outputs lie apart in
    memory: a tensor of them is gathered, one copy)."""
    pipe = stoker.Pipeline(batch_size=batch, num_threads=1, seed=1)
    with pipe:
        data, labels = fn.readers.file(file_root=root, name="reader", **reader)
        pipe.set_outputs(fn.copy(data), fn.cast(labels, dtype=types.INT64))
    return pipe


def _recording(pipe):
    """Records each batch the pipeline gives the iterator (to compare data pointers)."""
    runs, run = [], pipe.run

    def recorded():
        out = run()
        runs.append(out)
        return out
    pipe.run = recorded
    return runs


def _labels(step):
    return np.array(step[0]["label"]).reshape(-1).tolist()


def test_outputs_are_lod_tensors_viewing_stokers_memory(ten_files):
    pipe = _pipe(ten_files)
    runs = _recording(pipe)
    it = ClassificationIterator(pipe, reader_name="reader")
    steps = list(it)
    assert len(steps) == len(it) == 3
    for step, out in zip(steps, runs):
        data, label = step[0]["data"], step[0]["label"]
        assert type(data) is core.DenseTensor and type(label) is core.DenseTensor
        assert data.shape() == [4, 3] and label.shape() == [4, 1]
        assert str(data._dtype()) == "paddle.uint8" and str(label._dtype()) == "paddle.int64"
        assert data._ptr() == out[0].data_ptr() and label._ptr() == out[1].data_ptr()  # no copy
        assert np.array_equal(np.array(label), out[1].as_array())
        assert data.lod() == []
    for _ in range(5):  # more epochs: the pipeline's buffers go round
        list(it)
    # the tensors keep their batch's memory: later batches do not overwrite it
    assert [_labels(s) for s in steps] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1]]
    assert np.array(steps[0][0]["data"])[:, 0].tolist() == [0, 1, 2, 3]
    x = paddle.to_tensor(steps[0][0]["label"])  # what a model takes
    assert x.numpy().ravel().tolist() == [0, 1, 2, 3]


def test_the_last_partial_batch_is_a_view_of_its_first_samples(ten_files):
    pipe = _pipe(ten_files, pad_last_batch=True)
    runs = _recording(pipe)
    it = ClassificationIterator(pipe, reader_name="reader",
                                last_batch_policy=LastBatchPolicy.PARTIAL)
    last = list(it)[-1][0]["label"]
    assert last.shape() == [2, 1] and np.array(last).ravel().tolist() == [8, 9]
    assert last._ptr() == runs[2][1].data_ptr()


@pytest.mark.parametrize("policy, first", [
    (LastBatchPolicy.FILL, [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 9, 9]]),  # padding
    (LastBatchPolicy.PARTIAL, [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]),
    (LastBatchPolicy.DROP, [[0, 1, 2, 3], [4, 5, 6, 7]]),
])
def test_every_for_loop_is_the_next_epoch(ten_files, policy, first):
    it = ClassificationIterator(_pipe(ten_files, pad_last_batch=True), reader_name="reader",
                                last_batch_policy=policy)
    assert [[_labels(s) for s in it] for _ in range(3)] == [first] * 3


def test_fill_without_padding_carries_into_the_next_epoch(ten_files):
    it = ClassificationIterator(_pipe(ten_files), reader_name="reader")
    loops = [[_labels(s) for s in it] for _ in range(2)]
    assert loops == [[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1]], [[2, 3, 4, 5], [6, 7, 8, 9]]]


def test_size_with_several_pipelines_returns_the_pipelines_that_hold_the_epoch(ten_files):
    pipes = [_pipe(ten_files, batch=2, shard_id=k, num_shards=2, pad_last_batch=True)
             for k in range(2)]
    it = ClassificationIterator(pipes, size=5, last_batch_policy=LastBatchPolicy.PARTIAL)
    steps = list(it)
    assert [len(s) for s in steps] == [2, 1]  # the second step needs 1 sample of pipeline 0
    assert np.array(steps[1][0]["label"]).ravel().tolist() == [2]


def _ragged_pipe(shapes, batch):
    """An external source giving samples of `shapes` (one batch per call, then the end)."""
    batches = [[np.full(s, i, dtype=np.float32) for i, s in enumerate(shapes[k:k + batch])]
               for k in range(0, len(shapes), batch)]
    pipe = stoker.Pipeline(batch_size=batch, num_threads=1)
    with pipe:
        pipe.set_outputs(fn.external_source(iter(batches), batch=True))
    return pipe


def test_lod_outputs_concatenate_the_samples_with_their_lengths():
    it = GenericIterator(_ragged_pipe([(2, 3), (1, 3), (4, 3)], 3), [("x", 1)])
    x = next(it)[0]["x"]
    assert x.shape() == [7, 3] and x.lod() == [[0, 2, 3, 7]]
    assert np.array(x)[:, 0].tolist() == [0, 0, 1, 2, 2, 2, 2]
    it = GenericIterator(_ragged_pipe([(2, 1, 5), (1, 3, 5)], 2), [("x", 2)])
    x = next(it)[0]["x"]
    assert x.shape() == [5, 5]  # rows: 2*1 + 1*3
    assert x.lod() == [[0, 2, 3], [0, 1, 2, 5]]
    assert recursive_length(np.zeros((2, 3, 4)), 2) == [[2], [3, 3]]


def test_lod_outputs_view_the_batch_and_clip_to_the_last_batch(ten_files):
    pipe = _pipe(ten_files, pad_last_batch=True)
    runs = _recording(pipe)
    it = GenericIterator(pipe, [("data", 1), "label"], reader_name="reader",
                         last_batch_policy=LastBatchPolicy.PARTIAL)
    steps = list(it)
    first, last = steps[0][0]["data"], steps[-1][0]["data"]
    assert first._ptr() == runs[0][0].data_ptr() and first.lod() == [[0, 3, 6, 9, 12]]
    assert last.shape() == [6] and last.lod() == [[0, 3, 6]]
    assert np.array(last).ravel().tolist() == [8] * 3 + [9] * 3


def test_helpers_as_dalis(ten_files):
    assert to_paddle_type(_pipe(ten_files).run()[1]) == core.VarDesc.VarType.INT64
    assert dtype_map[types.FLOAT] == core.VarDesc.VarType.FP32
    assert dtype_map[np.dtype(np.uint8)] == core.VarDesc.VarType.UINT8
    batch = _pipe(ten_files).run()[1]
    t = core.DenseTensor()
    t._set_dims([4, 1])
    ptr = t._mutable_data(paddle.CPUPlace(), core.VarDesc.VarType.INT64)
    assert feed_ndarray(batch, ptr) == ptr
    assert np.array(t).ravel().tolist() == [0, 1, 2, 3]
    lod = core.DenseTensor()
    lod.set(np.arange(6, dtype=np.int32), paddle.CPUPlace())
    lod.set_recursive_sequence_lengths([[1, 2, 3]])
    clipped = lod_tensor_clip(lod, 2)
    assert np.array(clipped).tolist() == [0, 1, 2] and clipped.lod() == [[0, 1, 3]]
    assert np.array(lod_tensor_clip(clipped, 1)).tolist() == [0]


def test_checkpoint_resumes_with_the_same_batches(ten_files):
    def make():
        return ClassificationIterator(_pipe(ten_files), reader_name="reader")

    def take(it, n):  # n steps, into the next epochs
        out = []
        while len(out) < n:
            try:
                out.append(_labels(next(it)))
            except StopIteration:
                it.reset()
        return out
    it = make()
    take(it, 4)  # into the second epoch
    state = it.state_dict()
    expect = take(it, 5)
    resumed = make()
    resumed.load_state_dict(state)
    assert take(resumed, 5) == expect


def test_bad_arguments_are_refused(ten_files):
    with pytest.raises(ValueError, match="size and reader_name are mutually exclusive"):
        ClassificationIterator(_pipe(ten_files), size=10, reader_name="reader")
    with pytest.raises(ValueError, match="output_map has repeated names"):
        GenericIterator(_pipe(ten_files), ["data", ("data", 1)], reader_name="reader")
    with pytest.raises(ValueError, match="the LoD level of 'data' must be an integer >= 0"):
        GenericIterator(_pipe(ten_files), [("data", -1), "label"], reader_name="reader")
    with pytest.raises(ValueError, match=r"\(name, lod_level\) pairs, got \('data',\)"):
        GenericIterator(_pipe(ten_files), [("data",), "label"], reader_name="reader")
    ragged = _ragged_pipe([(2,), (3,)], 2)
    with pytest.raises(ValueError, match=r"give the output a LoD level in output_map, \('x', 1"):
        next(GenericIterator(ragged, ["x"]))
    with pytest.raises(ValueError, match="LoD level 2 needs samples of at least 2 dimensions"):
        next(GenericIterator(_ragged_pipe([(2,), (3,)], 2), [("x", 2)]))
    with pytest.raises(ValueError, match="must agree in the dimensions after the first 1"):
        next(GenericIterator(_ragged_pipe([(2, 1), (3, 2)], 2), [("x", 1)]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="output_map names 1 outputs, the pipeline has 2"):
            next(GenericIterator(_pipe(ten_files), ["data"], reader_name="reader"))


@pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None,
                    reason="TensorFlow is not installed")
def test_paddle_loads_after_tensorflow(ten_files):
    """A plain `import paddle` after `import tensorflow` crashes (SIGSEGV, protobuf symbols);
    stoker's plugin imports it so that it works (in a fresh process: this one has Paddle)."""
    script = ("import tensorflow, sys\n"
              "from stoker.plugins.paddle import ClassificationIterator\n"
              "import stoker\n"
              "from stoker import fn\n"
              "pipe = stoker.Pipeline(batch_size=2, num_threads=1)\n"
              "with pipe:\n"
              "    d, l = fn.readers.file(file_root=sys.argv[1], name='r')\n"
              "    pipe.set_outputs(fn.copy(d), fn.copy(l))\n"
              "import paddle, numpy as np\n"
              "step = next(ClassificationIterator(pipe, reader_name='r'))\n"
              "print(paddle.to_tensor(step[0]['label']).numpy().ravel().tolist())\n")
    r = subprocess.run([sys.executable, "-c", script, ten_files], capture_output=True,
                       text=True, timeout=300, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().splitlines()[-1] == "[0, 1]"
