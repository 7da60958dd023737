"""stoker.plugins.ray across Ray nodes: a head and two worker nodes started on 127.0.0.1 (each
`ray start --block` in its own process group, ended by the test). The pipelines' actors live on
the workers (a custom resource), one on each: every epoch gives every sample exactly once, a
dataset resumed from a saved position gives the rest of its epoch, and a worker node killed
mid-epoch loses no sample and repeats none.

The cluster and its driver run in a child Python process (this file run as a script): Ray keeps
per-process state that a driver connecting to a second cluster after test_ray.py's local one
does not survive (its actor classes are not exported again)."""

import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

if any(s in os.environ.get("LD_PRELOAD", "") for s in ("libasan", "libtsan")):
    pytest.skip("Ray's own processes do not run with a sanitizer preloaded", allow_module_level=True)
ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'stoker[ray]')")
pytest.importorskip("ray.data", reason="Ray Data is not installed (pip install 'stoker[ray]')")

import stoker  # noqa: E402
from stoker import fn  # noqa: E402
from stoker.plugins.ray import POSITION, Position, from_pipeline, release  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from ray_cluster import Cluster, clean_env  # noqa: E402

FILES = 240


def _numbered_files(root):
    os.makedirs(os.path.join(root, "c"))
    for i in range(FILES):
        with open(os.path.join(root, "c", f"{i:03d}.jpg"), "wb") as f:
            f.write(i.to_bytes(2, "little"))
    return root


def _make(root, delay=0.0):
    """The numbered files' pipeline; `delay` seconds per sample (a slow pipeline, still
    producing when a node is killed)."""
    def slow(x):
        time.sleep(delay)
        return x

    def make(shard_id, num_shards):
        p = stoker.Pipeline(batch_size=8, num_threads=1, seed=9)
        with p:
            data, _ = fn.readers.file(file_root=root, shard_id=shard_id, num_shards=num_shards,
                                      random_shuffle=True, name="r")
            p.set_outputs(fn.python_function(data, function=slow) if delay else data)
        return p
    return make


def _actor_nodes(ds, timeout=120):
    """The node of each shard's actor (waiting out a restart)."""
    def node(actor):
        end = time.monotonic() + timeout
        while True:
            try:
                return ray.get(actor.__ray_call__.remote(
                    lambda self: ray.get_runtime_context().get_node_id()))
            except ray.exceptions.RayActorError:
                if time.monotonic() > end:
                    raise
                time.sleep(1)
    return [node(actor) for actor in ds._stoker_actors[0]]


def _number(row):
    return int(np.asarray(row["data"]).view(np.uint16)[0])


def _across_nodes(cluster, root):
    ds = from_pipeline(_make(root), num_shards=2, resources={"shard": 1})
    epochs = [sorted(_number(r) for r in ds.take_all()) for _ in range(2)]
    nodes = set(_actor_nodes(ds))
    release(ds)  # the next dataset's actors take the same `shard` resources
    return {"exact": all(e == list(range(FILES)) for e in epochs), "nodes": len(nodes)}


def _node_loss(cluster, root):
    """Epoch 1 read in blocks of 4 while the node holding one shard's actor is killed (a third
    of the way in) and a new node joins, where Ray restarts the actor."""
    ds = from_pipeline(_make(root, delay=0.02), num_shards=2, block_rows=4,
                       resources={"shard": 1})
    first = sorted(_number(r) for r in ds.take_all())  # epoch 0
    before = _actor_nodes(ds)
    keeper = ray.get(ds._stoker_actors[1].__ray_call__.remote(
        lambda self: ray.get_runtime_context().get_node_id()))
    got, killed, after = [], False, 0
    started = time.monotonic()
    for batch in ds.iter_batches(batch_size=4, prefetch_batches=0):
        got += [int(np.asarray(x).view(np.uint16)[0]) for x in batch["data"]]
        if not killed and len(got) >= FILES // 3:
            cluster.kill(cluster.workers.pop(0))  # a node holding one shard's actor
            cluster.workers.append(cluster.add_worker(resources={"shard": 1}))
            killed = True
        elif killed:
            after += 1
    after_nodes = _actor_nodes(ds)
    moved = sum(a != b for a, b in zip(before, after_nodes))  # restarted elsewhere

    return {"epoch0": first == list(range(FILES)), "killed_mid_epoch": killed and after > 0,
            "states_on_driver_node": keeper == ray.get_runtime_context().get_node_id(),
            "actors_moved": moved,
            "epoch1": sorted(got) == list(range(FILES)), "read": len(got),
            "distinct": len(set(got)), "seconds": round(time.monotonic() - started)}


