"""fn.python_function and fn.torch_python_function: Python code inside a pipeline.

The operator (native python_function) hands its batch to a Python thread of stoker's own,
which runs the function holding the GIL and gives the outputs back as batches over the arrays
it returned (no copy); stoker's pipeline threads only queue the call and wait (they never take
the GIL, so a Python thread waiting on the pipeline cannot deadlock with them). One call runs
at a time, like every Python function sharing the GIL; the function's time is the operator's
counter "function_seconds" (pipe.operator_stats(name), pipe.stats()).

On the GPU (device="gpu", or an input on the GPU) the stage's stream is synchronised before
the call, the function gets device data (python_function: stoker samples, which cupy, torch
and JAX take through DLPack or the CUDA array interface; torch_python_function: torch CUDA
tensors) and its outputs are ordered before the stage's work through DLPack's stream argument
(the legacy default stream, then an event the stage's stream waits for).
"""

import atexit
import itertools
import threading

from stoker import _stoker
from stoker._op import pipeline_for
from stoker.batch import Batch
from stoker.external import export_array

_functions = {}
_ids = itertools.count(1)
_server = None
_lock = threading.Lock()


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


def register(function, num_outputs, batch_processing, torch, where, whole_batches=False,
             dlpack=None):
    """The id of `function` for the native operator; starts the server thread once.
    whole_batches: the function takes each input as a stoker Batch (jax_function views the
    whole batch through DLPack instead of getting a list of samples). dlpack: a callable
    (f, batches, on_gpu, batch_size) -> one list of samples per output that calls the function
    itself (dl_tensor_python_function's DLPack capsules; stoker.dl_tensor_function)."""
    global _server
    if not callable(function):
        raise TypeError(f"{where}: function must be callable, got {type(function).__name__}")
    if not isinstance(num_outputs, int) or isinstance(num_outputs, bool) or num_outputs < 0:
        raise ValueError(f"{where}: num_outputs must be a whole number, got {num_outputs!r}")
    fid = next(_ids)
    _functions[fid] = _Function(function, num_outputs, batch_processing, torch, where,
                                whole_batches, dlpack)
    with _lock:
        if _server is None:
            _server = threading.Thread(target=_stoker.serve_python_calls, args=(_dispatch,),
                                       name="stoker python_function", daemon=True)
            _server.start()
            # Stopped before the interpreter ends (a daemon thread still in the server loop
            # then would be killed inside C++); after the pipelines close (registered later).
            atexit.register(stop)
    return fid


def _convert(sample, f, on_gpu):
    if f.torch:
        import torch.utils.dlpack

        return torch.utils.dlpack.from_dlpack(sample)
    return sample if on_gpu else sample.numpy()


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


def _dispatch(fid, inputs, on_gpu, batch_size):
    """Runs function `fid` on the native batches `inputs`; (outputs, wait streams). GPU outputs
    are exported ordered before the legacy default stream (1), on which the server records the
    event the stage waits for."""
    f = _functions[fid]
    stream = 1 if on_gpu else None
    batches = [Batch(b) for b in inputs]
    if f.dlpack is not None:
        outs = f.dlpack(f, batches, on_gpu, batch_size)
    elif f.whole_batches:
        outs = _outputs(f.function(*batches), f)
    elif f.batch_processing:
        args = [[_convert(b[i], f, on_gpu) for i in range(len(b))] for b in batches]
        outs = _outputs(f.function(*args), f)
    else:
        per_sample = [_outputs(f.function(*[_convert(b[i], f, on_gpu) for b in batches]), f)
                      for i in range(batch_size)]
        outs = tuple([s[k] for s in per_sample] for k in range(f.num_outputs))
    waits = set()
    payload = []
    for k, out in enumerate(outs):
        where = f"{f.where}, output {k}"
        if isinstance(out, (list, tuple)):
            samples = [export_array(x, where, on_gpu, stream, waits) for x in out]
            _same_ndim(samples, where)
            payload.append(samples)
        else:
            payload.append(export_array(out, where, on_gpu, stream, waits))
    return payload, sorted(waits)


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
    """Ends the server (at exit; a later pipeline with python_function starts it again)."""
    global _server
    with _lock:
        if _server is not None:
            _stoker.stop_python_calls()
            _server.join()
            _server = None


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
                   dlpack)
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
