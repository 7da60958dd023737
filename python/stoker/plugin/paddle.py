"""DALI's ``nvidia.dali.plugin.paddle``: the PaddlePaddle iterators (DALIGenericIterator,
DALIClassificationIterator), LastBatchPolicy, feed_ndarray, to_paddle_type, dtype_map,
recursive_length and lod_tensor_clip, implemented in stoker.plugins.paddle."""

from stoker.batch import TensorGPU, TensorListCPU, TensorListGPU
from stoker.plugins.paddle import (DALIClassificationIterator, DALIGenericIterator,
                                   LastBatchPolicy, dtype_map, feed_ndarray, lod_tensor_clip,
                                   recursive_length, to_paddle_type)

__all__ = ["DALIClassificationIterator", "DALIGenericIterator", "LastBatchPolicy", "TensorGPU",
           "TensorListCPU", "TensorListGPU", "dtype_map", "feed_ndarray", "lod_tensor_clip",
           "recursive_length", "to_paddle_type"]
