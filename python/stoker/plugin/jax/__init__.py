"""DALI's ``nvidia.dali.plugin.jax``: DALIGenericIterator, implemented in stoker.plugins.jax."""

from stoker.plugins.jax import DALIGenericIterator, LastBatchPolicy

__all__ = ["DALIGenericIterator", "LastBatchPolicy"]
