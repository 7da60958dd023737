"""PaddlePaddle iterators over stoker pipelines, with DALI 2.4's interface
(nvidia.dali.plugin.paddle): each step yields, per pipeline, a dict of Paddle LoDTensors
(`paddle.base.core.DenseTensor`, the type DALI's iterator gives) named by `output_map`. Outputs
whose samples share one shape are DLPack views of stoker's memory (no copy), on the pipeline's
device; an output named with a LoD level, ("name", lod), holds its samples back to back along
the first axis with Paddle's recursive sequence lengths (its samples may differ in their first
`lod` dimensions). Epochs and the last batch follow the same rules as stoker.plugins.torch (see
LastBatchPolicy and stoker.plugins._iterator).

    from stoker.plugins.paddle import DALIClassificationIterator, LastBatchPolicy
    it = DALIClassificationIterator(pipe, reader_name="Reader")
    for epoch in range(90):
        for batch in it:
            images = paddle.to_tensor(batch[0]["data"])
"""

import os
import sys

import numpy as np

from stoker import types
# (TensorGPU, TensorListCPU, TensorListGPU: names DALI's module has, imported there too)
from stoker.batch import Batch, TensorGPU, TensorListCPU, TensorListGPU  # noqa: F401
from stoker.plugins._iterator import BaseIterator, LastBatchPolicy

__all__ = ["LastBatchPolicy", "DALIGenericIterator", "DALIClassificationIterator",
           "GenericIterator", "ClassificationIterator", "feed_ndarray", "to_paddle_type",
           "dtype_map", "recursive_length", "lod_tensor_clip"]



def _import_paddle():
    """Paddle, imported so that it also loads in a process that has imported TensorFlow first:
    TensorFlow's libraries export their protobuf symbols process-wide, and libpaddle, loaded
    after them, binds some of its protobuf calls to TensorFlow's copy and crashes (SIGSEGV)
    while registering its operators. Binding libpaddle to its own libraries first (dlopen's
    RTLD_DEEPBIND, for this import only) avoids it; without TensorFlow nothing changes."""
    if "tensorflow" in sys.modules and "paddle" not in sys.modules and \
            hasattr(os, "RTLD_DEEPBIND"):
        flags = sys.getdlopenflags()
        sys.setdlopenflags(flags | os.RTLD_DEEPBIND)
        try:
            import paddle
        finally:
            sys.setdlopenflags(flags)
    import paddle
    return paddle


paddle = _import_paddle()
_core = paddle.framework.core
_VarType = _core.VarDesc.VarType


dtype_map = types.ElementTypeMap({
    types.BOOL: _VarType.BOOL, types.FLOAT: _VarType.FP32, types.FLOAT64: _VarType.FP64,
    types.FLOAT16: _VarType.FP16, types.UINT8: _VarType.UINT8, types.INT8: _VarType.INT8,
    types.INT16: _VarType.INT16, types.INT32: _VarType.INT32, types.INT64: _VarType.INT64,
})


def to_paddle_type(tensor):
    """The Paddle VarType of a tensor's or batch's element type (DALI's to_paddle_type; KeyError
    for types Paddle's VarType table of DALI lacks, as in DALI)."""
    return dtype_map[tensor.dtype]


def feed_ndarray(dali_tensor, ptr, cuda_stream=None):
    """Copies a batch or tensor (TensorListCPU/GPU, TensorCPU/GPU) to memory at `ptr` (a LoDTensor
    data pointer, e.g. from `_mutable_data`; the samples back to back). GPU data is copied on
    `cuda_stream` without waiting when it is given, else on the default stream, waiting.
    Returns `ptr` (as DALI's)."""
    dali_tensor.copy_to_external(ptr, cuda_stream, non_blocking=cuda_stream is not None)
    return ptr


def _shape_of(data):
    shape = data.shape
    return list(shape() if callable(shape) else shape)


