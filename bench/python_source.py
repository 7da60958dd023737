"""A Python loading function in worker processes, samples/s: torch's DataLoader, stoker's
parallel external_source and DALI 2.4's, with the same function and the same number of workers,
in the same run on the same files.

    PYTHONPATH=build/python python3 bench/python_source.py --data DIR [--make]
        [--workers 8] [--batch-size 64] [--loaders torch,stoker,stoker-depth1,dali,dali-best]
        [--seconds 10] [--repeats 3] [--json F]

The function is what a user writes for a custom dataset: read a JPEG, decode it with Pillow,
resize it to 224x224 and return it as a uint8 HWC array with its label (per sample). Each
loader hands the training loop a batch as torch tensors (images [B, 224, 224, 3] and labels):
torch's DataLoader (map-style dataset, batch_size, num_workers, persistent workers, its default
prefetch_factor=2) collates in its workers; stoker and DALI run the function with
fn.external_source(parallel=True, batch=False) in py_num_workers processes and their torch
iterators (DALIGenericIterator) give the tensors. The parallel source's prefetch_queue_depth:
"stoker" at its default (2 batches ahead), "stoker-depthN" at N, "dali" at DALI's default (1),
"dali-best" at 2. Each loader runs in its own process: a warm-up (2 s), then a --seconds window;
samples/s over the window, median of --repeats processes, the repeats interleaved (every loader
once, then again).
"""

import argparse
import datetime
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

SIZE = 224


class LoadJpeg:
    """The per-sample function (picklable: module level, state set at construction)."""

    def __init__(self, files):
        self.files = files

    def load(self, i):
        from PIL import Image

        path = self.files[i % len(self.files)]
        with Image.open(path) as im:
            image = np.asarray(im.convert("RGB").resize((SIZE, SIZE), Image.BILINEAR))
        return image, np.array([i % 1000], np.int64)

    def __call__(self, sample_info):  # stoker's and DALI's external_source
        return self.load(sample_info.idx_in_epoch)


class TorchDataset:
    def __init__(self, files, length):
        self.fn, self.length = LoadJpeg(files), length

    def __len__(self):
        return self.length

    def __getitem__(self, i):
        import torch

        image, label = self.fn.load(i)
        return torch.from_numpy(image), torch.from_numpy(label)


def batches(loader, files, workers, batch_size):
    """An endless iterator of (images, labels) torch tensors from `loader`."""
    if loader == "torch":
        import torch.utils.data as tud

        dl = tud.DataLoader(TorchDataset(files, 10 ** 8), batch_size=batch_size,
                            num_workers=workers, persistent_workers=True, shuffle=False)
        yield from dl
        return
    depth = {"dali": 1, "dali-best": 2}.get(loader)
    if "-depth" in loader:  # stoker-depthN: N batches ahead
        depth = int(loader.rsplit("-depth", 1)[1])
    depth_arg = {} if depth is None else {"prefetch_queue_depth": depth}
    if loader.startswith("stoker"):
        from stoker import fn, pipeline_def
        from stoker.plugins.torch import DALIGenericIterator
    else:
        from nvidia.dali import fn, pipeline_def
        from nvidia.dali.plugin.pytorch import DALIGenericIterator

    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None, py_num_workers=workers,
                  py_start_method="fork")
    def pipe():
        images, labels = fn.external_source(LoadJpeg(files), num_outputs=2, batch=False,
                                            parallel=True, **depth_arg)
        return images, labels

    p = pipe()
    it = DALIGenericIterator(p, ["images", "labels"], size=-1)
    for out in it:
        yield out[0]["images"], out[0]["labels"]


def child(args):
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(args.data) for f in fs
                   if f.endswith(".jpg"))
    it = batches(args.loader, files, args.workers, args.batch_size)
    start = time.perf_counter()
    while time.perf_counter() - start < 2.0:  # warm-up: workers started, queues full
        next(it)
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < args.seconds:
        images, labels = next(it)
        assert images.shape == (args.batch_size, SIZE, SIZE, 3)
        n += images.shape[0]
    print(json.dumps({"samples_per_s": n / (time.perf_counter() - start)}))
    os._exit(0)  # the loaders' workers end with this process


def run_child(cmd, loader):
    """Runs one measurement; its process group is killed afterwards (DALI's workers outlive a
    parent that exits, and would keep its output pipes open)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        child = subprocess.Popen(cmd, stdout=out, stderr=err, start_new_session=True)
        try:
            code = child.wait(timeout=300)
        finally:
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        out.seek(0)
        err.seek(0)
        if code != 0:
            print(err.read()[-3000:], file=sys.stderr)
            raise SystemExit(f"{loader} failed")
        return json.loads(out.read().strip().splitlines()[-1])["samples_per_s"]


def make(root, count):
    from stoker.datasets import make_jpeg_folder

    make_jpeg_folder(root, num_images=count, num_classes=8, seed=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--make", action="store_true", help="write 512 JPEGs into --data first")
    ap.add_argument("--loaders", default="torch,stoker,stoker-depth1,dali,dali-best")
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        args.loader = args.child
        return child(args)
    if args.make:
        make(args.data, 512)
    # Repeats interleaved (every loader once, then again): a machine whose speed drifts
    # (shared cores, clocks) shifts every loader alike instead of one.
    loaders = args.loaders.split(",")
    runs = {loader: [] for loader in loaders}
    for _ in range(args.repeats):
        for loader in loaders:
            cmd = [sys.executable, __file__, "--data", args.data, "--child", loader,
                   "--workers", str(args.workers), "--batch-size", str(args.batch_size),
                   "--seconds", str(args.seconds)]
            runs[loader].append(run_child(cmd, loader))
    results = {}
    for loader in loaders:
        results[loader] = {"median": statistics.median(runs[loader]), "runs": runs[loader]}
        print(f"{loader:14} {results[loader]['median']:9.1f} samples/s  "
              f"(runs: {', '.join(f'{r:.0f}' for r in runs[loader])})", flush=True)
    if "torch" in results:
        for k, v in results.items():
            v["of_torch"] = v["median"] / results["torch"]["median"]
    versions = {}
    for mod in ("torch", "nvidia.dali", "PIL", "numpy"):
        try:
            versions[mod] = __import__(mod, fromlist=["_"]).__version__
        except ImportError:
            pass
    out = {"date": datetime.date.today().isoformat(), "machine": platform.node(),
           "cpus": os.cpu_count(), "python": platform.python_version(), "versions": versions,
           "workers": args.workers, "batch_size": args.batch_size, "seconds": args.seconds,
           "repeats": args.repeats, "results": results}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return out


if __name__ == "__main__":
    main()
