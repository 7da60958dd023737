"""Batches returned by ``Pipeline.run()``: per-sample access, numpy conversion and DLPack export,
without copies where the memory allows it."""

import warnings

import numpy as np

_NUMPY_DTYPES = {
    "bool": np.bool_, "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32,
    "uint64": np.uint64, "int8": np.int8, "int16": np.int16, "int32": np.int32,
    "int64": np.int64, "float16": np.float16, "float32": np.float32, "float64": np.float64,
}


def _check_host(impl):
    if impl.device == "gpu":
        raise TypeError("the batch is on the GPU: use as_cpu() for a host copy, or DLPack "
                        "(torch.from_dlpack(batch), cupy.from_dlpack(batch)) without a copy")


def _dlpack(impl, view, stream, kwargs):
    """DLPack export: a device batch first makes the consumer's stream wait for it."""
    impl.prepare_for_consumer(stream)
    kwargs = {k: v for k, v in kwargs.items() if k in ("max_version", "dl_device", "copy")}
    try:
        return view.__dlpack__(**kwargs)
    except TypeError:  # an older protocol without the keyword arguments
        return view.__dlpack__()


def _to_numpy(view, dtype_name):
    if dtype_name not in _NUMPY_DTYPES:
        raise TypeError(f"numpy has no {dtype_name} type; use DLPack instead "
                        f"(e.g. torch.from_dlpack(batch))")
    return np.from_dlpack(view)


def _typestr(dtype_name):
    if dtype_name not in _NUMPY_DTYPES:
        raise TypeError(f"the array interfaces have no {dtype_name} type; use DLPack instead")
    return np.dtype(_NUMPY_DTYPES[dtype_name]).str


def _cuda_interface(impl, shape, ptr):
    """__cuda_array_interface__ (version 3) of device memory at `ptr`: the legacy default
    stream (torch's and cupy's default) is made to wait for the batch and recorded on it, so the
    memory is recycled only after that stream's work; `stream` tells consumers to order their
    own streams after it."""
    if impl.device != "gpu":
        raise AttributeError("a CPU batch has no __cuda_array_interface__ (see "
                             "__array_interface__)")
    impl.prepare_for_consumer(1)
    return {"shape": tuple(shape), "typestr": _typestr(impl.dtype), "data": (ptr, False),
            "version": 3, "strides": None, "stream": 1}


class Sample:
    """One sample of a batch: a zero-copy view of its memory."""

    def __init__(self, batch, index):
        self._batch = batch
        self._index = index

    @property
    def shape(self):
        return self._batch._impl.shape(self._index)

    @property
    def dtype(self):
        return self._batch.dtype

    @property
    def layout(self):
        return self._batch.layout

    @property
    def source_info(self):
        return self._batch._impl.source_info(self._index)

    def _view(self):
        return self._batch._impl.sample(self._index)

    def numpy(self):
        """A numpy array viewing the sample (no copy); CPU batches only."""
        _check_host(self._batch._impl)
        return _to_numpy(self._view(), self._batch._impl.dtype)

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        if copy:
            a = a.copy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def __dlpack__(self, stream=None, **kwargs):
        return _dlpack(self._batch._impl, self._view(), stream, kwargs)

    @property
    def __array_interface__(self):
        return self.numpy().__array_interface__

    @property
    def __cuda_array_interface__(self):
        impl = self._batch._impl
        return _cuda_interface(impl, self.shape, impl.data_ptr(self._index))

    def __dlpack_device__(self):
        return self._view().__dlpack_device__()

    def __repr__(self):
        return f"Sample(shape={self.shape}, dtype={self._batch._impl.dtype})"


