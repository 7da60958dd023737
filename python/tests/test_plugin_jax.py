"""stoker.plugins.jax on the CPU: arrays from DLPack, epochs and last-batch policies as the torch
iterator, and two pipelines assembled into one array sharded over two (host) devices."""

import os
import subprocess
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="JAX is needed for the jax plugin tests")

import stoker  # noqa: E402
from stoker import fn, types  # noqa: E402
from stoker.plugins.jax import Iterator, LastBatchPolicy  # noqa: E402


def _pipe(root, **reader):
    pipe = stoker.Pipeline(batch_size=4, num_threads=1, seed=1)
    with pipe:
        data, labels = fn.readers.file(file_root=root, name="reader", **reader)
        pipe.set_outputs(data, fn.cast(labels, dtype=types.INT32))
    return pipe


def test_arrays_epochs_and_partial_last_batch(ten_files):
    it = Iterator(_pipe(ten_files, pad_last_batch=True), ["data", "label"], reader_name="reader",
                  last_batch_policy=LastBatchPolicy.PARTIAL)
    assert len(it) == 3
    for _ in range(2):
        steps = list(it)
        it.reset()
        assert [np.asarray(s["label"]).ravel().tolist() for s in steps] == [
            [0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
        assert isinstance(steps[0]["data"], jax.Array) and steps[0]["data"].shape == (4, 3)
        assert np.asarray(steps[0]["data"])[1].tolist() == [1, 1, 1]


def test_two_pipelines_make_one_sharded_array(ten_files):
    code = f"""
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
os.environ["JAX_PLATFORMS"] = "cpu"  # two host devices, also where JAX has a GPU
import jax, numpy as np, stoker
from jax.sharding import Mesh, NamedSharding, PartitionSpec
from stoker import fn, types
from stoker.plugins.jax import Iterator
pipes = []
for shard in range(2):
    p = stoker.Pipeline(batch_size=2, num_threads=1, seed=1)
    with p:
        data, labels = fn.readers.file(file_root={ten_files!r}, name="reader", shard_id=shard,
                                       num_shards=2, stick_to_shard=True, pad_last_batch=True)
        p.set_outputs(fn.cast(labels, dtype=types.INT32))
    pipes.append(p)
mesh = Mesh(np.array(jax.devices("cpu")), ("batch",))
it = Iterator(pipes, ["label"], reader_name="reader",
              sharding=NamedSharding(mesh, PartitionSpec("batch")))
step = next(it)
a = step["label"]
assert a.shape == (4, 1) and len(a.sharding.device_set) == 2, a.sharding
print(np.asarray(a).ravel().tolist())
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "[0, 1, 5, 6]"  # shard 0's first two, then shard 1's


def test_several_pipelines_need_a_sharding(ten_files):
    with pytest.raises(ValueError, match="several pipelines need a `sharding`"):
        Iterator([_pipe(ten_files), _pipe(ten_files)], ["data", "label"], reader_name="reader")
