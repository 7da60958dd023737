"""DALI's ``nvidia.dali.tensors``: the batch and tensor types pipelines return."""

from stoker.batch import TensorCPU, TensorGPU, TensorListCPU, TensorListGPU

__all__ = ["TensorCPU", "TensorGPU", "TensorListCPU", "TensorListGPU"]
