"""fn.jax_function (DALI 2.4's nvidia.dali.plugin.jax.fn.jax_function): a function on jax.Arrays
becomes a pipeline operator. It runs once per batch on stoker's python_function machinery (a
Python thread of stoker's, holding the GIL): each input batch reaches it as one jax.Array whose
first axis is the batch (so the samples must share a shape; a view of stoker's memory through
DLPack, no copy), and it returns one array per output in the same form.

    @jax_function
    @jax.jit
    @jax.vmap
    def flip(image):          # one HWC image (vmap maps over the batch)
        return image[:, ::-1, :]

    @pipeline_def(batch_size=4, num_threads=2)
    def pipe():
        images, _ = fn.readers.file(file_root=root)
        return flip(fn.resize(fn.decoders.image(images), size=(224, 224)))
"""

import functools

import jax
import jax.dlpack
import jax.numpy as jnp
import numpy as np

from stoker.python_function import _node

__all__ = ["jax_function"]


def _as_batch(batch, k, where):
    """Input k's batch (a stoker Batch) as one jax.Array with the batch as its first axis: a
    view of the batch (DLPack, no copy) where its samples lie back to back, as DALI hands it
    (operators' outputs always do); else the samples stacked (a copy). A CPU batch becomes an
    array on JAX's CPU device, as in DALI: where JAX's default device is a GPU, the function
    still computes on the CPU."""
    if len(batch) and not batch.is_uniform():
        shapes = sorted(set(batch.shape()))
        raise ValueError(f"{where}: input {k} has samples of different shapes "
                         f"({shapes[:3]}...); jax_function takes batches of one shape "
                         f"(resize or pad them in the pipeline)")
    if len(batch) and batch.is_contiguous():
        return jax.dlpack.from_dlpack(batch)
    if batch.device == "gpu":
        return jnp.stack([jax.dlpack.from_dlpack(s) for s in batch]) if len(batch) else \
            jnp.zeros((0,))
    stacked = np.stack([s.numpy() for s in batch]) if len(batch) else np.zeros((0,))
    return jax.device_put(stacked, jax.devices("cpu")[0])


def _layouts(output_layouts, num_outputs, where):
    """(one layout per output, whether outputs without one take their input's): DALI's rule
    for jax_function. Without output_layouts output i gets input i's layout where their
    dimensions agree (decided per batch); given, the layouts are taken as they are ('' for
    none), one per output. A lone string goes to every output, as DALI documents (DALI 2.4
    itself refuses one string for several outputs)."""
    if output_layouts is None:
        return [""] * num_outputs, True
    if isinstance(output_layouts, str):
        return [output_layouts] * num_outputs, False
    if not isinstance(output_layouts, (list, tuple)):
        raise TypeError(f"{where}: output_layouts must be a layout string or a list of them, "
                        f"got {output_layouts!r}")
    if len(output_layouts) != num_outputs:
        raise ValueError(f"{where}: output_layouts has {len(output_layouts)} entries for "
                         f"num_outputs={num_outputs}; give one per output")
    return list(output_layouts), False


def _with_sharding(function, sharding, where):
    """DALI's `sharding`: the function sees global arrays of which this process's batch is the
    one local part (only where the process has one JAX device, as in DALI)."""
    if jax.local_device_count() != 1:
        raise NotImplementedError(
            f"{where}: `sharding` is supported only for global (multi-process) sharding: the "
            f"process must see one JAX device, it sees {jax.local_device_count()}")
    if not isinstance(sharding, jax.sharding.Sharding):
        raise ValueError(f"{where}: `sharding` must be a jax.sharding.Sharding, got "
                         f"{type(sharding).__name__}")
    if isinstance(sharding, jax.sharding.NamedSharding):
        num_devices = sharding.mesh.size
    else:
        num_devices = len(sharding.device_set)

    def local_part(array):
        parts = [x.data for x in array.addressable_shards]
        if len(parts) != 1:
            raise ValueError(f"{where}: the function returned an array with {len(parts)} local "
                             f"shards, expected exactly one")
        return parts[0]

    def inner(*arrays):
        arrays = [jax.make_array_from_single_device_arrays(
            (num_devices * a.shape[0],) + a.shape[1:], sharding, [a]) for a in arrays]
        out = function(*arrays)
        if out is None:
            return None
        out = out if isinstance(out, (tuple, list)) else (out,)
        return tuple(local_part(x) for x in out)

    return inner


def _batch_function(function, num_outputs, sharding, where):
    """The function as python_function calls it: a stoker Batch per input in (whole_batches),
    one array (num_outputs=1) or a tuple of num_outputs arrays out."""
    body = function if sharding is None else _with_sharding(function, sharding, where)

    def call(*inputs):
        out = body(*[_as_batch(batch, k, where) for k, batch in enumerate(inputs)])
        # DALI takes a lone array or a tuple/list of arrays, whatever num_outputs says.
        out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        if len(out) != num_outputs:
            raise ValueError(f"{where}: num_outputs={num_outputs}, the function returned "
                             f"{len(out)} arrays")
        return out[0] if num_outputs == 1 else out

    return call


def jax_function(function=None, num_outputs=1, output_layouts=None, sharding=None, device=None,
                 preserve=True):
    """Turns `function`, which takes and returns jax.Arrays (each a whole batch, its first axis
    the samples), into an operator called with the pipeline's DataNodes; as a decorator, bare or
    with arguments. num_outputs: arrays returned (1: a lone array; more: a tuple).
    output_layouts: one layout for every output, or one per output; without it output i takes
    input i's layout where their dimensions agree. sharding: the function sees
    global jax.Arrays with this sharding (this process's batch its local part; one JAX device
    per process). device: "cpu" or "gpu" (None: from the inputs). preserve: accepted; an
    operator whose outputs are not used is removed, as in every stoker pipeline."""
    del preserve  # stoker's pipelines keep what their outputs need (docs/dali_differences.md)
    if not isinstance(num_outputs, int) or isinstance(num_outputs, bool) or num_outputs < 0:
        raise ValueError(f"jax_function: num_outputs must be a whole number, got "
                         f"{num_outputs!r}")

    def decorator(function):
        if not callable(function):
            raise TypeError(f"jax_function: function must be callable, got "
                            f"{type(function).__name__}")
        name = getattr(function, "__name__", "function")
        where = f"jax_function '{name}'"

        @functools.wraps(function)
        def dali_callback(*args):
            call = _batch_function(function, num_outputs, sharding, where)
            call.__name__ = name  # python_function names the function in its errors
            layouts, from_inputs = _layouts(output_layouts, num_outputs, where)
            return _node("jax_function", False, args, call, num_outputs, True, layouts,
                         device, None, layouts_from_inputs=from_inputs, whole_batches=True)

        return dali_callback

    return decorator if function is None else decorator(function)
