"""stoker.plugins.torch against the definitions of its options: epochs from the reader, the three
last-batch policies with and without a padded reader, sharding, auto_reset, checkpoints, zero-copy
hand-off; CPU torch (GPU behaviour is tested in test_gpu_plugins.py)."""

import os
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is needed for the torch plugin tests")

import stoker  # noqa: E402
from stoker import fn, types  # noqa: E402
from stoker.plugins.torch import (ClassificationIterator, GenericIterator,  # noqa: E402
                                  LastBatchPolicy, shard_from_env)


def _pipe(root, batch=4, **reader):
    pipe = stoker.Pipeline(batch_size=batch, num_threads=1, seed=1)
    with pipe:
        data, labels = fn.readers.file(file_root=root, name="reader", **reader)
        pipe.set_outputs(data, fn.cast(labels, dtype=types.INT64))
    return pipe


def _epochs(it, n):
    """Labels of every batch of n epochs (reset() between them)."""
    out = []
    for _ in range(n):
        out.append([b[0]["label"].reshape(-1).tolist() for b in it])
        it.reset()
    return out


def test_fill_delivers_every_sample_once_across_epochs(ten_files):
    it = ClassificationIterator(_pipe(ten_files), reader_name="reader")
    assert len(it) == 3
    e = _epochs(it, 3)
    assert e[0] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1]]  # filled from the next epoch
    assert e[1] == [[2, 3, 4, 5], [6, 7, 8, 9]]  # which therefore starts at 2
    assert e[2] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1]]


def test_partial_and_drop_without_padding_as_dali_gives_them(ten_files):
    """Without a padded reader the pipeline's batches straddle epochs; the epochs below are
    DALI 2.4's iterators' on the same files (the parity suite compares the two directly):
    every epoch takes the same steps and trims or drops what belongs to the next one."""
    it = ClassificationIterator(_pipe(ten_files), reader_name="reader",
                                last_batch_policy=LastBatchPolicy.PARTIAL)
    with pytest.warns(RuntimeWarning, match="drops the next epoch's first samples"):
        e = _epochs(it, 3)
    assert e == [[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]], [[2, 3, 4, 5], [6, 7, 8, 9], [0, 1]],
                 [[4, 5, 6, 7], [8, 9, 0, 1], [2, 3]]]
    it = ClassificationIterator(_pipe(ten_files), reader_name="reader",
                                last_batch_policy=LastBatchPolicy.DROP)
    assert len(it) == 2
    with pytest.warns(RuntimeWarning):
        e = _epochs(it, 3)
    assert e == [[[0, 1, 2, 3], [4, 5, 6, 7]], [[2, 3, 4, 5], [6, 7, 8, 9]],
                 [[4, 5, 6, 7], [8, 9, 0, 1]]]


@pytest.mark.parametrize("policy, first", [
    (LastBatchPolicy.FILL, [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 9, 9]]),  # padding
    (LastBatchPolicy.PARTIAL, [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]),
    (LastBatchPolicy.DROP, [[0, 1, 2, 3], [4, 5, 6, 7]]),
])
def test_a_padded_reader_starts_every_epoch_afresh(ten_files, policy, first):
    it = ClassificationIterator(_pipe(ten_files, pad_last_batch=True), reader_name="reader",
                                last_batch_policy=policy)
    assert len(it) == len(first)
    assert _epochs(it, 3) == [first] * 3


def test_shards_rotate_between_epochs_unless_stuck(ten_files):
    it = ClassificationIterator(_pipe(ten_files, shard_id=1, num_shards=2, pad_last_batch=True),
                                reader_name="reader", last_batch_policy=LastBatchPolicy.PARTIAL)
    assert _epochs(it, 2) == [[[5, 6, 7, 8], [9]], [[0, 1, 2, 3], [4]]]
    it = ClassificationIterator(_pipe(ten_files, shard_id=1, num_shards=2, stick_to_shard=True,
                                      pad_last_batch=True),
                                reader_name="reader", last_batch_policy=LastBatchPolicy.PARTIAL)
    assert _epochs(it, 2) == [[[5, 6, 7, 8], [9]]] * 2


