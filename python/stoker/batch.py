"""Batches returned by ``Pipeline.run()`` and their samples, under DALI's names and methods:
``TensorListCPU`` / ``TensorListGPU`` (a batch: ``shape()``, ``layout()``, ``at(i)``,
``as_tensor()``, ``as_cpu()``, ``copy_to_external()``...) and ``TensorCPU`` / ``TensorGPU`` (one
sample, or a batch seen as one tensor). Everything views stoker's memory without copying where
the memory allows it; numpy, DLPack and the CUDA array interface take them directly.
``stoker.Batch`` and ``stoker.Sample`` are the common bases (``isinstance`` works with either
name)."""

import ctypes
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


def _numpy_dtype(name):
    """numpy dtype of a dtype name (the string 'bfloat16' for bfloat16). It compares equal to
    stoker's and DALI's type names too (``batch.dtype == types.FLOAT``)."""
    return np.dtype(_NUMPY_DTYPES[name]) if name in _NUMPY_DTYPES else name


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


def _address(ptr):
    """An address given as an int, a ctypes pointer or c_void_p (DALI's copy_to_external)."""
    if isinstance(ptr, (int, np.integer)) and not isinstance(ptr, bool):
        return int(ptr)
    if isinstance(ptr, ctypes.c_void_p):
        return ptr.value or 0
    if isinstance(ptr, (ctypes._Pointer, ctypes.Array)):
        return ctypes.cast(ptr, ctypes.c_void_p).value or 0
    raise TypeError(f"copy_to_external: expected an address (int or ctypes pointer), got "
                    f"{type(ptr).__name__}")


def _stream_handle(cuda_stream):
    """A CUDA stream given as None (the default stream), an int, or an object with a
    `cuda_stream` / `ptr` attribute (torch.cuda.Stream, cupy's Stream)."""
    if cuda_stream is None:
        return None
    for attr in ("cuda_stream", "ptr"):
        if hasattr(cuda_stream, attr):
            return int(getattr(cuda_stream, attr))
    return int(_address(cuda_stream))


class _HostImpl:
    """A batch of host arrays made in Python (TensorListCPU(array), TensorCPU(array)), with the
    native batch's interface."""

    device = "cpu"

    def __init__(self, arrays, layout, whole=None):
        self._arrays = arrays
        self._whole = whole  # the one array the samples view, when made from one
        self.layout = layout or ""
        self.dtype = str(arrays[0].dtype) if arrays else (str(whole.dtype) if whole is not None
                                                          else "uint8")
        if self.dtype not in _NUMPY_DTYPES:
            raise TypeError(f"unsupported element type {self.dtype}")

    def __len__(self):
        return len(self._arrays)

    def shape(self, i):
        return tuple(self._arrays[i].shape)

    def is_uniform(self):
        return len({a.shape for a in self._arrays}) <= 1

    def is_contiguous(self):
        return self._whole is not None

    def source_info(self, i):
        return ""

    def prepare_for_consumer(self, stream):
        pass

    def to_host(self):
        return self

    def data_ptr(self, i):
        return self._arrays[i].ctypes.data

    def sample(self, i, shape=None):
        a = self._arrays[i]
        return a if shape is None else a.reshape(shape)

    def as_ndarray(self):
        if self._whole is not None:
            return self._whole
        if not self._arrays:
            raise ValueError("the batch is empty")
        if not self.is_uniform():
            raise ValueError("the batch is not uniform: access samples one by one (batch[i])")
        return np.stack(self._arrays)

    def as_reshaped(self, shape):
        if self._whole is None:
            raise ValueError("the batch's samples do not lie back to back in memory: it cannot "
                             "be viewed as one tensor")
        return self._whole.reshape(shape)

    def copy_to_external(self, dst, stream, non_blocking, sample=-1):
        for a in (self._arrays if sample < 0 else [self._arrays[sample]]):
            ctypes.memmove(dst, a.ctypes.data, a.nbytes)
            dst += a.nbytes


def _host_arrays(data, what):
    if hasattr(data, "__cuda_array_interface__") and not hasattr(data, "__array_interface__"):
        raise TypeError(f"{what}: the data is on the GPU; stoker makes TensorList/Tensor "
                        f"objects from host data only (a pipeline's outputs are GPU batches)")
    return np.ascontiguousarray(data)


