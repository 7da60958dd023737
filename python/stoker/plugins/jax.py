"""JAX iterator over stoker pipelines (DALI 2.4's nvidia.dali.plugin.jax): each step is a dict
{name: jax.Array} for the names of `output_map`, made from the batches through DLPack (no copy
where JAX accepts the memory: CUDA batches; CPU batches JAX may copy to align them). Epochs and
the last batch follow the same rules as stoker.plugins.torch (see LastBatchPolicy).

What a step holds, as in DALI:
- one pipeline, no `sharding`, pmap_compatible falsy: that pipeline's arrays;
- a `sharding` (e.g. NamedSharding(Mesh(devices, ("batch",)), PartitionSpec("batch"))), one
  pipeline per device: global arrays whose batch axis is split over the pipelines;
- otherwise (several pipelines, or pmap_compatible=True): the pipelines' arrays stacked on a new
  leading axis, shape (pipelines, batch, ...), for jax.pmap — sharded over that axis when the
  parts are on distinct devices, one array when they are all on one device.

`data_iterator` decorates a pipeline function so that calling it builds the pipelines (one per
device with `sharding` or `devices`) and returns the iterator:

    from stoker.plugin.jax import data_iterator
    @data_iterator(output_map=["images", "labels"], reader_name="reader")
    def iterator_fn():
        jpegs, labels = fn.readers.file(file_root=root, name="reader")
        return fn.decoders.image(jpegs), labels
    for step in iterator_fn(batch_size=8):
        loss = train_step(params, step["images"], step["labels"])
"""

import functools
import json

import jax
import jax.dlpack
import jax.numpy as jnp
import numpy as np

from stoker.pipeline import pipeline_def
from stoker.plugins._iterator import BaseIterator, LastBatchPolicy

__all__ = ["Iterator", "DALIGenericIterator", "LastBatchPolicy", "data_iterator",
           "default_num_threads_value"]


def _device(array):
    """The one device of a single-device array (jax.Array.device is newer than jax 0.4.30)."""
    devices = array.devices()
    if len(devices) != 1:
        raise ValueError(f"expected an array on one device, got one on {len(devices)}")
    return next(iter(devices))


def _stack(parts, name):
    """The pipelines' parts on a new leading axis (DALI's pmap-compatible output): sharded over
    that axis when each part is on its own device, else one array on the parts' device."""
    devices = [_device(p) for p in parts]
    if len(set(devices)) == len(devices):
        mesh = jax.sharding.Mesh(np.array(devices), axis_names=("device",))
        sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("device"))
        shape = (len(parts),) + parts[0].shape
        return jax.make_array_from_single_device_arrays(
            shape, sharding, [jnp.expand_dims(p, 0) for p in parts])
    if len(set(devices)) == 1:
        return jnp.stack(parts)
    raise ValueError(f"output '{name}': the pipelines' arrays are on devices {devices}; stacking "
                     f"them needs each on its own device or all on one (as in DALI)")


