"""External sources: data from Python fed into a pipeline.

What a source returns is handed to the native pipeline as it is, without a copy, when it can
be (numpy arrays, torch/JAX/cupy tensors, any DLPack producer, CUDA array interface objects);
the pipeline keeps a reference to each array until it is done with its memory. With
``no_copy=False`` (the default, as in DALI) the pipeline copies the batch when it is fed, so the
source may overwrite its arrays afterwards; with ``no_copy=True`` nothing is copied and the
arrays must stay unchanged until the pipeline is done with them.

GPU data goes to ``device="gpu"`` sources. Its producer's pending work is ordered before the
pipeline's without blocking the host: DLPack producers are asked (``__dlpack__(stream=...)``)
to make the pipeline's feed stream wait for their stream; for the CUDA array interface, the
stream it names is waited for.
"""

import inspect

_KDL_CPU, _KDL_CUDA, _KDL_CUDA_HOST, _KDL_CUDA_MANAGED = 1, 2, 3, 13


class SampleInfo:
    """What a per-sample external source callable receives (batch=False)."""

    def __init__(self, idx_in_epoch, idx_in_batch, iteration, epoch_idx):
        self.idx_in_epoch = idx_in_epoch
        self.idx_in_batch = idx_in_batch
        self.iteration = iteration
        self.epoch_idx = epoch_idx


class ExternalSource:
    """Feeds one external_source node from a Python callable or iterable."""

    def __init__(self, name, source, batch, cycle, layout, batch_size, device, no_copy):
        self.name = name
        self.source = source
        self.batch = batch
        self.cycle = cycle
        self.layout = layout or ""
        self.batch_size = batch_size
        self.device = device
        self.no_copy = bool(no_copy)
        self.iteration = 0
        self.epoch = 0
        self._iterator = None
        self.exhausted = False
        self._arity = None
        self.fed = 0  # batches given with feed_input (no source)
        if source is None:
            return  # fed by Pipeline.feed_input
        if callable(source):
            try:
                params = inspect.signature(source).parameters.values()
                self._arity = sum(1 for p in params if p.default is p.empty and
                                  p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
            except (TypeError, ValueError):
                self._arity = 0
        elif not hasattr(source, "__iter__"):
            raise TypeError(f"external_source '{name}': source must be a callable or an "
                            f"iterable, got {type(source).__name__}")

    def reset(self):
        self._iterator = None
        self.exhausted = False
        self.iteration = 0
        self.epoch += 1

    def next_batch(self):
        if self.exhausted:
            raise StopIteration
        if callable(self.source):
            if self.batch:
                data = self.source(self.iteration) if self._arity else self.source()
            else:
                data = [self.source(SampleInfo(self.iteration * self.batch_size + i, i,
                                               self.iteration, self.epoch))
                        for i in range(self.batch_size)]
        else:
            if self._iterator is None:
                self._iterator = iter(self.source)
            try:
                data = next(self._iterator)
            except StopIteration:
                if not self.cycle:
                    raise
                self._iterator = iter(self.source)
                data = next(self._iterator)
            if not self.batch:
                raise TypeError(f"external_source '{self.name}': batch=False needs a callable "
                                f"source taking a SampleInfo")
        self.iteration += 1
        return data

    def feed(self, native):
        """Feeds the next batch to `native` (a built _stoker.Pipeline); False at the end."""
        if self.source is None:
            return True  # its batches come from feed_input
        try:
            data = self.next_batch()
        except StopIteration:
            self.exhausted = True
            native.feed_end(self.name)
            return False
        self.push(native, data)
        return True

    def push(self, native, data, layout=None):
        """Hands `data` (one batch) to `native` as the node's next batch."""
        stream = native.feed_stream() if self.device == "gpu" else 0
        waits = set()
        if isinstance(data, (list, tuple)):
            payload = [self._export(x, stream, waits) for x in data]
        else:
            payload = self._export(data, stream, waits)
        native.feed_input(self.name, payload, self.layout if layout is None else layout,
                          not self.no_copy, sorted(waits))

    def _export(self, x, stream, waits):
        """`x` in a form the native side imports without copying: a numpy array (host data),
        a DLPack capsule (CUDA data, ordered before `stream`) or an (address, shape, dtype,
        owner) tuple (CUDA array interface; its stream is added to `waits`)."""
        import numpy as np

        where = f"external_source '{self.name}'"
        dlpack_device = getattr(x, "__dlpack_device__", None)
        kind = dlpack_device()[0] if dlpack_device is not None else None
        cai = getattr(x, "__cuda_array_interface__", None) if kind is None else None
        if kind in (_KDL_CUDA, _KDL_CUDA_MANAGED) or cai is not None:
            if self.device != "gpu":
                raise TypeError(f"{where} runs on the CPU but got GPU data "
                                f"({type(x).__name__}); use device='gpu' to feed GPU data")
            if cai is not None:
                return _from_cuda_array_interface(x, cai, where, waits)
            try:
                return x.__dlpack__(stream=stream)
            except TypeError:  # a producer predating the stream argument
                waits.add(1)  # it assumes the legacy default stream: wait for that
                return x.__dlpack__()
        if kind is not None and kind not in (_KDL_CPU, _KDL_CUDA_HOST):
            raise TypeError(f"{where}: got data on DLPack device type {kind}; external sources "
                            f"take host (CPU) or CUDA data")
        if kind is not None and not hasattr(x, "__array__"):
            x = np.from_dlpack(x)
        # A view where possible (torch CPU tensors, JAX CPU arrays); a copy only when `x` is
        # not C-contiguous or not an array yet (lists).
        return np.ascontiguousarray(x)


def _from_cuda_array_interface(x, cai, where, waits):
    import numpy as np

    shape = tuple(int(d) for d in cai["shape"])
    dtype = np.dtype(cai["typestr"])
    strides = cai.get("strides")
    if strides is not None:
        expected, step = [], dtype.itemsize
        for d in reversed(shape):
            expected.insert(0, step)
            step *= d
        if tuple(strides) != tuple(expected) and 0 not in shape:
            raise TypeError(f"{where}: samples must be C-contiguous (got strides {strides} for "
                            f"shape {shape})")
    if cai.get("mask") is not None:
        raise TypeError(f"{where}: masked CUDA arrays are not supported")
    stream = cai.get("stream")
    if stream is not None:
        if stream == 0:
            raise ValueError(f"{where}: __cuda_array_interface__ gives stream 0, which the "
                             f"protocol forbids (1: legacy default, 2: per-thread default)")
        waits.add(int(stream))
    return (int(cai["data"][0]), shape, dtype.name, x)