class Sample:
    """One tensor viewing stoker's memory: a sample of a batch (``batch[i]``) or a whole batch
    seen as one tensor (``as_tensor()``, ``as_reshaped_tensor()``). DALI's TensorCPU/TensorGPU:
    ``shape()``, ``layout()``, ``dtype``, ``ndim()``, ``source_info()``, ``data_ptr()``,
    ``as_cpu()``, ``squeeze()``, ``copy_to_external()``; numpy/DLPack/CUDA array interface."""

    def __new__(cls, *args, **kwargs):
        if cls is Sample:
            raise TypeError("make TensorCPU objects (stoker.tensors.TensorCPU(array, layout))")
        return object.__new__(cls)

    def __init__(self, data, layout=None, is_pinned=False):
        """TensorCPU(array, layout): a tensor of a host array (numpy, or anything numpy or
        DLPack reads)."""
        a = _host_arrays(data, type(self).__name__)
        self._setup(_HostImpl([a], layout, whole=a[np.newaxis]), 0)

    def _setup(self, impl, index, shape=None, layout=None):
        self._impl, self._index, self._shape = impl, index, shape
        self._layout = layout
        return self

    @classmethod
    def _of(cls, impl, index, shape=None, layout=None):
        tensor_cls = TensorGPU if impl.device == "gpu" else TensorCPU
        return object.__new__(tensor_cls)._setup(impl, index, shape, layout)

    def _view(self):
        if self._index is None:  # the whole batch
            if self._shape is None:
                return self._impl.as_ndarray()
            return self._impl.as_reshaped(list(self._shape))
        return self._impl.sample(self._index, None if self._shape is None else list(self._shape))

    # -- DALI's Tensor methods ---------------------------------------------------------------
    def shape(self):
        """The tensor's shape, a list of extents (as DALI)."""
        if self._shape is not None:
            return list(self._shape)
        if self._index is None:
            n = len(self._impl)
            return [n] + (list(self._impl.shape(0)) if n else [])
        return list(self._impl.shape(self._index))

    def layout(self):
        if self._layout is not None:
            return self._layout
        base = self._impl.layout
        return ("N" + base if base else "") if self._index is None else base

    @property
    def dtype(self):
        """The element type as a numpy dtype (compares equal to types.FLOAT etc.)."""
        return _numpy_dtype(self._impl.dtype)

    def ndim(self):
        return len(self.shape())

    def source_info(self):
        """Where the sample came from (file name, record...), '' when unknown."""
        return "" if self._index is None else self._impl.source_info(self._index)

    def get_property(self, key):
        """DALI's sample properties: 'source_info' (None when unknown) and 'layout'."""
        if key == "source_info":
            return self.source_info() or None
        if key == "layout":
            return self.layout()
        raise ValueError(f"unknown property {key!r}: 'source_info' or 'layout'")

    def data_ptr(self):
        """The address of the first element (host or device memory)."""
        return self._impl.data_ptr(0 if self._index is None else self._index)

    def set_layout(self, layout):
        layout = layout or ""
        if layout and len(layout) != self.ndim():
            raise ValueError(f"layout '{layout}' has {len(layout)} dimensions, the tensor "
                             f"{self.ndim()}")
        self._layout = layout

    def squeeze(self, dim=None):
        """Removes unit dimensions in place (all, or `dim`); returns whether the shape changed
        (as DALI)."""
        shape, layout = self.shape(), self.layout()
        if dim is not None:
            d = dim + len(shape) if dim < 0 else dim
            if not 0 <= d < len(shape) or shape[d] != 1:
                raise ValueError(f"squeeze: dimension {dim} of shape {shape} is not 1")
            keep = [k for k in range(len(shape)) if k != d]
        else:
            keep = [k for k in range(len(shape)) if shape[k] != 1]
        if len(keep) == len(shape):
            return False
        self._shape = [shape[k] for k in keep]
        self._layout = "".join(layout[k] for k in keep) if layout else ""
        return True

    def as_cpu(self):
        """A host copy of a GPU tensor (waits for it); a CPU tensor is returned as it is."""
        if self._impl.device != "gpu":
            return self
        return Sample._of(self._impl.to_host(), self._index, self._shape, self._layout)

    def copy_to_external(self, ptr, cuda_stream=None, non_blocking=False,
                         use_copy_kernel=False):
        """Copies the tensor to memory at `ptr` (host for a CPU tensor; device or host for a
        GPU one, ordered on `cuda_stream`; waits unless non_blocking)."""
        sample = -1 if self._index is None else self._index
        self._impl.copy_to_external(_address(ptr), _stream_handle(cuda_stream),
                                    bool(non_blocking), sample)

    # -- stoker's conveniences and the array protocols ---------------------------------------
    def numpy(self):
        """A numpy array viewing the tensor (no copy); CPU tensors only."""
        _check_host(self._impl)
        return _to_numpy(self._view(), self._impl.dtype)

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        if copy:
            a = a.copy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def __dlpack__(self, stream=None, **kwargs):
        return _dlpack(self._impl, self._view(), stream, kwargs)

    def __dlpack_device__(self):
        return self._view().__dlpack_device__()

    def __repr__(self):
        return (f"{type(self).__name__}(\n    dtype={_dtype_text(self._impl.dtype)},\n    "
                f"layout=\"{self.layout()}\",\n    device=\"{self._impl.device}\",\n    "
                f"shape={tuple(self.shape())})")

    def __str__(self):
        if self._impl.device == "gpu":
            return repr(self)
        return _with_data(self, self.numpy())