class Iterator(BaseIterator):
    __doc__ = BaseIterator.__doc__ + """
    Each step is a dict {name: jax.Array}: the one pipeline's arrays; with `sharding`, global
    arrays whose batch axis is split over the pipelines (one per device of the sharding, in the
    order the sharding maps batch rows to devices; a pipeline's CPU batch is put on its device);
    with several pipelines and no sharding, or pmap_compatible=True, the pipelines' arrays
    stacked on a new leading axis (for jax.pmap). last_batch_policy=PARTIAL (which DALI's JAX
    iterator refuses) is accepted for one pipeline without sharding or pmap_compatible."""

    def __init__(self, pipelines, output_map, size=-1, reader_name=None, auto_reset=False,
                 last_batch_padded=False, last_batch_policy=LastBatchPolicy.FILL,
                 prepare_first_batch=True, sharding=None, pmap_compatible=None):
        if sharding is not None and not isinstance(sharding, jax.sharding.Sharding):
            raise TypeError(f"`sharding` should be an instance of `jax.sharding.Sharding`, got "
                            f"{type(sharding).__name__}")
        n = len(pipelines) if isinstance(pipelines, (list, tuple)) else 1
        self._pmap = bool(pmap_compatible)  # None: False, as in DALI's iterator
        if last_batch_policy == LastBatchPolicy.PARTIAL and (n > 1 or sharding is not None
                                                             or self._pmap):
            raise ValueError("last_batch_policy=PARTIAL is not supported with several "
                             "pipelines, a sharding or pmap_compatible: the last step's parts "
                             "would differ in size (DALI's JAX iterator refuses PARTIAL)")
        if sharding is not None:
            devices = list(sharding.addressable_devices)
            if len(devices) != n:
                raise ValueError(f"the sharding spans {len(devices)} devices of this process "
                                 f"for {n} pipelines: give one pipeline per device")
        self._sharding = sharding
        # Set by data_iterator(devices=...): where each pipeline's part goes, so that CPU
        # pipelines' parts stack over the devices for jax.pmap (DALI's would all be on JAX's
        # CPU device, stacked into one array that jax.pmap refuses).
        self._place_on = None
        self.output_map = list(output_map)  # DALI's public attribute
        self._output_categories = set(self.output_map)
        super().__init__(pipelines, output_map, size=size, reader_name=reader_name,
                         auto_reset=auto_reset, last_batch_policy=last_batch_policy,
                         last_batch_padded=last_batch_padded,
                         prepare_first_batch=prepare_first_batch)

    @property
    def batch_size(self):
        """Samples per pipeline and step (DALI's attribute)."""
        return self._batch

    def _convert(self, k, batch, take):
        a = jax.dlpack.from_dlpack(batch)
        device = None
        if self._sharding is not None:
            # Pipeline k's part of the global array lives on the k-th device of the sharding;
            # a CPU pipeline's part (on JAX's CPU device) is put there.
            device = self._part_devices()[k]
        elif self._place_on is not None:  # data_iterator's `devices`: pipeline k's device
            device = self._place_on[k]
        if device is not None and a.devices() != {device}:
            a = jax.device_put(a, device)
        return a[:take] if take < a.shape[0] else a

    def _num_devices(self):
        """Devices of the sharding, over every process (DALI's global batch: this many parts)."""
        if isinstance(self._sharding, jax.sharding.NamedSharding):
            return self._sharding.mesh.size
        return len(self._sharding.device_set)

    def _part_devices(self):
        if not hasattr(self, "_devices"):
            shape = (self._num_devices() * self._batch,)
            index_map = self._sharding.addressable_devices_indices_map(shape)
            self._devices = sorted(index_map, key=lambda d: index_map[d][0].start or 0)
        return self._devices

    def _step(self, per_pipeline):
        if len(self._pipes) == 1 and self._sharding is None and not self._pmap:
            return per_pipeline[0]
        out = {}
        for name in self._output_map:
            parts = [p[name] for p in per_pipeline]
            if len({x.shape for x in parts}) != 1:
                raise ValueError(f"output '{name}': the pipelines' batches differ in shape "
                                 f"({[x.shape for x in parts]}); a global array needs equal parts")
            if self._sharding is not None:
                shape = (self._num_devices() * parts[0].shape[0],) + parts[0].shape[1:]
                out[name] = jax.make_array_from_single_device_arrays(shape, self._sharding,
                                                                     parts)
            else:
                out[name] = _stack(parts, name)
        return out

    # -- DALI's checkpoints: one string per pipeline -------------------------------------------
    def checkpoints(self):
        """The iterator's position as DALI's checkpoints(): one string per pipeline (the
        pipeline's checkpoint and the epoch accounting), for data_iterator's `checkpoints=`."""
        state = self.state_dict()
        pipes = state.pop("pipelines")
        return [json.dumps({"stoker_jax_iterator": state, "pipeline": p}) for p in pipes]

    def _restore_accounting(self, state):
        for key in self._STATE:
            value = state[key.lstrip("_")]
            if value is not None and isinstance(getattr(self, key, None), np.ndarray):
                value = np.array(value, dtype=np.int64)
            setattr(self, key, value)


DALIGenericIterator = Iterator


def default_num_threads_value():
    """num_threads that data_iterator gives the pipelines when the call does not (DALI's 4; not
    tuned for any workload)."""
    return 4


def _split_checkpoint(text):
    """(pipeline checkpoint, iterator accounting or None) from one of checkpoints()' strings or
    a pipeline's own checkpoint."""
    if text and text.lstrip().startswith("{"):
        data = json.loads(text)
        if isinstance(data, dict) and "stoker_jax_iterator" in data:
            return data["pipeline"], data["stoker_jax_iterator"]
    return text, None


