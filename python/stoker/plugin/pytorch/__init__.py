"""DALI's ``nvidia.dali.plugin.pytorch``: the PyTorch iterators (DALIGenericIterator,
DALIClassificationIterator, DALIRaggedIterator), LastBatchPolicy, feed_ndarray, to_torch_type and
TorchPythonFunction, implemented in stoker.plugins.torch."""

from stoker.batch import TensorCPU, TensorGPU, TensorListGPU
from stoker.ops import TorchPythonFunction
from stoker.pipeline import Pipeline
from stoker.plugin.pytorch import fn, torch_utils
from stoker.plugins.torch import (DALIClassificationIterator, DALIGenericIterator,
                                  DALIRaggedIterator, LastBatchPolicy, feed_ndarray,
                                  to_torch_type)

__all__ = ["DALIClassificationIterator", "DALIGenericIterator", "DALIRaggedIterator",
           "LastBatchPolicy", "Pipeline", "TensorCPU", "TensorGPU", "TensorListGPU",
           "TorchPythonFunction", "feed_ndarray", "fn", "to_torch_type", "torch_utils"]