def recursive_length(tensor, lod_level):
    """DALI's recursive_length: the sequence lengths of the first `lod_level` levels of a batch
    (level 0: its number of samples; level l: each sample's extent along axis l-1, once per
    element of the levels above), of an array (its shape's) or of a shape."""
    seq_len = [[] for _ in range(lod_level)]

    def recurse(data, level):
        if level >= lod_level:
            return
        if isinstance(data, Batch):
            seq_len[level].append(len(data))
            for i in range(len(data)):
                recurse(_shape_of(data[i]), level + 1)
            return
        shape = list(data) if isinstance(data, (list, tuple)) else _shape_of(data)
        seq_len[level].append(shape[0])
        for _ in range(shape[0]):
            recurse(shape[1:], level + 1)

    recurse(tensor, 0)
    return seq_len


def _lengths(lod_tensor):
    """Recursive sequence lengths from a LoDTensor's offsets (Paddle 3.4 dropped
    recursive_sequence_lengths(); lod() has the offsets in every version)."""
    return [[b - a for a, b in zip(offsets, offsets[1:])] for offsets in lod_tensor.lod()]


def lod_tensor_clip(lod_tensor, size):
    """DALI's lod_tensor_clip: a new CPU LoDTensor holding the first `size` sequences of
    `lod_tensor` (its first `size` rows when it has no LoD), copied."""
    array = np.array(lod_tensor)
    seq_len = _lengths(lod_tensor)
    out = _core.DenseTensor()
    if not seq_len:
        out.set(array[:size], paddle.CPUPlace())
        return out
    keep, clipped = size, []
    for lengths in seq_len:
        clipped.append(lengths[:keep])
        keep = sum(clipped[-1])
    out.set(array[:keep], paddle.CPUPlace())
    out.set_recursive_sequence_lengths(clipped)
    return out


def _dense(batch, device_id):
    """A LoDTensor viewing `batch` (DLPack); a GPU batch is ready on Paddle's current stream
    (the stream waits on the batch; stoker recycles the memory only after that stream's work).
    CPU batches never ask Paddle for a stream: Paddle's CPU build has no CUDA to ask."""
    stream = None
    if isinstance(batch, (TensorGPU, TensorListGPU)):
        stream = paddle.device.cuda.current_stream(device_id).cuda_stream
    return _core.from_dlpack(batch.__dlpack__(stream=stream))


