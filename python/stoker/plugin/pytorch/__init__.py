"""DALI's ``nvidia.dali.plugin.pytorch``: the PyTorch iterators (DALIGenericIterator,
DALIClassificationIterator, DALIRaggedIterator), LastBatchPolicy, feed_ndarray, to_torch_type and
TorchPythonFunction, implemented in stoker.plugins.torch; and `experimental` (its DataLoader
proxy, experimental.proxy), imported with the package as DALI's is."""

from stoker.batch import TensorCPU, TensorGPU, TensorListGPU
from stoker.ops import TorchPythonFunction
from stoker.pipeline import Pipeline
from stoker.plugin.pytorch import fn, torch_utils
from stoker.plugins.torch import (DALIClassificationIterator, DALIGenericIterator,
                                  DALIRaggedIterator, LastBatchPolicy, feed_ndarray,
                                  to_torch_type)
# After torch_utils, which experimental.proxy imports; it registers its collate function.
from stoker.plugin.pytorch import experimental  # noqa: E402

__all__ = ["DALIClassificationIterator", "DALIGenericIterator", "DALIRaggedIterator",
           "LastBatchPolicy", "Pipeline", "TensorCPU", "TensorGPU", "TensorListGPU",
           "TorchPythonFunction", "experimental", "feed_ndarray", "fn", "to_torch_type",
           "torch_utils"]
