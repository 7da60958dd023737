"""fn.dl_tensor_python_function (ops.DLTensorPythonFunction): python_function whose function
takes and returns DLPack capsules, as DALI 2.4's does.

DALI's rules, kept here (python/tests/parity/test_parity_python_function.py checks them):

* batch_processing=True by default (DALI's Python class sets it, though its schema's help says
  False): the function gets, per input, a list with one capsule per sample; otherwise it is
  called once per sample with one capsule per input (and batch-size times with no arguments
  when there are no inputs).
* It returns, per output, a list (or tuple) of samples in batch mode, one sample otherwise;
  num_outputs > 1 takes a tuple of exactly num_outputs (a list is refused: DALI's
  check_outputs), num_outputs=1 takes the value itself or a tuple whose first entry is used.
* A sample is a DLPack capsule, each consumed once. stoker also takes objects with
  ``__dlpack__`` (numpy, torch, cupy arrays), which DALI refuses (docs/dali_differences.md).
* On the GPU the stage's stream is synchronised before the call, whatever synchronize_stream
  says (stoker's python_function always does it: the function runs on a thread of its own, not
  on the stage's stream), and work the function queued on the legacy default stream is ordered
  before the outputs are used.

The machinery (the server thread, output_layouts, the native operator) is python_function's;
this module converts the samples in and out."""

import ctypes

from stoker.python_function import _check_cancelled, _node

_KDL_CPU, _KDL_CUDA = 1, 2

# Capsule names the DLPack protocol gives, with the offset of the DLTensor in the struct the
# capsule points to: DLManagedTensor starts with it; DLManagedTensorVersioned has its version
# (2 x uint32), manager_ctx, deleter and flags (8 bytes each) first.
_DLTENSOR_OFFSET = {b"dltensor": 0, b"dltensor_versioned": 32}
_USED = (b"used_dltensor", b"used_dltensor_versioned")

# A handle of our own on the C API, so that the argument types set here never clash with other
# code's use of ctypes.pythonapi's (shared) function objects.
_capi = ctypes.PyDLL("python", handle=ctypes.pythonapi._handle)
_capi.PyCapsule_GetName.restype = ctypes.c_char_p
_capi.PyCapsule_GetName.argtypes = [ctypes.py_object]
_capi.PyCapsule_GetPointer.restype = ctypes.c_void_p
_capi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _is_capsule(x):
    return type(x).__name__ == "PyCapsule" and type(x).__module__ == "builtins"


class DLPackCapsule:
    """A capsule the function returned, as a DLPack producer: stoker's import (export_array,
    numpy's from_dlpack) takes producers, which tell their device before giving the capsule.
    The capsule has no stream of its own to order (DLPack's stream handshake is the producer
    object's), so the stream argument is ignored."""

    def __init__(self, capsule, device):
        self._capsule = capsule
        self._device = device

    def __dlpack_device__(self):
        return self._device

    def __dlpack__(self, stream=None, **kwargs):
        return self._capsule


def _from_capsule(capsule, where):
    """`capsule` as a producer, after checking it is an unconsumed DLPack capsule."""
    name = _capi.PyCapsule_GetName(capsule)
    if name in _USED:
        raise ValueError(f"{where}: the DLPack capsule was consumed already (a capsule is "
                         f"taken once: one returned twice, or one given to from_dlpack and then "
                         f"returned; return the array made from it instead)")
    if name not in _DLTENSOR_OFFSET:
        raise TypeError(f"{where}: a capsule named {name!r} is not a DLPack tensor")
    address = _capi.PyCapsule_GetPointer(capsule, name) + _DLTENSOR_OFFSET[name]
    # DLTensor: void* data, then DLDevice {int32 device_type, int32 device_id}.
    device = (ctypes.c_int32 * 2).from_address(address + ctypes.sizeof(ctypes.c_void_p))
    return DLPackCapsule(capsule, (int(device[0]), int(device[1])))


def _sample(x, where, seen):
    """One returned sample as something export_array takes: a capsule wrapped as a producer;
    an object with __dlpack__ as it is."""
    if _is_capsule(x):
        if id(x) in seen:  # both would be imported: the second import would find it consumed
            raise ValueError(f"{where}: the same DLPack capsule is returned twice (a capsule "
                             f"is taken once)")
        seen.add(id(x))
        return _from_capsule(x, where)
    if hasattr(x, "__dlpack__"):
        return x
    raise TypeError(f"{where}: the function returns DLPack capsules (or objects with "
                    f"__dlpack__), got {type(x).__name__}")


