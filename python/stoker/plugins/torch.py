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

from stoker.plugins._iterator import BaseIterator, LastBatchPolicy

__all__ = ["LastBatchPolicy", "GenericIterator", "ClassificationIterator", "DALIGenericIterator",
           "DALIClassificationIterator", "shard_from_env"]


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
    Each step is a list with one dict per pipeline, {name: torch.Tensor}."""

    def _convert(self, k, batch, take):
        t = torch.from_dlpack(batch)
        return t[:take] if take < t.shape[0] else t


class ClassificationIterator(GenericIterator):
    """GenericIterator with output_map ["data", "label"]."""

    def __init__(self, pipelines, size=-1, reader_name=None, auto_reset=False,
                 last_batch_policy=LastBatchPolicy.FILL, last_batch_padded=False,
                 prepare_first_batch=True):
        super().__init__(pipelines, ["data", "label"], size=size, reader_name=reader_name,
                         auto_reset=auto_reset, last_batch_policy=last_batch_policy,
                         last_batch_padded=last_batch_padded,
                         prepare_first_batch=prepare_first_batch)


# DALI's names (nvidia.dali.plugin.pytorch), so that a script written for DALI runs unchanged.
DALIGenericIterator = GenericIterator
DALIClassificationIterator = ClassificationIterator