def _resume_across_nodes(cluster, root):
    """A resumable dataset over the worker nodes read a third into epoch 1, its position
    saved, the dataset released; one resumed from it gives the rest of epoch 1 and then
    epoch 2 as a dataset never stopped."""
    make = _make(root)
    whole = from_pipeline(make, num_shards=2, resumable=True, resources={"shard": 1})
    epochs = [[(int(t[1]), int(t[3]), _number({"data": d}))
               for b in whole.iter_batches(batch_size=8) for t, d in zip(b[POSITION], b["data"])]
              for _ in range(3)]
    release(whole)
    ds = from_pipeline(make, num_shards=2, resumable=True, resources={"shard": 1})
    position = Position()
    for _ in position.track(ds.iter_batches(batch_size=8)):  # epoch 0
        pass
    it = position.track(ds.iter_batches(batch_size=4, prefetch_batches=0))
    consumed = [_number({"data": x}) for _ in range(FILES // 12) for x in next(it)["data"]]
    it.close()
    saved = os.path.join(root, "position")
    position.save(saved)
    release(ds)
    resumed = from_pipeline(make, num_shards=2, resume_from=saved, resources={"shard": 1})
    rest = [(int(t[1]), int(t[3]), _number({"data": d}))
            for b in resumed.iter_batches(batch_size=8) for t, d in zip(b[POSITION], b["data"])]
    after = sorted((int(t[1]), int(t[3]), _number({"data": d}))
                   for b in resumed.iter_batches(batch_size=8)
                   for t, d in zip(b[POSITION], b["data"]))
    release(resumed)
    return {"consumed": len(consumed),
            "epoch1": sorted(consumed + [r[2] for r in rest]) == list(range(FILES)),
            "same_places": set(rest) <= set(epochs[1]), "epoch2": after == sorted(epochs[2])}


def _scenario(root):
    """The cluster's whole run (in the child process): the results of both cases as JSON."""
    c = Cluster(os.path.join(root, "logs"))
    try:
        c.connect()
        shard = {"shard": 1}
        c.workers = [c.add_worker(resources=shard), c.add_worker(resources=shard)]  # each waited
        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
        ray.data.DataContext.get_current().enable_progress_bars = False
        data = _numbered_files(os.path.join(root, "data"))
        return {"across": _across_nodes(c, data), "resume": _resume_across_nodes(c, data),
                "loss": _node_loss(c, data)}
    finally:
        if ray.is_initialized():
            ray.shutdown()
        c.stop()


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("ray-cluster"))
    # (without the RAY_ variables a Ray session of this process, test_ray.py's, has set)
    out = subprocess.run([sys.executable, __file__, root], capture_output=True, text=True,
                         timeout=600, env=clean_env())
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_epochs_across_nodes_are_exactly_once(results):
    assert results["across"] == {"exact": True, "nodes": 2}  # one actor on each worker node


def test_a_resumed_dataset_gives_the_rest_of_the_epoch_across_nodes(results):
    assert results["resume"] == {"consumed": 80, "epoch1": True, "same_places": True,
                                 "epoch2": True}


def test_a_node_killed_mid_epoch_loses_no_sample_and_repeats_none(results):
    loss = results["loss"]
    assert loss["epoch0"] and loss["killed_mid_epoch"] and loss["states_on_driver_node"], loss
    assert loss["actors_moved"] == 1, loss  # the killed node's actor, restarted on the new one
    assert loss["epoch1"], loss  # the epoch whole, each sample once


if __name__ == "__main__":
    print(json.dumps(_scenario(sys.argv[1])))
