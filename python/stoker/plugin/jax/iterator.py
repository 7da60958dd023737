"""DALI's ``nvidia.dali.plugin.jax.iterator``: the iterator, the data_iterator decorator and
default_num_threads_value (stoker.plugins.jax)."""

from stoker.plugins.jax import (DALIGenericIterator, LastBatchPolicy, data_iterator,
                                default_num_threads_value)

__all__ = ["DALIGenericIterator", "LastBatchPolicy", "data_iterator",
           "default_num_threads_value"]