def _split(value, f, when):
    """The function's value as one entry per output (DALI's rules: see the module's doc).
    `when` tells which call returned it, for errors."""
    if value is None:
        raise ValueError(f"{f.where}: the function returned None{when}; num_outputs="
                         f"{f.num_outputs}, so it returns {f.num_outputs} output(s)")
    if f.num_outputs == 1:
        if isinstance(value, tuple):
            if not value:
                raise ValueError(f"{f.where}: the function returned an empty tuple{when}")
            return (value[0],)  # DALI's rule: a tuple is the outputs; the first is output 0
        return (value,)
    if not isinstance(value, tuple):
        raise TypeError(f"{f.where}: num_outputs={f.num_outputs}, so the function returns a "
                        f"tuple of {f.num_outputs} outputs{when}; got {type(value).__name__}")
    if len(value) != f.num_outputs:
        raise ValueError(f"{f.where}: num_outputs={f.num_outputs}, but the function returned "
                         f"{len(value)} outputs{when}")
    return value


def _call(f, batches, on_gpu, batch_size, cancelled):
    """python_function's dlpack hook: runs the function on the batches' samples as DLPack
    capsules; one list of samples (producers) per output. cancelled(): nobody waits for the
    call any more (checked between samples)."""
    seen = set()
    if f.batch_processing:
        args = [[b[i].__dlpack__() for i in range(len(b))] for b in batches]
        outs = _split(f.function(*args), f, "")
        result = []
        for k, out in enumerate(outs):
            if not isinstance(out, (list, tuple)):
                raise TypeError(f"{f.where}, output {k}: with batch_processing=True the "
                                f"function returns a list of samples (DLPack) per output, "
                                f"got {type(out).__name__}")
            result.append([_sample(x, f"{f.where}, output {k}, sample {i}", seen)
                           for i, x in enumerate(out)])
        return tuple(result)
    result = tuple([] for _ in range(f.num_outputs))
    for i in range(batch_size):
        _check_cancelled(cancelled, f, i, batch_size)
        outs = _split(f.function(*[b[i].__dlpack__() for b in batches]), f,
                      f" for sample {i}")
        for k, x in enumerate(outs):
            result[k].append(_sample(x, f"{f.where}, output {k}, sample {i}", seen))
    return result


def _flag(value, arg):
    # DALI's bool arguments: True/False (or 0/1); anything else is a mistake (a string such as
    # "False" would otherwise count as true).
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    raise TypeError(f"fn.dl_tensor_python_function: {arg} must be True or False, got "
                    f"{value!r}")


def dl_tensor_python_function(*inputs, function, num_outputs=1, batch_processing=True,
                              synchronize_stream=True, output_layouts=None, device=None,
                              name=None, preserve=None):
    """Runs `function` (Python) on the inputs' samples as DLPack capsules (DALI's
    DLTensorPythonFunction). With batch_processing=True (the default) it is called once per
    batch with a list of capsules per input, and returns a list of samples per output (a tuple
    of num_outputs lists when num_outputs > 1); with batch_processing=False once per sample,
    with one capsule per input, returning a sample (or a tuple of num_outputs). A sample is a
    DLPack capsule (e.g. torch.utils.dlpack.to_dlpack(t)) or an object with __dlpack__; take
    the inputs with torch.utils.dlpack.from_dlpack, cupy.from_dlpack and the like. The
    function must not modify its inputs. `output_layouts`: as python_function's.
    synchronize_stream: accepted; on the GPU stoker synchronises the stage's stream before the
    call either way, and orders the function's work on the legacy default stream before the
    outputs are used (work on other streams must be finished when the function returns)."""
    batch_processing = _flag(batch_processing, "batch_processing")
    _flag(synchronize_stream, "synchronize_stream")  # stoker always synchronises (see above)
    return _node("dl_tensor_python_function", False, inputs, function, num_outputs,
                 batch_processing, output_layouts, device, name, dlpack=_call)
