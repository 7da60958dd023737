"""PyTorch iterators over stoker pipelines, with DALI's interface: each step yields, per pipeline,
a dict of torch tensors named by `output_map`, created from the batches through DLPack without a
copy, on the pipeline's device and ready on torch's current stream (the stream waits on an
event; stoker recycles the memory only after that stream's work). Epochs come from the reader's
metadata (`reader_name`) or `size`; the last batch of an epoch follows `last_batch_policy`.

    from stoker.plugins.torch import ClassificationIterator, LastBatchPolicy
    it = ClassificationIterator(pipe, reader_name="reader",
                                last_batch_policy=LastBatchPolicy.PARTIAL)
    for epoch in range(90):
        for batch in it:
            images, labels = batch[0]["data"], batch[0]["label"]
        it.reset()
"""

import os

import torch

from stoker import types
from stoker.batch import Batch
from stoker.plugins._iterator import BaseIterator, LastBatchPolicy

__all__ = ["LastBatchPolicy", "GenericIterator", "ClassificationIterator", "RaggedIterator",
           "DALIGenericIterator", "DALIClassificationIterator", "DALIRaggedIterator",
           "IterableDataset", "feed_ndarray", "shard_from_env", "to_torch_type"]


to_torch_type = types.ElementTypeMap({
    types.FLOAT: torch.float32, types.FLOAT64: torch.float64, types.FLOAT16: torch.float16,
    types.BFLOAT16: torch.bfloat16, types.UINT8: torch.uint8, types.INT8: torch.int8,
    types.BOOL: torch.bool, types.INT16: torch.int16, types.INT32: torch.int32,
    types.INT64: torch.int64,
})


def feed_ndarray(dali_tensor, arr, cuda_stream=None):
    """Copies a batch or tensor (TensorListCPU/GPU, TensorCPU/GPU) into the torch tensor `arr`,
    which must have its element type and shape (as DALI's feed_ndarray; a batch's shape is
    as_tensor()'s). GPU data is copied on `cuda_stream` (a torch.cuda.Stream or a raw stream;
    the call then does not wait), else on the default stream, waiting. Returns `arr`."""
    torch_type = to_torch_type[dali_tensor.dtype]
    if torch_type != arr.dtype:
        raise TypeError(f"feed_ndarray: the element type of the stoker Tensor/TensorList "
                        f"doesn't match the element type of the target PyTorch Tensor: "
                        f"{torch_type} vs {arr.dtype}")
    shape = dali_tensor.as_tensor().shape() if isinstance(dali_tensor, Batch) else \
        dali_tensor.shape()
    if shape != list(arr.size()):
        raise ValueError(f"feed_ndarray: shapes do not match: the stoker tensor has size "
                         f"{shape}, but the PyTorch Tensor has size {list(arr.size())}")
    if not arr.is_contiguous():
        raise ValueError("feed_ndarray: the PyTorch Tensor is not contiguous")
    dali_tensor.copy_to_external(arr.data_ptr(), cuda_stream,
                                 non_blocking=cuda_stream is not None)
    return arr


