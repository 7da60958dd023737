"""fn.python_function and fn.torch_python_function: Python code inside a pipeline.

The operator (native python_function) hands its batch to a Python thread of stoker's own (a
server), which runs the function holding the GIL and gives the outputs back as batches over the
arrays it returned (no copy); stoker's pipeline threads only queue the call and wait (they never
take the GIL, so a Python thread waiting on the pipeline cannot deadlock with them). While a
server runs a function another waits idle, so a function that runs another pipeline with
python_function gets its calls served; one function (one operator) runs one call at a time. The
function's time is the operator's counter "function_seconds" (pipe.operator_stats(name),
pipe.stats()).

The function gets read-only numpy views of its inputs: other operators and the pipeline's
outputs may share that memory (a decoded image, a reader's mapped file), so it writes into a
copy. A function is registered for as long as the pipeline that defined it lives.

On the GPU (device="gpu", or an input on the GPU) the stage's stream is synchronised before
the call, the function gets device data (python_function: stoker samples, which cupy, torch
and JAX take through DLPack or the CUDA array interface; torch_python_function: torch CUDA
tensors) and its outputs are ordered before the stage's work through DLPack's stream argument
(the legacy default stream, then an event the stage's stream waits for).
"""

import atexit
import itertools
import threading
import time
import weakref

import numpy as np

from stoker import _stoker
from stoker._op import pipeline_for
from stoker.batch import Batch
from stoker.external import export_array

_functions = {}  # id -> _Function, while the pipeline that defined it lives
_ids = itertools.count(1)
_lock = threading.Lock()
# The server threads: None while one runs a call, else when it finished its last one.
_servers = {}
_stopping = False  # stop() runs: a function defining a pipeline then starts no servers
_IDLE_S = 5.0  # a server idle this long ends, unless it is the last idle one

# The element types a batch holds (what a function may return); numpy's names (torch's too).
_SAMPLE_DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                  "uint64", "float16", "bfloat16", "float32", "float64"}


class _Function:
    def __init__(self, function, num_outputs, batch_processing, torch, where, whole_batches,
                 dlpack):
        self.function = function
        self.num_outputs = num_outputs
        self.batch_processing = batch_processing
        self.torch = torch
        self.where = where
        self.whole_batches = whole_batches
        self.dlpack = dlpack
        # One call at a time per function (the two lanes of a CPU stage run copies of the
        # operator), as with a single server; other functions may run meanwhile.
        self.lock = threading.Lock()


def register(function, num_outputs, batch_processing, torch, where, whole_batches=False,
             dlpack=None, owner=None):
    """The id of `function` for the native operator; starts the servers. whole_batches: the
    function takes each input as a stoker Batch (jax_function views the whole batch through
    DLPack instead of getting a list of samples). dlpack: a callable (f, batches, on_gpu,
    batch_size, cancelled) -> one list of samples per output that calls the function itself
    (dl_tensor_python_function's DLPack capsules; stoker.dl_tensor_function). owner: the
    pipeline; the function is unregistered (and freed) when it is."""
    if not callable(function):
        raise TypeError(f"{where}: function must be callable, got {type(function).__name__}")
    if not isinstance(num_outputs, int) or isinstance(num_outputs, bool) or num_outputs < 0:
        raise ValueError(f"{where}: num_outputs must be a whole number, got {num_outputs!r}")
    fid = next(_ids)
    _functions[fid] = _Function(function, num_outputs, batch_processing, torch, where,
                                whole_batches, dlpack)
    if owner is not None:
        # Freed with its pipeline (reference counting frees a plain pipeline at `del`); not
        # run at exit, where stop() ends the servers and the pipelines close.
        weakref.finalize(owner, _functions.pop, fid, None).atexit = False
    with _lock:
        if not _servers and not _stopping:
            _start_server()
    return fid


def _start_server():
    """Starts a server thread (with _lock held)."""
    if not _servers:
        _stoker.start_python_calls()
    server = threading.Thread(target=_stoker.serve_python_calls, args=(_dispatch, _keep_serving),
                              name="stoker python_function", daemon=True)
    _servers[server] = time.monotonic()
    server.start()
    # Stopped before the interpreter ends (a daemon thread still in the server loop then would
    # be killed inside C++), and before the pipelines close: atexit runs the last registered
    # first, and this runs again at the first call (after a build registered the pipelines'
    # hook). Queued calls then fail, per-sample functions stop between samples, and a function
    # running another pipeline sees its run() fail, so no pipeline is closed under a server's
    # run() and no join waits for a batch.
    atexit.unregister(stop)
    atexit.register(stop)


def _keep_serving():
    """Asked by an idle server: False ends it (idle for a while, and another one waits)."""
    me = threading.current_thread()
    with _lock:
        since = _servers.get(me)
        idle = sum(1 for t in _servers.values() if t is not None)
        if since is not None and idle > 1 and time.monotonic() - since > _IDLE_S:
            del _servers[me]
            return False
    return True


