"""DALI's ``nvidia.dali.backend`` as scripts use it: the batch and tensor types (to import and
``isinstance``-check pipeline outputs). DALI's native entry points that have no stoker
counterpart are listed in docs/dali_differences.md."""

from stoker.batch import TensorCPU, TensorGPU, TensorListCPU, TensorListGPU

__all__ = ["TensorCPU", "TensorGPU", "TensorListCPU", "TensorListGPU"]