def _data_iterator_impl(iterator_type, pipeline_fn, output_map, size, reader_name, auto_reset,
                        last_batch_padded, last_batch_policy, prepare_first_batch, sharding,
                        devices, pmap_compatible):
    """data_iterator for `iterator_type` (also clu.peekable_data_iterator's)."""
    if sharding is not None and devices is not None:
        raise ValueError("Only one of `sharding` and `devices` arguments can be provided.")

    def decorate(func):
        @functools.wraps(func)
        def create_iterator(*args, checkpoints=None, **kwargs):
            make = pipeline_def(func)
            kwargs.setdefault("num_threads", default_num_threads_value())
            common = dict(output_map=output_map, size=size, reader_name=reader_name,
                          auto_reset=auto_reset, last_batch_padded=last_batch_padded,
                          last_batch_policy=last_batch_policy,
                          prepare_first_batch=prepare_first_batch)
            if sharding is None and devices is None:
                # One pipeline, on the first device (DALI's choice: the process's JAX device
                # cannot be told from JAX, google/jax#16024).
                kwargs.setdefault("device_id", 0)
                ckpt, state = _split_checkpoint(checkpoints[0] if checkpoints else None)
                pipelines = [make(*args, checkpoint=ckpt, **kwargs)]
                states = [state]
                extra = dict(pmap_compatible=pmap_compatible)
            else:
                pipelines, states = _pipelines_per_device(make, args, kwargs, checkpoints,
                                                          devices)
                if sharding is not None:
                    extra = dict(sharding=sharding, pmap_compatible=pmap_compatible)
                else:  # `devices`: outputs for jax.pmap unless the call says otherwise
                    extra = dict(pmap_compatible=True if pmap_compatible is None
                                 else pmap_compatible)
            it = iterator_type(pipelines=pipelines, **common, **extra)
            if devices is not None:
                it._place_on = list(devices)
            if states[0] is not None:
                it._restore_accounting(states[0])
            return it

        return create_iterator

    return decorate(pipeline_fn) if pipeline_fn else decorate


def _pipelines_per_device(make, args, kwargs, checkpoints, devices):
    """One pipeline per device (the given `devices`, or this process's JAX devices), as DALI
    builds them: device_id the index, shard_id the JAX device's id, num_shards the devices in the
    job, and the call's batch_size (global) split evenly over all of JAX's devices."""
    if "batch_size" not in kwargs:
        raise TypeError("data_iterator with `sharding` or `devices`: give batch_size (the "
                        "global batch, split evenly over the devices) when calling the "
                        "decorated function")
    kwargs = dict(kwargs, batch_size=kwargs["batch_size"] // len(jax.devices()))
    use = devices if devices is not None else jax.local_devices()
    num_shards = len(devices) if devices is not None else jax.device_count()
    if devices is not None and jax.local_device_count() != jax.device_count():
        raise RuntimeError("Iterator compatible with pmapped JAX functions does not support "
                           "running in multiprocess mode. Use `sharding` argument instead.")
    if checkpoints and len(checkpoints) != len(use):
        raise RuntimeError(f"The number of checkpoints provided ({len(checkpoints)}) should match "
                           f"the number of devices to use ({len(use)}).")
    pipelines, states = [], []
    for i, device in enumerate(use):
        ckpt, state = _split_checkpoint(checkpoints[i] if checkpoints else None)
        pipelines.append(make(*args, **kwargs, device_id=i, shard_id=device.id,
                              num_shards=num_shards, checkpoint=ckpt))
        states.append(state)
    return pipelines, states


def data_iterator(pipeline_fn=None, output_map=[], size=-1, reader_name=None,  # noqa: B006
                  auto_reset=False, last_batch_padded=False,
                  last_batch_policy=LastBatchPolicy.FILL, prepare_first_batch=True,
                  sharding=None, devices=None, pmap_compatible=None):
    """Decorator (DALI's): the decorated pipeline function, when called, builds its pipeline(s)
    and returns a DALIGenericIterator over them. The call's keyword arguments go to the
    pipelines (batch_size, seed, ...) or the function, as with pipeline_def; num_threads
    defaults to default_num_threads_value() and device_id to 0. The decorator's arguments are
    the iterator's. With `sharding` (global arrays) or `devices` (outputs stacked for jax.pmap)
    it builds one pipeline per device, each with device_id (its index), shard_id (the JAX
    device's id) and num_shards, which the function must accept and give its reader; the
    call's batch_size is the global batch, split evenly over JAX's devices. `checkpoints=`
    (the call's): strings from the iterator's checkpoints() to continue from."""
    return _data_iterator_impl(Iterator, pipeline_fn, output_map, size, reader_name, auto_reset,
                               last_batch_padded, last_batch_policy, prepare_first_batch,
                               sharding, devices, pmap_compatible)