def _with_data(obj, data):
    """DALI's str() of a tensor or CPU batch: the data, then repr()'s fields."""
    if isinstance(data, list):
        body = "[" + ",\n     ".join(np.array2string(a, prefix="     ") for a in data) + "]"
    else:
        body = np.array2string(data, prefix="    ")
    return f"{type(obj).__name__}(\n    {body},\n" + repr(obj).split("(\n", 1)[1]


def _dtype_text(name):
    from stoker.types import DALIDataType
    return next((f"DALIDataType.{m.name}" for m in DALIDataType if m.value == name), name)


class TensorCPU(Sample):
    """A tensor in host memory (DALI's TensorCPU)."""

    @property
    def __array_interface__(self):
        return self.numpy().__array_interface__


class TensorGPU(Sample):
    """A tensor in device memory (DALI's TensorGPU)."""

    def __init__(self, data, layout=None, device_id=-1):
        raise TypeError("TensorGPU objects come from GPU pipelines' outputs; stoker does not "
                        "wrap foreign GPU arrays (feed them to fn.external_source directly)")

    def device_id(self):
        return self._view().__dlpack_device__()[1]

    @property
    def __cuda_array_interface__(self):
        return _cuda_interface(self._impl, self.shape(), self.data_ptr())


class Batch:
    """A batch of samples with one dtype and layout, each with its own shape (DALI's
    TensorListCPU / TensorListGPU: ``Batch(impl)`` makes the one that fits the device).

    ``batch[i]`` is sample i (a TensorCPU/TensorGPU); ``batch.at(i)`` sample i as a numpy array;
    ``batch.as_array()`` the whole batch as one numpy array when all samples have the same
    shape (a view of stoker's memory, no copy); ``torch.from_dlpack(batch)`` and
    ``np.from_dlpack(batch)`` work the same way.
    """

    def __new__(cls, *args, **kwargs):
        if cls is Batch:
            impl = args[0] if args else kwargs.get("impl")
            cls = TensorListGPU if getattr(impl, "device", "cpu") == "gpu" else TensorListCPU
        return object.__new__(cls)

    def __init__(self, impl, layout=None):
        """Batch(native batch) wraps a pipeline's output; TensorListCPU(array_or_list, layout)
        makes a batch of host arrays (an (N, ...) array, or a list of arrays or tensors)."""
        if hasattr(impl, "as_ndarray"):  # a native or host batch
            self._impl = impl
            return
        name = type(self).__name__
        if isinstance(impl, (list, tuple)):
            arrays = [_host_arrays(a, name) for a in impl]
            if len({(a.dtype, a.ndim) for a in arrays}) > 1:
                raise TypeError(f"{name}: the samples differ in type or number of dimensions")
            self._impl = _HostImpl(arrays, layout)
        else:
            whole = _host_arrays(impl, name)
            if whole.ndim < 1:
                raise ValueError(f"{name}: an array of samples needs at least one dimension")
            self._impl = _HostImpl(list(whole), layout, whole=whole)

    def __len__(self):
        return len(self._impl)

    def _index(self, i):
        n = len(self._impl)
        if not isinstance(i, (int, np.integer)) or isinstance(i, bool):
            raise TypeError(f"sample indices are integers, got {type(i).__name__}")
        i = int(i)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"sample index {i} out of range for a batch of {n}")
        return i

    def __getitem__(self, i):
        return Sample._of(self._impl, self._index(i))

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    @property
    def dtype(self):
        """The element type as a numpy dtype (compares equal to types.FLOAT etc.; the string
        'bfloat16' for bfloat16)."""
        return _numpy_dtype(self._impl.dtype)

    def layout(self):
        """The samples' layout ('HWC', 'FHWC', ... or '')."""
        return self._impl.layout

    @property
    def device(self):
        """'cpu' or 'gpu'."""
        return self._impl.device

    def shape(self):
        """The shape of every sample, as a list of tuples."""
        return [self._impl.shape(i) for i in range(len(self))]

    def ndim(self):
        """Dimensions per sample."""
        return len(self._impl.shape(0)) if len(self) else len(self.layout())

    def is_uniform(self):
        return self._impl.is_uniform()

    def is_contiguous(self):
        return self._impl.is_contiguous()

    def is_dense_tensor(self):
        """All samples have one shape, so the batch can be seen as one tensor (DALI's
        TensorList method; as_tensor() copies a CPU batch whose samples are apart)."""
        return self.is_uniform()

    def source_info(self, i):
        return self._impl.source_info(self._index(i))

    def data_ptr(self, i=0):
        """The address of sample i's first element (default: the batch's first), in host or
        device memory (as torch.Tensor.data_ptr())."""
        return self._impl.data_ptr(self._index(i))

    def at(self, i):
        """Sample i: a numpy array (a view) for a CPU batch, a TensorGPU for a GPU batch."""
        if self._impl.device == "gpu":
            return self[i]
        return self[i].numpy()

    def as_array(self):
        """The batch as one array of shape (N, ...). A view when the samples lie back to back
        (always true for operator outputs), else a copy. Raises ValueError if shapes differ.
        CPU batches only (see as_cpu())."""
        _check_host(self._impl)
        # The batch adds a dimension; numpy's own refusal past its limit names neither.
        limit = 64 if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else 32
        if len(self) and len(self._impl.shape(0)) >= limit:
            shape = self._impl.shape(0)
            raise ValueError(f"as_array: the samples have {len(shape)} dimensions (shape "
                             f"{shape}); with the batch's dimension that is {len(shape) + 1}, "
                             f"more than numpy's {limit}: take the samples one by one "
                             f"(batch.at(i))")
        return _to_numpy(self._impl.as_ndarray(), self._impl.dtype)

    def as_tensor(self):
        """The batch as one tensor of shape (N, ...), layout 'N' + the samples' layout (a
        TensorCPU/TensorGPU viewing the batch; samples must share one shape)."""
        self._impl.as_ndarray()  # checks the shapes now, with the message that says why
        return Sample._of(self._impl, None)

    def as_reshaped_tensor(self, shape):
        """The samples, back to back in memory, as one tensor of `shape` (the element counts
        must match; the samples may differ in shape)."""
        shape = [int(d) for d in shape]
        self._impl.as_reshaped(shape)  # checks now
        return Sample._of(self._impl, None, shape, "")

    def as_cpu(self):
        """A CPU copy of a GPU batch (waits for it); a CPU batch is returned as it is."""
        return self if self._impl.device != "gpu" else Batch(self._impl.to_host())

    def copy_to_external(self, ptr, cuda_stream=None, non_blocking=False,
                         use_copy_kernel=False):
        """Copies the samples back to back to memory at `ptr` (an int or ctypes pointer): host
        memory for a CPU batch; for a GPU batch device (or host) memory, ordered on
        `cuda_stream` (default stream when None) after the batch, waiting for the copy unless
        non_blocking (DALI's feed_ndarray uses it)."""
        self._impl.copy_to_external(_address(ptr), _stream_handle(cuda_stream),
                                    bool(non_blocking))

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
        return self._impl.dlpack_device()

    def __repr__(self):
        shapes = self.shape()
        shown = shapes if len(shapes) <= 4 else shapes[:4] + ["..."]
        return (f"{type(self).__name__}(\n    dtype={_dtype_text(self._impl.dtype)},\n    "
                f"layout=\"{self.layout()}\",\n    device=\"{self.device}\",\n    "
                f"num_samples={len(self)},\n    shape={shown})")


class TensorListCPU(Batch):
    """A batch in host memory (DALI's TensorListCPU)."""

    def __str__(self):
        return _with_data(self, self.numpy() if len(self) else [])

    @property
    def __array_interface__(self):
        """numpy's array interface of a uniform CPU batch (its memory, no copy)."""
        return self.as_array().__array_interface__


class TensorListGPU(Batch):
    """A batch in device memory (DALI's TensorListGPU)."""

    def __init__(self, impl, layout=None):
        if not hasattr(impl, "as_ndarray"):
            raise TypeError("TensorListGPU objects come from GPU pipelines' outputs; stoker "
                            "does not wrap foreign GPU arrays (feed them to "
                            "fn.external_source directly)")
        self._impl = impl

    def device_id(self):
        return self._impl.dlpack_device()[1]

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
