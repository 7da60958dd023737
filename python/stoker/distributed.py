"""Where a process stands in a distributed job — its GPU, its readers' shard — as torch.distributed,
torchrun's variables and torch DataLoader workers say (readers given no shard arguments, and
pipelines with GPU operators built without a device_id, take them from here)."""

import os
import sys

def _distributed_device():
    """The GPU of this process in a distributed job, for pipelines with GPU operators built
    without a device_id: torchrun's LOCAL_RANK, else torch's current device when
    torch.distributed is initialised; None outside a job."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    torch = sys.modules.get("torch")
    dist = getattr(torch, "distributed", None)
    if dist is not None and dist.is_available() and dist.is_initialized() and \
            torch.cuda.is_available():
        return torch.cuda.current_device()
    return None


# (worker, workers) that _distributed_shard takes as a DataLoader worker's (IterableDataset's
# len() builds worker 0's pipeline in the main process).
_worker_override = None


def _distributed_shard():
    """{"shard_id", "num_shards"} of this process in a distributed job (torch.distributed when
    it is initialised, else torchrun's RANK and WORLD_SIZE) and, inside a torch DataLoader
    worker, of this worker among the job's workers; {} outside both."""
    torch = sys.modules.get("torch")
    dist = getattr(torch, "distributed", None)
    if dist is not None and dist.is_available() and dist.is_initialized():
        rank, world = dist.get_rank(), dist.get_world_size()
    else:
        rank, world = int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))
    data = getattr(getattr(torch, "utils", None), "data", None)
    info = data.get_worker_info() if data is not None else None
    worker = (info.id, info.num_workers) if info is not None else _worker_override
    if worker is not None:  # worker w of W in rank r: shard r * W + w of world * W
        rank, world = rank * worker[1] + worker[0], world * worker[1]
    return {"shard_id": rank, "num_shards": world} if world > 1 else {}
