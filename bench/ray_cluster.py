"""A Ray cluster of several nodes on this machine, for stoker.plugins.ray's tests and
bench/scale_out.py: a head and worker nodes, each `ray start --block` on 127.0.0.1 in its own
process group (optionally pinned to its own cores with taskset), ended by `stop()`.

Run the driver that uses it in a fresh process without the RAY_ variables of another Ray session
(`clean_env()`): Ray keeps per-process state that a driver connecting to a second cluster does
not survive, and a parent's session variables point the nodes at the wrong session."""

import os
import signal
import socket
import subprocess
import sys
import time


def clean_env():
    """os.environ without the RAY_ variables a Ray session of this process has set, and with
    Ray's usage statistics off: Ray Data records a dataset's execution when it ends, which for
    an iteration broken off happens after ray.shutdown(), and that call would start (connect)
    Ray again and wait for the stopped cluster at the driver's exit."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    return env


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """`head_cpus` CPUs on the head (pinned to `head_cores` when given); add_worker() adds
    nodes. Each node writes its output to logs/nodeK.log (`ray start --block` fails silently
    otherwise). Ray's default health checks notice a dead node after some 20-30 s; tighter ones
    declared nodes still starting on a busy 2-core machine dead."""

    def __init__(self, logs, head_cpus=1, head_cores=None, object_store=100_000_000,
                 head_resources=None):
        self.logs = logs
        os.makedirs(logs, exist_ok=True)
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.object_store = object_store
        self.env = dict(clean_env(), RAY_AUTH_MODE="disabled")
        self.nodes = []
        self._start(["--head", f"--port={self.port}", f"--num-cpus={head_cpus}",
                     "--include-dashboard=false", *self._resources(head_resources)], head_cores)
        end = time.time() + 60  # workers join once the head's GCS listens
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if time.time() > end:
                    raise TimeoutError(f"the Ray head did not start (logs in {logs})") from None
                time.sleep(0.5)
        time.sleep(2)

    @staticmethod
    def _resources(resources):
        import json
        return [f"--resources={json.dumps(resources)}"] if resources else []

    def _start(self, args, cores=None):
        log = open(os.path.join(self.logs, f"node{len(self.nodes)}.log"), "w")
        pin = ["taskset", "-c", ",".join(map(str, cores))] if cores else []
        cmd = [*pin, sys.executable, "-m", "ray.scripts.scripts", "start", "--block",
               "--node-ip-address=127.0.0.1", f"--object-store-memory={self.object_store}",
               *args]
        proc = subprocess.Popen(cmd, env=self.env, start_new_session=True, stdout=log,
                                stderr=subprocess.STDOUT)
        self.nodes.append(proc)
        return proc

    def connect(self, timeout=60):
        """ray.init on this cluster (retried while the head starts), the driver on the head
        node. The nodes listen on 127.0.0.1: a driver looking for a node at the host's own
        address finds none and attaches to any of them, a worker node a test may kill (with
        what the driver placed on its node)."""
        import ray
        end = time.time() + timeout
        while True:
            try:
                ctx = ray.init(address=self.address, log_to_driver=False,
                               configure_logging=False, _node_ip_address="127.0.0.1")
                break
            except Exception:
                if time.time() > end:
                    raise
                time.sleep(1)
        here = ray.get_runtime_context().get_node_id()
        head = [n["NodeID"] for n in ray.nodes() if "node:__internal_head__" in n["Resources"]]
        if head != [here]:
            raise RuntimeError(f"the driver attached to node {here}, not the head {head}")
        return ctx

    def add_worker(self, cpus=1, cores=None, resources=None):
        """A worker node with `cpus` CPUs and `resources`; when this process is connected,
        waits until the node is up."""
        import ray
        known = {n["NodeID"] for n in ray.nodes()} if ray.is_initialized() else None
        proc = self._start([f"--address={self.address}", f"--num-cpus={cpus}",
                            *self._resources(resources)], cores)
        if known is not None:
            self.wait_nodes(lambda nodes: any(n["NodeID"] not in known for n in nodes))
        return proc

    def wait_nodes(self, ok, timeout=90):
        import ray
        end = time.time() + timeout
        while time.time() < end:
            if ok([n for n in ray.nodes() if n["Alive"]]):
                return
            time.sleep(0.5)
        raise TimeoutError(f"the Ray nodes did not come up: {ray.nodes()}")

    def kill(self, proc):
        """Ends a node at once (SIGKILL to its process group: raylet, workers, object store;
        whether or not `ray start` itself still runs, and its processes in other groups)."""
        import psutil  # (Ray's dependency)
        try:
            family = psutil.Process(proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            family = []
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for p in family:
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass
        proc.wait()

    def stop(self):
        for proc in self.nodes:
            self.kill(proc)