@pytest.mark.parametrize("policy", list(LastBatchPolicy))
@pytest.mark.parametrize("pad", [False, True])
def test_every_shard_takes_the_same_steps_per_epoch(ten_files, policy, pad):
    """Distributed ranks must step together: shards of 3, 3 and 4 samples, batch 2, take the
    same number of steps every epoch (DALI's accounting: epochs sized by the largest shard)."""
    steps = []
    for k in range(3):
        it = ClassificationIterator(_pipe(ten_files, batch=2, shard_id=k, num_shards=3,
                                          pad_last_batch=pad),
                                    reader_name="reader", last_batch_policy=policy,
                                    auto_reset=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            steps.append([sum(1 for _ in it) for _ in range(4)])
    assert steps[0] == steps[1] == steps[2], steps


def test_reset_before_the_epoch_ended_is_ignored(ten_files):
    it = ClassificationIterator(_pipe(ten_files), reader_name="reader")
    first = next(it)[0]["label"].reshape(-1).tolist()
    with pytest.warns(RuntimeWarning, match=r"epoch has not ended: reset\(\) is ignored"):
        it.reset()
    assert first == [0, 1, 2, 3]
    assert next(it)[0]["label"].reshape(-1).tolist() == [4, 5, 6, 7]  # the same epoch goes on


def test_each_for_loop_is_the_next_epoch_without_reset(ten_files):
    """DALI's training loop: `for epoch ...: for batch in it:` with no reset() trains on every
    epoch (the same batches as with reset() between the loops); a loop that broke off is
    continued by the next one (reset() mid-epoch is ignored, with a warning)."""
    it = ClassificationIterator(_pipe(ten_files), reader_name="reader")
    loops = [[b[0]["label"].reshape(-1).tolist() for b in it] for _ in range(3)]
    assert loops == _epochs(ClassificationIterator(_pipe(ten_files), reader_name="reader"), 3)
    it = ClassificationIterator(_pipe(ten_files), reader_name="reader")
    assert next(iter(it))[0]["label"].reshape(-1).tolist() == [0, 1, 2, 3]
    with pytest.warns(RuntimeWarning, match=r"epoch has not ended"):
        rest = [b[0]["label"].reshape(-1).tolist() for b in it]
    assert rest == [[4, 5, 6, 7], [8, 9, 0, 1]]
    assert [b[0]["label"].reshape(-1).tolist() for b in it] == [[2, 3, 4, 5], [6, 7, 8, 9]]


def test_fill_last_batch_and_dynamic_shape_as_dali(ten_files):
    with pytest.warns(Warning, match="fill_last_batch"):
        it = ClassificationIterator(_pipe(ten_files), reader_name="reader",
                                    fill_last_batch=False, dynamic_shape=True)
    assert [len(b[0]["label"]) for b in it] == [4, 4, 2]  # PARTIAL


def test_auto_reset_and_size(ten_files):
    it = ClassificationIterator(_pipe(ten_files, pad_last_batch=True), size=10,
                                last_batch_padded=True, auto_reset=True,
                                last_batch_policy=LastBatchPolicy.PARTIAL)
    first = [b[0]["label"].tolist() for b in it]
    second = [b[0]["label"].tolist() for b in it]  # no reset() needed
    assert first == second and sum(len(b) for b in first) == 10


def test_external_source_runs_until_its_data_ends():
    batches = [np.full((2, 3), k, np.float32) for k in range(3)]
    pipe = stoker.Pipeline(batch_size=2)
    with pipe:
        pipe.set_outputs(fn.external_source(batches))
    it = GenericIterator(pipe, ["x"])
    got = [b[0]["x"] for b in it]
    assert [float(t[0, 0]) for t in got] == [0.0, 1.0, 2.0]
    with pytest.raises(TypeError, match="length is unknown"):
        len(it)


def test_outputs_are_torch_tensors_without_a_copy(ten_files):
    pipe = _pipe(ten_files)
    data, labels = pipe.run()
    t = torch.from_dlpack(labels)
    assert t.data_ptr() == labels.as_array().ctypes.data  # the same memory
    it = ClassificationIterator(_pipe(ten_files), reader_name="reader")
    b = next(it)[0]
    assert isinstance(b["data"], torch.Tensor) and b["data"].dtype == torch.uint8
    assert tuple(b["data"].shape) == (4, 3) and b["label"].dtype == torch.int64


def test_checkpoint_resumes_with_the_same_batches(ten_files):
    def make(prepare=True):
        return ClassificationIterator(_pipe(ten_files, random_shuffle=True, initial_fill=5),
                                      reader_name="reader", prepare_first_batch=prepare)
    it = make()
    for _ in range(4):  # into the second epoch
        try:
            next(it)
        except StopIteration:
            it.reset()
    state = it.state_dict()
    expect = [b[0]["label"].tolist() for b in it]
    for prepare in (True, False):  # the default (a first batch prepared, then dropped) too
        resumed = make(prepare=prepare)
        resumed.load_state_dict(state)
        assert [b[0]["label"].tolist() for b in resumed] == expect and expect
    used = make()
    next(used)
    with pytest.raises(ValueError, match="needs an iterator that has not given a batch yet"):
        used.load_state_dict(state)


def test_bad_arguments_are_refused(ten_files):
    with pytest.raises(ValueError, match="size and reader_name are mutually exclusive"):
        ClassificationIterator(_pipe(ten_files), size=10, reader_name="reader")
    with pytest.raises(ValueError, match="output_map names 1 outputs, the pipeline has 2"):
        next(GenericIterator(_pipe(ten_files), ["data"], reader_name="reader"))
    with pytest.raises(ValueError, match="auto_reset must be True, False, 'yes' or 'no'"):
        ClassificationIterator(_pipe(ten_files), reader_name="reader", auto_reset="sometimes")
    ragged = stoker.Pipeline(batch_size=2)
    with ragged:
        ragged.set_outputs(fn.external_source(lambda: [np.zeros(2), np.zeros(3)]))
    with pytest.raises(ValueError, match="output 'x' has samples of different shapes"):
        next(GenericIterator(ragged, ["x"]))


def test_shard_from_env(monkeypatch):
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(k, raising=False)
    assert shard_from_env()[:2] == (0, 1)
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setenv("LOCAL_RANK", "1")
    shard, shards, device = shard_from_env()
    assert (shard, shards) == (3, 4)
    assert device == (1 if torch.cuda.is_available() else None)


def test_pinned_outputs_when_cuda_is_there(ten_files):
    pipe = stoker.Pipeline(batch_size=4, num_threads=1, seed=1, pinned_outputs=True)
    with pipe:
        data, labels = fn.readers.file(file_root=ten_files, name="reader")
        pipe.set_outputs(data, fn.cast(labels, dtype=types.INT64))
    b = next(ClassificationIterator(pipe, reader_name="reader"))[0]
    assert b["label"].reshape(-1).tolist() == [0, 1, 2, 3]
    pinned = pipe.memory_stats()["pinned"]["bytes_in_use"] > 0
    if torch.cuda.is_available():  # page-locked: .cuda(non_blocking=True) is DMA
        torch.cuda.init()  # torch answers is_pinned() only once its CUDA context exists
        # (the cast's output; the reader's own samples lie apart and become one tensor by a
        # copy, which torch makes in ordinary memory)
        assert pinned and b["label"].is_pinned()
    else:  # no CUDA: ordinary memory, same results
        assert not pinned


def test_ragged_iterator_gives_lists_and_sparse_tensors():
    """DALI's DALIRaggedIterator: SPARSE_LIST_TAG a tensor per sample, SPARSE_COO_TAG a sparse
    COO tensor (row i: sample i), DENSE_TAG one tensor."""
    from stoker.plugins.torch import DALIRaggedIterator, RaggedIterator
    assert DALIRaggedIterator is RaggedIterator
    ragged = [np.arange(2, dtype=np.float32), np.arange(3, dtype=np.float32) + 10]
    dense = [np.full(2, 7, np.int32), np.full(2, 8, np.int32)]
    pipe = stoker.Pipeline(batch_size=2)
    with pipe:
        pipe.set_outputs(fn.external_source(lambda: ragged), fn.external_source(lambda: ragged),
                         fn.external_source(lambda: dense))
    it = RaggedIterator(pipe, ["list", "coo", "dense"], size=4,
                        output_types=[RaggedIterator.SPARSE_LIST_TAG,
                                      RaggedIterator.SPARSE_COO_TAG, RaggedIterator.DENSE_TAG])
    step = next(it)[0]
    assert [t.tolist() for t in step["list"]] == [[0, 1], [10, 11, 12]]
    assert step["coo"].is_sparse
    assert step["coo"].to_dense().tolist() == [[0, 1, 0], [10, 11, 12]]
    assert step["dense"].tolist() == [[7, 7], [8, 8]]
    with pytest.raises(ValueError, match="output_types needs one of"):
        RaggedIterator(pipe, ["a", "b", "c"], size=4, output_types=["dense", "ragged", "dense"])


@stoker.pipeline_def
def _labels_pipe(root):
    data, labels = fn.readers.file(file_root=root, name="reader", random_shuffle=True,
                                   initial_fill=4, pad_last_batch=True)
    return data, fn.cast(labels, dtype=types.INT64)


@pytest.mark.parametrize("workers", [0, 2])
def test_iterable_dataset_in_a_dataloader(ten_files, workers):
    """DataLoader(batch_size=None) over IterableDataset: each worker reads its shard, len() is
    the epoch's batches over all workers, every sample comes once per epoch, epochs go on."""
    from torch.utils.data import DataLoader
    from stoker.plugins.torch import IterableDataset
    ds = IterableDataset(_labels_pipe, ["data", "label"], reader_name="reader",
                         num_workers=workers, root=ten_files, batch_size=2, num_threads=1,
                         seed=1)
    loader = DataLoader(ds, batch_size=None, num_workers=workers,
                        persistent_workers=workers > 0)
    assert len(loader) == len(ds) == (5 if workers == 0 else 6)  # 10, or 2 shards of 5 padded
    orders = []
    for _ in range(2):
        epoch = [b["label"] for b in loader]
        assert len(epoch) == len(loader)
        labels = [int(x) for b in epoch for x in b.reshape(-1)]
        assert set(labels) == set(range(10))  # each shard's padding repeats its last sample
        orders.append(labels)
    assert orders[0] != orders[1]  # the next epoch is reshuffled


def test_iterable_dataset_refuses_a_dataloader_with_other_workers(ten_files):
    from torch.utils.data import DataLoader
    from stoker.plugins.torch import IterableDataset
    ds = IterableDataset(_labels_pipe, ["data", "label"], reader_name="reader", num_workers=0,
                         root=ten_files, batch_size=2, num_threads=1)
    with pytest.raises(Exception, match="made for num_workers=0 but runs with 1"):
        next(iter(DataLoader(ds, batch_size=None, num_workers=1)))
