"""The JAX iterator with peeking (DALI 2.4's nvidia.dali.plugin.jax.clu), compatible with Google
CLU's PeekableIterator: peek() gives the next step without advancing, peek_async() the same from
a worker thread, element_spec the {name: ArraySpec} of the steps (their shapes and dtypes may not
change between steps). ArraySpec is CLU's where the `clu` package is installed; without it an
equivalent of stoker's (DALI needs CLU to import the module at all)."""

import concurrent.futures
import dataclasses
import threading
from typing import Any, Dict

import jax
import jax.numpy as jnp
import numpy as np

from stoker.plugins.jax import Iterator, LastBatchPolicy, _data_iterator_impl

try:
    from clu.data.dataset_iterator import ArraySpec, ElementSpec
except ImportError:  # CLU is heavy (flax, orbax...); the iterator does not need it
    @dataclasses.dataclass(frozen=True)
    class ArraySpec:
        """Describes an array by its dtype and shape (CLU's ArraySpec, when CLU is absent)."""

        dtype: Any
        shape: tuple

        def __repr__(self):
            return f"ArraySpec(dtype={np.dtype(self.dtype).name}, shape={self.shape})"

        def __str__(self):
            return f"{np.dtype(self.dtype).name}{list(self.shape)}"

    ElementSpec = Dict[str, ArraySpec]

__all__ = ["ArraySpec", "ElementSpec", "PeekableIterator", "DALIGenericPeekableIterator",
           "get_spec_for_array", "peekable_data_iterator", "LastBatchPolicy"]


def get_spec_for_array(jax_array):
    """The ArraySpec (shape, dtype) of an array."""
    return ArraySpec(shape=jax_array.shape, dtype=jax_array.dtype)


class PeekableIterator(Iterator):
    __doc__ = Iterator.__doc__ + """
    peek(): the next step without advancing (the following next() returns it); peek_async():
    a concurrent.futures.Future of peek(), run on a worker thread (wait for it before the next
    next() or peek() to get the same step); element_spec: {name: ArraySpec} of the steps (from
    the first step, peeking if none was taken yet). A step whose shape or dtype differs from the
    first raises ValueError. is_nonpadding (with reader_name): which samples of the step are
    the epoch's own (False: padding or the next epoch's, as the last batch holds them)."""

    def __init__(self, pipelines, output_map, size=-1, reader_name=None, auto_reset=False,
                 last_batch_padded=False, last_batch_policy=LastBatchPolicy.FILL,
                 prepare_first_batch=True, sharding=None, pmap_compatible=None):
        super().__init__(pipelines, output_map, size, reader_name, auto_reset, last_batch_padded,
                         last_batch_policy, prepare_first_batch, sharding, pmap_compatible)
        # One lock around next/peek: peek_async's thread and the caller's share the iterator.
        self._mutex = threading.Lock()
        self._pool = None
        self._peek = None
        self._element_spec = None

    def _set_element_spec(self, output):
        self._element_spec = {name: get_spec_for_array(output[name])
                              for name in self._output_categories}

    def _checked(self, output):
        if self._element_spec is None:
            self._set_element_spec(output)
        for key in output:
            spec = get_spec_for_array(output[key])
            if spec != self._element_spec[key]:
                raise ValueError(
                    f"The shape or type of the output changed between iterations. This is not "
                    f"supported by JAX  peekable iterator. Please make sure that the shape and "
                    f"type of the output is constant. Expected: {self._element_spec[key]}, got: "
                    f"{spec} for output: {key}")
        return output

    def _next_with_peek(self):
        if self._peek is None:
            return self._checked(Iterator.__next__(self))
        peeked, self._peek = self._peek, None
        return self._checked(peeked)

    def __next__(self):
        with self._mutex:
            return self._next_with_peek()

    def __iter__(self):
        # A new loop starts the next epoch (the base's rule), unless a step is peeked: it
        # belongs to the loop that comes.
        if self._peek is None:
            return super().__iter__()
        return self

    def peek(self):
        """The next step, without advancing the iterator."""
        with self._mutex:
            if self._peek is None:
                self._peek = self._next_with_peek()
            return self._peek

    def peek_async(self):
        """A Future of peek(), run on a worker thread (made at the first call)."""
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        return self._pool.submit(self.peek)

    def checkpoints(self):
        if self._peek is not None:
            raise RuntimeError(
                "Checkpointing is not supported for peekable iterators with peeked data. "
                "Consume the peeked data completely using next() before saving a checkpoint.")
        return super().checkpoints()

    @property
    def element_spec(self):
        """{name: ArraySpec} of the steps."""
        if self._element_spec is None:
            self._set_element_spec(self.peek())
        return self._element_spec

    @property
    def is_nonpadding(self):
        """Booleans, one per sample of the step (all pipelines' in order): True for the epoch's
        own samples, False for padding or the next epoch's samples in the last batch. A numpy
        array; with a sharding, a jax.Array with that sharding."""
        if self._reader is None:
            raise ValueError("is_nonpadding needs the iterator's reader_name (the shard sizes "
                             "come from the reader)")
        b = self._batch
        left = b - (self._counter - self._sizes_initial[self._ids])
        parts = [np.ones(b, dtype=bool) if x >= b else
                 np.concatenate([np.ones(max(x, 0), dtype=bool),
                                 np.zeros(b - max(x, 0), dtype=bool)]) for x in left]
        if self._sharding is None:
            return np.concatenate(parts)
        return jax.device_put(jnp.concatenate(parts), self._sharding)


DALIGenericPeekableIterator = PeekableIterator


def peekable_data_iterator(pipeline_fn=None, output_map=[], size=-1,  # noqa: B006
                           reader_name=None, auto_reset=False, last_batch_padded=False,
                           last_batch_policy=LastBatchPolicy.FILL, prepare_first_batch=True,
                           sharding=None, devices=None, pmap_compatible=None):
    """data_iterator (stoker.plugins.jax) whose iterator is a DALIGenericPeekableIterator."""
    return _data_iterator_impl(PeekableIterator, pipeline_fn, output_map, size, reader_name,
                               auto_reset, last_batch_padded, last_batch_policy,
                               prepare_first_batch, sharding, devices, pmap_compatible)