class GenericIterator(BaseIterator):
    __doc__ = BaseIterator.__doc__ + """
    Each step is a list with one dict per pipeline, {name: LoDTensor}. An output_map entry is a
    name, or a pair (name, lod_level): lod_level > 0 gives the output's samples concatenated
    along their first axis with `lod_level` levels of recursive sequence lengths (the samples
    may then differ in their first lod_level dimensions; the rest must agree). Tensors view the
    batches (DLPack), the last batch of PARTIAL its first samples; only a batch whose samples lie
    apart in memory (a reader's own outputs) is gathered, one copy. dynamic_shape (kept by DALI
    for backward compatibility only) is accepted and has no effect: each batch has its own
    shape."""

    def __init__(self, pipelines, output_map, size=-1, reader_name=None, auto_reset=False,
                 fill_last_batch=None, dynamic_shape=False, last_batch_padded=False,
                 last_batch_policy=LastBatchPolicy.FILL, prepare_first_batch=True):
        names, self._lod = [], []
        for entry in output_map:
            if not isinstance(entry, str) and (not isinstance(entry, (tuple, list)) or
                                               len(entry) != 2):
                raise ValueError(f"output_map entries are names or (name, lod_level) pairs, "
                                 f"got {entry!r}")
            name, lod = (entry, 0) if isinstance(entry, str) else entry
            if not isinstance(lod, (int, np.integer)) or isinstance(lod, bool) or lod < 0:
                raise ValueError(f"output_map: the LoD level of '{name}' must be an integer "
                                 f">= 0, got {lod!r}")
            names.append(name)
            self._lod.append(int(lod))
        super().__init__(pipelines, names, size=size, reader_name=reader_name,
                         auto_reset=auto_reset, fill_last_batch=fill_last_batch,
                         last_batch_padded=last_batch_padded,
                         last_batch_policy=last_batch_policy,
                         prepare_first_batch=prepare_first_batch)

    @property
    def output_map(self):
        """The outputs' names (DALI's attribute: the names without their LoD levels)."""
        return list(self._output_map)

    @property
    def normalized_map(self):
        """{name: LoD level} (DALI's attribute)."""
        return dict(zip(self._output_map, self._lod))

    def _output(self, k, j, batch, take):
        lod = self._lod[j]
        if lod == 0:
            if not batch.is_uniform():
                raise ValueError(
                    f"output '{self._output_map[j]}' has samples of different shapes "
                    f"({batch.shape()[:3]}...): a Paddle tensor without LoD needs one shape per "
                    f"batch; give the output a LoD level in output_map, ('{self._output_map[j]}'"
                    f", 1), or resize or pad its samples in the pipeline")
            return self._convert(k, batch, take)
        return self._lod_tensor(k, j, batch, lod, take)

    def _convert(self, k, batch, take):
        t = _dense(batch, self._pipes[k].device_id)
        # (_slice shares the memory: the last PARTIAL batch is a view too)
        return t._slice(0, take) if take < len(batch) else t

    def _lod_tensor(self, k, j, batch, lod, take):
        shapes = [list(s) for s in batch.shape()[:take]]
        if any(len(s) < lod for s in shapes):
            raise ValueError(f"output '{self._output_map[j]}': LoD level {lod} needs samples of "
                             f"at least {lod} dimensions, got shapes {shapes[:3]}...")
        inner = list(batch.shape()[0][lod:]) if len(batch) else []
        if any(s[lod:] != inner for s in shapes):
            raise ValueError(f"output '{self._output_map[j]}': with LoD level {lod} the samples "
                             f"must agree in the dimensions after the first {lod}, got "
                             f"{shapes[:3]}...")
        # level l: each sample's extent along axis l-1, once per element of the levels above
        seq_len = [[s[level] for s in shapes for _ in range(int(np.prod(s[:level])))]
                   for level in range(lod)]
        rows = sum(seq_len[-1])
        if batch.is_contiguous():  # operators' outputs: the samples back to back, viewed
            total = sum(int(np.prod(s[:lod])) for s in batch.shape())
            t = _dense(batch.as_reshaped_tensor([total] + inner), self._pipes[k].device_id)
            if rows < total:
                t = t._slice(0, rows)
        else:  # a batch whose samples lie apart (a CPU reader's own outputs): one copy
            t = _core.DenseTensor()
            host = batch.as_cpu()  # (GPU outputs lie back to back: never taken for them)
            parts = [np.asarray(host.at(i)).reshape([-1] + inner) for i in range(take)]
            t.set(np.concatenate(parts) if parts else
                  np.zeros([0] + inner, dtype=batch.dtype), paddle.CPUPlace())
        if rows:  # (Paddle refuses lengths of an empty tensor, [[]]: it gets no LoD)
            t.set_recursive_sequence_lengths(seq_len)
        return t


class ClassificationIterator(GenericIterator):
    """GenericIterator with output_map ["data", "label"]."""

    def __init__(self, pipelines, size=-1, reader_name=None, auto_reset=False,
                 fill_last_batch=None, dynamic_shape=False, last_batch_padded=False,
                 last_batch_policy=LastBatchPolicy.FILL, prepare_first_batch=True):
        super().__init__(pipelines, ["data", "label"], size=size, reader_name=reader_name,
                         auto_reset=auto_reset, fill_last_batch=fill_last_batch,
                         dynamic_shape=dynamic_shape, last_batch_padded=last_batch_padded,
                         last_batch_policy=last_batch_policy,
                         prepare_first_batch=prepare_first_batch)


# DALI's names (nvidia.dali.plugin.paddle), so that a script written for DALI runs unchanged.
DALIGenericIterator = GenericIterator
DALIClassificationIterator = ClassificationIterator