def _convert(sample, f, on_gpu):
    if f.torch:
        import torch.utils.dlpack

        tensor = torch.utils.dlpack.from_dlpack(sample)
        # torch has no read-only tensors: a view of a read-only file mapping (a reader's file
        # of 1 MiB or more) is copied, so that a write cannot kill the process. Other inputs
        # stay views; a write there changes what other operators see (DALI's contract: the
        # function does not modify its inputs).
        if not on_gpu and _stoker.in_mapped_file(tensor.data_ptr(),
                                                 tensor.numel() * tensor.element_size()):
            tensor = tensor.clone()
        return tensor
    if on_gpu:
        return sample
    array = sample.numpy()
    # Read-only: the memory may be another output's or a read-only file mapping (a write there
    # would change that output, or kill the process).
    array.flags.writeable = False
    return array


def _outputs(value, f):
    """The function's value as a tuple with one entry per output."""
    if f.num_outputs == 1:
        return (value,)
    if f.num_outputs == 0:
        return ()
    if not isinstance(value, (tuple, list)) or len(value) != f.num_outputs:
        raise TypeError(f"{f.where}: num_outputs={f.num_outputs}, so the function returns a "
                        f"tuple of {f.num_outputs}; got {type(value).__name__}")
    return tuple(value)


def _check_cancelled(cancelled, f, i, batch_size):
    """Between samples: raises when nobody waits for the call any more (its pipeline closes,
    e.g. after Ctrl-C, or the servers stop), so that closing never waits for the batch."""
    if cancelled():
        raise RuntimeError(f"{f.where}: stopped at sample {i} of {batch_size}: the pipeline "
                           f"closed")


def _dispatch(fid, inputs, on_gpu, batch_size, cancelled):
    """Runs function `fid` on the native batches `inputs`; (outputs, wait streams). GPU outputs
    are exported ordered before the legacy default stream (1), on which the server records the
    event the stage waits for. Another server is started first when none is idle."""
    me = threading.current_thread()
    with _lock:
        if me in _servers:
            _servers[me] = None
            if all(t is None for t in _servers.values()):
                _start_server()
    try:
        f = _functions.get(fid)
        if f is None:
            raise RuntimeError("the pipeline that defined the function was deleted")
        with f.lock:
            return _run(f, inputs, on_gpu, batch_size, cancelled)
    finally:
        with _lock:
            if me in _servers:
                _servers[me] = time.monotonic()


def _run(f, inputs, on_gpu, batch_size, cancelled):
    stream = 1 if on_gpu else None
    batches = [Batch(b) for b in inputs]
    try:
        if f.dlpack is not None:
            outs = f.dlpack(f, batches, on_gpu, batch_size, cancelled)
        elif f.whole_batches:
            outs = _outputs(f.function(*batches), f)
        elif f.batch_processing:
            args = [[_convert(b[i], f, on_gpu) for i in range(len(b))] for b in batches]
            outs = _outputs(f.function(*args), f)
        else:
            per_sample = []
            for i in range(batch_size):
                _check_cancelled(cancelled, f, i, batch_size)
                per_sample.append(
                    _outputs(f.function(*[_convert(b[i], f, on_gpu) for b in batches]), f))
            outs = tuple([s[k] for s in per_sample] for k in range(f.num_outputs))
    except ValueError as e:
        if f.torch or on_gpu or f.dlpack or "read-only" not in str(e):
            raise
        # Same exception, so that its traceback keeps the function's line.
        e.args = (f"{f.where}: {e}: the function's inputs are read-only views of the "
                  f"pipeline's data (other operators and the pipeline's outputs may share it); "
                  f"write into a copy (np.array(x) or x.copy())",)
        raise
    waits = set()
    payload = []
    for k, out in enumerate(outs):
        where = f"{f.where}, output {k}"
        if isinstance(out, (list, tuple)):
            samples = [_export(x, where, f"{where}, sample {i}", on_gpu, stream, waits)
                       for i, x in enumerate(out)]
            _same_ndim(samples, where)
            payload.append(samples)
        else:
            payload.append(_export(out, where, where, on_gpu, stream, waits))
    return payload, sorted(waits)


def _export(x, where, sample, on_gpu, stream, waits):
    """export_array(x), its dtype checked before (torch, cupy) and after (numpy's view of a
    list)."""
    _check_dtype(x, sample)
    exported = export_array(x, where, on_gpu, stream, waits)
    _check_dtype(exported, sample)
    return exported


def _check_dtype(x, where):
    """Refuses an array of a type no batch holds (objects, strings, complex numbers, dates...)
    with its name: numpy and cupy arrays and torch tensors."""
    dtype = getattr(x, "dtype", None)
    if isinstance(dtype, np.dtype):
        name = dtype.name
    elif type(dtype).__module__ == "torch":
        name = str(dtype).removeprefix("torch.")
    else:
        return  # others are left to the import
    if name not in _SAMPLE_DTYPES:
        raise TypeError(f"{where}: the function returned an array of dtype {name}, which a "
                        f"batch cannot hold; return bool, int8-int64, uint8-uint64, float16, "
                        f"bfloat16, float32 or float64 arrays (e.g. x.astype(np.float32); "
                        f"text as uint8 bytes)")


