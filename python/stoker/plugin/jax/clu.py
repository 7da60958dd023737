"""DALI's ``nvidia.dali.plugin.jax.clu``: the peekable iterator (Google CLU's PeekableIterator
interface) and its decorator (stoker.plugins.jax_clu). DALI needs the `clu` package to import
this module; stoker uses CLU's ArraySpec when it is installed and an equivalent otherwise."""

from stoker.plugins.jax_clu import (ArraySpec, DALIGenericPeekableIterator, ElementSpec,
                                    LastBatchPolicy, get_spec_for_array, peekable_data_iterator)

__all__ = ["ArraySpec", "DALIGenericPeekableIterator", "ElementSpec", "LastBatchPolicy",
           "get_spec_for_array", "peekable_data_iterator"]