def shard_from_env():
    """(shard_id, num_shards, device_id) for this process: from torch.distributed when it is
    initialised, else from torchrun's RANK / WORLD_SIZE / LOCAL_RANK, else (0, 1, 0). device_id
    is the local rank (None when CUDA is not available)."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        rank, world = torch.distributed.get_rank(), torch.distributed.get_world_size()
    else:
        rank, world = int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))
    local = int(os.environ.get("LOCAL_RANK", rank if world > 1 else 0))
    return rank, world, (local if torch.cuda.is_available() else None)


class GenericIterator(BaseIterator):
    __doc__ = BaseIterator.__doc__ + """
    Each step is a list with one dict per pipeline, {name: torch.Tensor}. dynamic_shape
    (deprecated in DALI) is accepted and has no effect: each batch has its own shape."""

    def __init__(self, pipelines, output_map, size=-1, reader_name=None, auto_reset=False,
                 fill_last_batch=None, dynamic_shape=False, last_batch_padded=False,
                 last_batch_policy=LastBatchPolicy.FILL, prepare_first_batch=True):
        super().__init__(pipelines, output_map, size=size, reader_name=reader_name,
                         auto_reset=auto_reset, fill_last_batch=fill_last_batch,
                         last_batch_padded=last_batch_padded,
                         last_batch_policy=last_batch_policy,
                         prepare_first_batch=prepare_first_batch)

    def _convert(self, k, batch, take):
        t = torch.from_dlpack(batch)
        return t[:take] if take < t.shape[0] else t


class ClassificationIterator(GenericIterator):
    """GenericIterator with output_map ["data", "label"]."""

    def __init__(self, pipelines, size=-1, reader_name=None, auto_reset=False,
                 fill_last_batch=None, dynamic_shape=False, last_batch_padded=False,
                 last_batch_policy=LastBatchPolicy.FILL, prepare_first_batch=True):
        super().__init__(pipelines, ["data", "label"], size=size, reader_name=reader_name,
                         auto_reset=auto_reset, fill_last_batch=fill_last_batch,
                         last_batch_padded=last_batch_padded,
                         last_batch_policy=last_batch_policy,
                         prepare_first_batch=prepare_first_batch)


class RaggedIterator(GenericIterator):
    """GenericIterator whose outputs may hold samples of different shapes (DALI's
    DALIRaggedIterator). `output_types`, one per output: DENSE_TAG (default: one tensor, as
    GenericIterator), SPARSE_LIST_TAG (a list with one tensor per sample, each viewing stoker's
    memory) or SPARSE_COO_TAG (1-D samples as a torch sparse COO tensor, row i holding sample
    i's values)."""

    DENSE_TAG = "dense"
    SPARSE_LIST_TAG = "sparse_list"
    SPARSE_COO_TAG = "sparse_coo"

    def __init__(self, pipelines, output_map, size=-1, reader_name=None, output_types=None,
                 auto_reset=False, fill_last_batch=None, dynamic_shape=False,
                 last_batch_padded=False, last_batch_policy=LastBatchPolicy.FILL,
                 prepare_first_batch=True):
        tags = (self.DENSE_TAG, self.SPARSE_LIST_TAG, self.SPARSE_COO_TAG)
        self._types = list(output_types) if output_types is not None else \
            [self.DENSE_TAG] * len(output_map)
        if len(self._types) != len(output_map) or any(t not in tags for t in self._types):
            raise ValueError(f"output_types needs one of {tags} per output of output_map "
                             f"({len(output_map)}), got {output_types!r}")
        super().__init__(pipelines, output_map, size=size, reader_name=reader_name,
                         auto_reset=auto_reset, fill_last_batch=fill_last_batch,
                         last_batch_padded=last_batch_padded,
                         last_batch_policy=last_batch_policy,
                         prepare_first_batch=prepare_first_batch)

    def _output(self, k, j, batch, take):
        tag = self._types[j]
        if tag == self.DENSE_TAG:
            return super()._output(k, j, batch, take)
        samples = [torch.from_dlpack(batch[i]) for i in range(min(take, len(batch)))]
        if tag == self.SPARSE_LIST_TAG:
            return samples
        if any(s.dim() != 1 for s in samples):
            raise ValueError(f"output '{self._output_map[j]}': SPARSE_COO_TAG takes 1-D samples")
        device = samples[0].device if samples else torch.device("cpu")
        rows = torch.cat([torch.full((len(s),), i, dtype=torch.long, device=device)
                          for i, s in enumerate(samples)])
        cols = torch.cat([torch.arange(len(s), device=device) for s in samples])
        # (indices built here, valid by construction: no invariant checks)
        return torch.sparse_coo_tensor(torch.stack([rows, cols]), torch.cat(samples),
                                       check_invariants=False)


class IterableDataset(torch.utils.data.IterableDataset):
    """A stoker pipeline as a torch IterableDataset, for code built around torch's DataLoader
    (PyTorch Lightning's train_dataloader(), for one):

        ds = IterableDataset(train_pipe, ["images", "labels"], reader_name="Reader",
                             num_workers=4, root="/data/train", batch_size=64, num_threads=2)
        loader = DataLoader(ds, batch_size=None, num_workers=4, persistent_workers=True)

    stoker batches itself: give DataLoader batch_size=None and the same num_workers. Each
    DataLoader worker (or the main process, num_workers=0) builds its own pipeline by calling
    `pipeline` (a @pipeline_def factory) with `pipeline_kwargs`, and its readers read the
    worker's shard — worker w of W in rank r reads shard r * W + w of world * W — so an epoch
    over all workers and ranks gives every sample once. A given seed is offset by the worker's
    number, so workers draw different augmentations. len() is the number of batches an epoch
    gives over this rank's workers. Each item is a dict {name: tensor} (output_map).

    Workers keep their pipelines, and with them the readers' position, across epochs when
    DataLoader keeps its workers (persistent_workers=True); workers started anew for each epoch
    build new pipelines, which read the first epoch's order again unless set_epoch(e) is called
    before each epoch (the seed then moves with e). GPU pipelines run in the main process
    (num_workers=0); DataLoader's worker processes cannot share the CUDA context."""

    def __init__(self, pipeline, output_map, reader_name, num_workers=0,
                 last_batch_policy=LastBatchPolicy.FILL, **pipeline_kwargs):
        super().__init__()
        self._factory, self._output_map = pipeline, list(output_map)
        self._reader, self._workers = reader_name, int(num_workers)
        self._policy, self._kwargs = last_batch_policy, pipeline_kwargs
        self._epoch, self._iterator, self._len = 0, None, None

    def set_epoch(self, epoch):
        """The epoch the next pipelines start (workers made anew each epoch)."""
        self._epoch = int(epoch)

    def _build(self, worker):
        kwargs = dict(self._kwargs)
        seed = kwargs.get("seed", -1)
        if seed is not None and seed >= 0:
            kwargs["seed"] = seed + (worker or 0) * 1000003 + self._epoch
        pipe = self._factory(**kwargs)
        if worker is not None and any(n["device"] != "cpu" for n in pipe._nodes):
            raise ValueError("IterableDataset: the pipeline has GPU operators, which DataLoader "
                             "worker processes cannot run; use num_workers=0 (the pipeline's "
                             "own threads and the GPU do the work)")
        return pipe

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        workers = info.num_workers if info is not None else 0
        if workers != self._workers:
            raise ValueError(f"IterableDataset was made for num_workers={self._workers} but "
                             f"runs with {workers}: give DataLoader the same num_workers")
        if self._iterator is None:
            pipe = self._build(info.id if info is not None else None)
            self._iterator = GenericIterator(pipe, self._output_map, reader_name=self._reader,
                                             last_batch_policy=self._policy,
                                             prepare_first_batch=False)
        else:
            self._iterator.reset()
        for step in self._iterator:
            yield step[0]

    def __len__(self):
        if self._len is None:
            from stoker import distributed as _distributed
            workers = max(self._workers, 1)
            _distributed._worker_override = (0, workers) if self._workers else None
            try:  # worker 0's pipeline, built here only to read its reader's extent
                pipe = self._build(None)
                pipe.build()
                self._len = workers * len(GenericIterator(
                    pipe, self._output_map, reader_name=self._reader,
                    last_batch_policy=self._policy, prepare_first_batch=False))
                pipe.close()
            finally:
                _distributed._worker_override = None
        return self._len


# DALI's names (nvidia.dali.plugin.pytorch), so that a script written for DALI runs unchanged.
DALIGenericIterator = GenericIterator
DALIClassificationIterator = ClassificationIterator
DALIRaggedIterator = RaggedIterator