def _same_ndim(samples, where):
    """A batch's samples have one number of dimensions (DALI refuses others too; the native
    import takes any shapes)."""
    for i, x in enumerate(samples):
        ndim = len(x[1]) if isinstance(x, tuple) else getattr(x, "ndim", None)
        if i == 0:
            first = ndim
        elif ndim is not None and first is not None and ndim != first:
            raise ValueError(f"{where}: sample {i} has {ndim} dimensions, sample 0 has {first}; "
                             f"all samples of a batch have the same number of dimensions")


def stop():
    """Ends the servers (at exit; a later pipeline with python_function starts them again). A
    server running a per-sample function stops after its sample (it sees the call cancelled)."""
    global _stopping
    with _lock:
        servers = list(_servers)
        _servers.clear()
        if servers:
            _stoker.stop_python_calls()
        _stopping = True
    try:
        for server in servers:
            if server is not threading.current_thread():
                server.join()
    finally:
        with _lock:
            _stopping = False


def _layouts(output_layouts, num_outputs, where):
    """python_function's output_layouts as one entry per output ('' for none), DALI's rule: a
    string goes to every output; a list to the first outputs (it may be shorter, not longer);
    without it the outputs have no layout (not even where an input's would fit)."""
    if output_layouts is None or isinstance(output_layouts, str):
        return [output_layouts or ""] * num_outputs
    if not isinstance(output_layouts, (list, tuple)):
        raise TypeError(f"{where}: output_layouts must be a layout string or a list of them, "
                        f"got {output_layouts!r}")
    layouts = list(output_layouts)
    if not all(isinstance(x, str) for x in layouts):
        raise TypeError(f"{where}: output_layouts must be a layout string or a list of them, "
                        f"got {output_layouts!r}")
    if len(layouts) > num_outputs:
        raise ValueError(f"{where}: output_layouts has {len(layouts)} entries, more than the "
                         f"{num_outputs} outputs (num_outputs)")
    return layouts + [""] * (num_outputs - len(layouts))


def _node(op_name, torch, inputs, function, num_outputs, batch_processing, output_layouts,
          device, name, layouts_from_inputs=False, whole_batches=False, dlpack=None):
    """The python_function node. output_layouts: one entry per output ('' for none), or as
    users give it (see _layouts). layouts_from_inputs: an output without a layout takes the
    input of its index's where the dimensions agree (jax_function's rule, decided per batch by
    the native operator). whole_batches, dlpack: see register()."""
    where = f"fn.{op_name}"
    pipe = pipeline_for(where)
    if device not in (None, "cpu", "gpu"):
        raise ValueError(f"{where}: device must be 'cpu' or 'gpu', got {device!r}")
    if num_outputs == 0:
        raise ValueError(f"{where}: num_outputs=0 (a function run for its side effects) is not "
                         f"supported: return a value and use it, or run the code outside")
    layouts = _layouts(output_layouts, num_outputs, where)
    fid = register(function, num_outputs, batch_processing, torch,
                   f"{op_name} '{getattr(function, '__name__', 'function')}'", whole_batches,
                   dlpack, owner=pipe)
    return pipe._add_node("python_function", list(inputs),
                          {"function_id": fid, "output_layouts": layouts,
                           "layouts_from_inputs": layouts_from_inputs}, {}, name, device,
                          num_outputs)


def python_function(*inputs, function, num_outputs=1, batch_processing=False,
                    output_layouts=None, device=None, name=None, preserve=None):
    """Runs `function` (Python) on the inputs: per sample, with each input's sample (numpy
    arrays on the CPU; on the GPU stoker samples, which cupy, torch and JAX take through DLPack),
    or with batch_processing=True once per batch with a list of samples per input. It returns
    an array (num_outputs=1) or a tuple of num_outputs arrays; in batch mode a list of samples
    (or an array whose first axis is the batch) per output. `output_layouts`: a layout for
    every output, or a list of layouts for the first outputs; without it (or for outputs the
    list does not reach) the outputs have no layout, as in DALI. The function runs on a
    Python thread of stoker's (holding the GIL, one call at a time); its time is the
    operator's "function_seconds" counter."""
    return _node("python_function", False, inputs, function, num_outputs, batch_processing,
                 output_layouts, device, name)


def torch_python_function(*inputs, function, num_outputs=1, batch_processing=False,
                          output_layouts=None, device=None, name=None, preserve=None):
    """python_function whose function takes and returns torch tensors (CPU, or CUDA with
    device="gpu"; views of stoker's memory through DLPack, no copy)."""
    return _node("torch_python_function", True, inputs, function, num_outputs,
                 batch_processing, output_layouts, device, name)