class Batch:
    """A batch of samples with one dtype and layout, each with its own shape.

    ``batch[i]`` is sample i; ``batch.as_array()`` is the whole batch as one numpy array when all
    samples have the same shape (a view of stoker's memory, no copy); ``torch.from_dlpack(batch)``
    and ``np.from_dlpack(batch)`` work the same way.
    """

    def __init__(self, impl):
        self._impl = impl

    def __len__(self):
        return len(self._impl)

    def __getitem__(self, i):
        n = len(self._impl)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"sample index {i} out of range for a batch of {n}")
        return Sample(self, i)

    def __iter__(self):
        return (Sample(self, i) for i in range(len(self)))

    @property
    def dtype(self):
        """numpy dtype of the elements (the string 'bfloat16' for bfloat16)."""
        name = self._impl.dtype
        return np.dtype(_NUMPY_DTYPES[name]) if name in _NUMPY_DTYPES else name

    @property
    def layout(self):
        return self._impl.layout

    @property
    def device(self):
        return self._impl.device

    @property
    def shape(self):
        """The shape of every sample, as a list of tuples."""
        return [self._impl.shape(i) for i in range(len(self))]

    def is_uniform(self):
        return self._impl.is_uniform()

    def is_contiguous(self):
        return self._impl.is_contiguous()

    def source_info(self, i):
        return self._impl.source_info(i)

    def data_ptr(self, i=0):
        """The address of sample i's first element, in host or device memory (as
        torch.Tensor.data_ptr())."""
        n = len(self._impl)
        if not 0 <= i < n:
            raise IndexError(f"sample index {i} out of range for a batch of {n}")
        return self._impl.data_ptr(i)

    def at(self, i):
        """Sample i as a numpy array (a view), as DALI's TensorListCPU.at()."""
        return self[i].numpy()

    def as_array(self):
        """The batch as one array of shape (N, ...). A view when the samples lie back to back
        (always true for operator outputs), else a copy. Raises ValueError if shapes differ.
        CPU batches only (see as_cpu())."""
        _check_host(self._impl)
        return _to_numpy(self._impl.as_ndarray(), self._impl.dtype)

    def as_cpu(self):
        """A CPU copy of a GPU batch (waits for it); a CPU batch is returned as it is."""
        return Batch(self._impl.to_host())

    as_tensor = as_array

    def is_dense_tensor(self):
        """All samples have one shape (DALI's TensorList.is_dense_tensor())."""
        return self.is_uniform()

    def asCPU(self):  # noqa: N802 (DALI 0.x's spelling)
        """DALI's first spelling of as_cpu()."""
        warnings.warn("asCPU() is deprecated; use as_cpu()", DeprecationWarning, stacklevel=2)
        return self.as_cpu()

    def numpy(self):
        """as_array() for uniform batches, else a list of per-sample arrays."""
        if self.is_uniform():
            return self.as_array()
        return [s.numpy() for s in self]

    def __array__(self, dtype=None, copy=None):
        a = self.as_array()
        if copy:
            a = a.copy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def __dlpack__(self, stream=None, **kwargs):
        """DLPack export without a copy. For a GPU batch, `stream` (DLPack's convention: None
        or 1 the legacy default stream, 2 per-thread, -1 none, else a cudaStream_t) waits for
        the batch, and stoker recycles its memory only after that stream's work."""
        return _dlpack(self._impl, self._impl.as_ndarray(), stream, kwargs)

    def __dlpack_device__(self):
        return self._impl.as_ndarray().__dlpack_device__()

    @property
    def __array_interface__(self):
        """numpy's array interface of a uniform CPU batch (its memory, no copy)."""
        return self.as_array().__array_interface__

    @property
    def __cuda_array_interface__(self):
        """The CUDA array interface of a uniform, contiguous GPU batch (cupy, numba,
        torch.as_tensor): its device memory, no copy. DLPack is preferred (it takes the
        consumer's stream)."""
        if not (self._impl.is_uniform() and self._impl.is_contiguous()) or not len(self):
            raise ValueError("the CUDA array interface needs a non-empty batch of same-shaped, "
                             "contiguous samples")
        return _cuda_interface(self._impl, (len(self),) + tuple(self._impl.shape(0)),
                               self._impl.data_ptr(0))

    def __repr__(self):
        shapes = self.shape
        shown = shapes if len(shapes) <= 4 else shapes[:4] + ["..."]
        return (f"Batch(len={len(self)}, dtype={self._impl.dtype}, layout='{self.layout}', "
                f"shapes={shown})")
