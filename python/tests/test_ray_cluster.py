"""stoker.plugins.ray across Ray nodes: a head and two worker nodes started on 127.0.0.1 (each
`ray start --block` in its own process group, ended by the test). The pipelines' actors live on
the workers (a custom resource), one on each, and every epoch gives every sample exactly once.

The cluster and its driver run in a child Python process (this file run as a script): Ray keeps
per-process state that a driver connecting to a second cluster after test_ray.py's local one
does not survive (its actor classes are not exported again)."""

import json
import os
import signal
import socket
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

    def stop(self):
        for proc in self.nodes:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()


def _numbered_files(root):
    os.makedirs(os.path.join(root, "c"))
    for i in range(FILES):
        with open(os.path.join(root, "c", f"{i:03d}.jpg"), "wb") as f:
            f.write(i.to_bytes(2, "little"))
    return root


def _make(root):
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


def _across_nodes(cluster, root):
    ds = from_pipeline(_make(root), num_shards=2, resources={"shard": 1})
    epochs = [sorted(_number(r) for r in ds.take_all()) for _ in range(2)]
    nodes = {ray.get(actor.__ray_call__.remote(
        lambda self: ray.get_runtime_context().get_node_id())) for actor in ds._stoker_actors[0]}
    return {"exact": all(e == list(range(FILES)) for e in epochs), "nodes": len(nodes)}


def _scenario(root):
    """The cluster's whole run (in the child process): the results of both cases as JSON."""
    os.makedirs(os.path.join(root, "logs"))
    c = Cluster(os.path.join(root, "logs"))
    try:
        for _ in range(60):
            try:
                ray.init(address=c.address, log_to_driver=False, configure_logging=False)
                break
            except Exception:
                time.sleep(1)
        c.workers = [c.add_worker(), c.add_worker()]  # one after the other, each waited for
        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
        ray.data.DataContext.get_current().enable_progress_bars = False
        data = _numbered_files(os.path.join(root, "data"))
        return {"across": _across_nodes(c, data)}
    finally:
        if ray.is_initialized():
            ray.shutdown()
        c.stop()


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("ray-cluster"))
    # (without the RAY_ variables a Ray session of this process, test_ray.py's, has set)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    out = subprocess.run([sys.executable, __file__, root], capture_output=True, text=True,
                         timeout=600, env=env)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_epochs_across_nodes_are_exactly_once(results):
    assert results["across"] == {"exact": True, "nodes": 2}  # one actor on each worker node


if __name__ == "__main__":
    print(json.dumps(_scenario(sys.argv[1])))
