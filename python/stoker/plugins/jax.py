"""JAX iterator over stoker pipelines: each step is a dict {name: jax.Array} for the names of
`output_map`, made from the batches through DLPack (no copy where JAX accepts the memory: CUDA
batches; CPU batches JAX may copy to align them). With one pipeline per device and a `sharding`
(e.g. NamedSharding(Mesh(devices, ("batch",)), PartitionSpec("batch"))), the pipelines' batches
become one global array split along the batch axis, each part on its pipeline's device. Epochs
and the last batch follow the same rules as stoker.plugins.torch (see LastBatchPolicy).

    from stoker.plugins.jax import Iterator
    for step in Iterator(pipe, ["images", "labels"], reader_name="reader"):
        loss = train_step(params, step["images"], step["labels"])
"""

import jax
import jax.dlpack

from stoker.plugins._iterator import BaseIterator, LastBatchPolicy

__all__ = ["Iterator", "DALIGenericIterator", "LastBatchPolicy"]


class Iterator(BaseIterator):
    __doc__ = BaseIterator.__doc__ + """
    Each step is a dict {name: jax.Array}: the one pipeline's arrays, or with several pipelines
    and `sharding`, global arrays whose batch axis is split over the pipelines in order (the
    sharding's devices must be the pipelines' devices, one each)."""

    def __init__(self, pipelines, output_map, size=-1, reader_name=None, auto_reset=False,
                 last_batch_padded=False, last_batch_policy=LastBatchPolicy.FILL,
                 prepare_first_batch=True, sharding=None, pmap_compatible=None):
        if pmap_compatible:
            raise NotImplementedError("pmap_compatible=True (stacked per-device outputs for "
                                      "jax.pmap) is not supported yet; use a `sharding`")
        n = len(pipelines) if isinstance(pipelines, (list, tuple)) else 1
        if n > 1 and sharding is None:
            raise ValueError("several pipelines need a `sharding` to assemble global arrays")
        if sharding is not None:
            devices = list(sharding.addressable_devices)
            if len(devices) != n:
                raise ValueError(f"the sharding spans {len(devices)} devices for {n} pipelines: "
                                 f"give one pipeline per device")
        self._sharding = sharding
        super().__init__(pipelines, output_map, size=size, reader_name=reader_name,
                         auto_reset=auto_reset, last_batch_policy=last_batch_policy,
                         last_batch_padded=last_batch_padded,
                         prepare_first_batch=prepare_first_batch)

    def _convert(self, k, batch, take):
        a = jax.dlpack.from_dlpack(batch)
        if self._sharding is not None:
            # Pipeline k's part of the global array lives on the k-th device of the sharding,
            # in the order the sharding maps batch rows to devices.
            device = self._part_devices()[k]
            if a.devices() != {device}:
                a = jax.device_put(a, device)
        return a[:take] if take < a.shape[0] else a

    def _part_devices(self):
        if not hasattr(self, "_devices"):
            shape = (len(self._pipes) * self._batch,)
            index_map = self._sharding.addressable_devices_indices_map(shape)
            self._devices = sorted(index_map, key=lambda d: index_map[d][0].start or 0)
        return self._devices

    def _step(self, per_pipeline):
        if self._sharding is None:
            return per_pipeline[0]
        out = {}
        for name in self._output_map:
            parts = [p[name] for p in per_pipeline]
            if len({x.shape for x in parts}) != 1:
                raise ValueError(f"output '{name}': the pipelines' batches differ in shape "
                                 f"({[x.shape for x in parts]}); a global array needs equal parts")
            shape = (sum(x.shape[0] for x in parts),) + parts[0].shape[1:]
            out[name] = jax.make_array_from_single_device_arrays(shape, self._sharding, parts)
        return out


# DALI's name (nvidia.dali.plugin.jax), so that a script written for DALI runs unchanged.
DALIGenericIterator = Iterator
