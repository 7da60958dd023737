"""DALI's ``nvidia.dali.plugin.jax``: DALIGenericIterator, data_iterator and fn.jax_function
(submodules iterator, clu, integration, fn), implemented in stoker.plugins.jax,
stoker.plugins.jax_clu and stoker.plugins.jax_function."""

from stoker.plugin.jax import fn, integration, iterator  # noqa: F401 (DALI's submodules)
from stoker.plugins.jax import DALIGenericIterator, LastBatchPolicy, data_iterator

__all__ = ["DALIGenericIterator", "data_iterator", "fn", "LastBatchPolicy"]
