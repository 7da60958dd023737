"""stoker.plugins.ray across Ray nodes: a head and two worker nodes started on 127.0.0.1 (each
`ray start --block` in its own process group, ended by the test). The pipelines' actors live on
the workers (a custom resource); a worker node killed in the middle of an epoch loses its
actor, which Ray restarts on a new node from the epoch's start (its state was kept on the head),
and the epoch still gives every sample exactly once (docs/scale_out.md)."""

import os
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'stoker[ray]')")
pytest.importorskip("ray.data", reason="Ray Data is not installed (pip install 'stoker[ray]')")

import stoker  # noqa: E402
from stoker import fn  # noqa: E402
from stoker.plugins.ray import from_pipeline  # noqa: E402

FILES = 240


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    def __init__(self, logs):
        self.logs = logs
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        # (Ray's default health checks: a dead node is noticed after some 20-30 s; tighter ones
        # declared nodes still starting on a busy 2-core machine dead.)
        self.env = dict(os.environ, RAY_AUTH_MODE="disabled")
        self.nodes = []
        self._start(["--head", f"--port={self.port}", "--num-cpus=1",
                     "--include-dashboard=false"])
        end = time.time() + 60  # workers join once the head's GCS listens
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if time.time() > end:
                    raise TimeoutError("the Ray head did not start") from None
                time.sleep(0.5)
        time.sleep(2)

    def _log(self):
        # (`ray start --block` fails with its output to /dev/null: each node writes a file)
        return open(os.path.join(self.logs, f"node{len(self.nodes)}.log"), "w")

    def _start(self, args):
        cmd = [sys.executable, "-m", "ray.scripts.scripts", "start", "--block",
               "--node-ip-address=127.0.0.1", "--object-store-memory=100000000", *args]
        proc = subprocess.Popen(cmd, env=self.env, start_new_session=True,
                                stdout=self._log(), stderr=subprocess.STDOUT)
        self.nodes.append(proc)
        return proc

    def add_worker(self):
        """A worker node with one CPU and one `shard`; once connected, waits until it is up."""
        known = {n["NodeID"] for n in ray.nodes()} if ray.is_initialized() else None
        proc = self._start([f"--address={self.address}", "--num-cpus=1",
                            '--resources={"shard": 1}'])
        if known is not None:
            self.wait_nodes(lambda nodes: any(n["NodeID"] not in known for n in nodes))
        return proc

    def wait_nodes(self, ok, timeout=90):
        end = time.time() + timeout
        while time.time() < end:
            if ok([n for n in ray.nodes() if n["Alive"]]):
                return
            time.sleep(0.5)
        raise TimeoutError(f"the Ray nodes did not come up: {ray.nodes()}")

    def kill(self, proc):
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    def stop(self):
        for proc in self.nodes:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(str(tmp_path_factory.mktemp("ray-logs")))
    try:
        workers = [c.add_worker(), c.add_worker()]
        for _ in range(60):
            try:
                ray.init(address=c.address, log_to_driver=False, configure_logging=False)
                break
            except Exception:
                time.sleep(1)
        c.wait_nodes(lambda nodes: len(nodes) >= 3)
        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        c.workers = workers
        yield c
    finally:
        if ray.is_initialized():
            ray.shutdown()
        c.stop()


@pytest.fixture(scope="module")
def numbered_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("numbered")
    os.makedirs(root / "c")
    for i in range(FILES):
        (root / "c" / f"{i:03d}.jpg").write_bytes(i.to_bytes(2, "little"))
    return str(root)


def _make(root):
    def make(shard_id, num_shards):
        p = stoker.Pipeline(batch_size=8, num_threads=1, seed=9)
        with p:
            data, _ = fn.readers.file(file_root=root, shard_id=shard_id, num_shards=num_shards,
                                      random_shuffle=True, name="r")
            p.set_outputs(fn.python_function(data, function=_slow))
        return p
    return make


def _slow(sample):
    """20 ms a sample: an epoch takes seconds, so that a node dies while it is being read."""
    time.sleep(0.02)
    return sample


def _fast(root):
    def make(shard_id, num_shards):
        p = stoker.Pipeline(batch_size=8, num_threads=1, seed=9)
        with p:
            data, _ = fn.readers.file(file_root=root, shard_id=shard_id, num_shards=num_shards,
                                      random_shuffle=True, name="r")
            p.set_outputs(data)
        return p
    return make


def _number(row):
    return int(np.asarray(row["data"]).view(np.uint16)[0])


def test_epochs_across_nodes_are_exactly_once(cluster, numbered_files):
    ds = from_pipeline(_fast(numbered_files), num_shards=2, resources={"shard": 1})
    nodes = set()
    for _ in range(2):
        assert sorted(_number(r) for r in ds.take_all()) == list(range(FILES))
    for actor in ds._stoker_actors[0]:
        nodes.add(ray.get(actor.__ray_call__.remote(
            lambda self: ray.get_runtime_context().get_node_id())))
    assert len(nodes) == 2  # one actor on each worker node


def test_a_node_killed_mid_epoch_loses_no_sample_and_repeats_none(cluster, numbered_files):
    ds = from_pipeline(_make(numbered_files), num_shards=2, block_rows=4,
                       resources={"shard": 1})
    assert sorted(_number(r) for r in ds.take_all()) == list(range(FILES))  # epoch 0
    got = []
    killed, after = False, 0
    for batch in ds.iter_batches(batch_size=4, prefetch_batches=0):
        got += [int(np.asarray(x).view(np.uint16)[0]) for x in batch["data"]]
        if not killed and len(got) >= FILES // 3:
            cluster.kill(cluster.workers.pop(0))   # a node holding one shard's actor
            cluster.workers.append(cluster.add_worker())  # where Ray restarts it
            killed = True
        if killed:
            after += 1
    assert killed and after > 0  # killed while the epoch was being read
    assert sorted(got) == list(range(FILES))  # epoch 1, whole, once
