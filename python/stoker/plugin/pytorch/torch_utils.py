"""DALI's ``nvidia.dali.plugin.pytorch.torch_utils``: to_torch_type, feed_ndarray and
to_torch_tensor."""

import torch

from stoker.batch import TensorGPU
from stoker.plugins.torch import feed_ndarray, to_torch_type

__all__ = ["feed_ndarray", "to_torch_tensor", "to_torch_type"]


def to_torch_tensor(dali_tensor, copy):
    """A torch tensor of a stoker tensor: a copy (feed_ndarray, on torch's current stream for
    GPU data) or, with copy=False, a view through DLPack."""
    if not copy:
        return torch.from_dlpack(dali_tensor)
    gpu = isinstance(dali_tensor, TensorGPU)
    device = torch.device("cuda", dali_tensor.device_id()) if gpu else torch.device("cpu")
    out = torch.empty(dali_tensor.shape(), dtype=to_torch_type[dali_tensor.dtype], device=device)
    return feed_ndarray(dali_tensor, out,
                        cuda_stream=torch.cuda.current_stream(device) if gpu else None)
