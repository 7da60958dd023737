"""A heavy-augmentation pipeline on one host, against the same host plus Ray worker nodes
(stoker.plugins.ray.from_pipeline): images/s and bytes moved per image.

    PYTHONPATH=build/python python3 bench/scale_out.py [--host-cores 1] [--worker-cores 1]
        [--workers 1] [--images 512] [--seconds 10] [--repeats 3] [--json OUT]

Data: --images synthetic JPEGs (stoker.datasets.make_jpeg_folder: 500x375 and larger), made
once in a temporary folder. Pipeline (per shard): readers.file -> decoders.image_random_crop ->
resize 224 x 224 -> rotate (+-10 degrees) -> color_twist -> gaussian_blur (sigma 1-3) ->
noise.gaussian -> crop_mirror_normalize
(CHW uint8 out: what would travel to a GPU node). Modes, each a fresh process tree:

- host: the pipeline in this process, pinned to --host-cores cores (os.sched_setaffinity), its
  batches taken as fast as it gives them.
- ray: a Ray head on the host cores and --workers worker nodes, each pinned (taskset) to its own
  --worker-cores cores; from_pipeline with one shard on the head and one per worker node
  (a `shard` resource of one per node places them); this process iterates the dataset's rows in blocks.

Each row: a warm-up of one pass, then --repeats windows of --seconds, the median images/s
(range); bytes per image are the rows' array bytes (what Ray's object store moves).
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def make_pipeline(root, shard_id, num_shards, threads):
    import stoker
    from stoker import fn, types
    pipe = stoker.Pipeline(batch_size=32, num_threads=threads, seed=7)
    with pipe:
        jpegs, labels = fn.readers.file(file_root=root, shard_id=shard_id, num_shards=num_shards,
                                        random_shuffle=True, name="r")
        images = fn.decoders.image_random_crop(jpegs)
        images = fn.resize(images, size=(224, 224))
        images = fn.rotate(images, angle=fn.random.uniform(range=(-10.0, 10.0)), keep_size=True)
        images = fn.color_twist(images, brightness=fn.random.uniform(range=(0.8, 1.2)),
                                saturation=fn.random.uniform(range=(0.7, 1.3)))
        images = fn.gaussian_blur(images, sigma=fn.random.uniform(range=(1.0, 3.0)))
        images = fn.noise.gaussian(images, stddev=fn.random.uniform(range=(0.0, 8.0)))
        images = fn.crop_mirror_normalize(images, mirror=fn.random.coin_flip(),
                                          dtype=types.UINT8, output_layout="CHW")
        pipe.set_outputs(images, labels)
    return pipe


def windows(next_count, warmup_items, seconds, repeats):
    """Images/s of `repeats` windows of `seconds`, after warmup_items images."""
    done = 0
    while done < warmup_items:
        done += next_count()
    rates = []
    for _ in range(repeats):
        start, n = time.perf_counter(), 0
        while time.perf_counter() - start < seconds:
            n += next_count()
        rates.append(n / (time.perf_counter() - start))
    return rates


def run_host(args, root):
    os.sched_setaffinity(0, set(range(args.host_cores)))
    pipe = make_pipeline(root, 0, 1, args.host_cores)
    pipe.build()
    sizes = []

    def step():
        images, _ = pipe.run()
        first = np.array(images.at(0))
        sizes.append(first.nbytes)
        return len(images)
    rates = windows(step, args.images, args.seconds, args.repeats)
    return {"rates": rates, "image_bytes": int(np.median(sizes))}


def run_ray(args, root):
    import ray
    sys.path.insert(0, HERE)
    from ray_cluster import Cluster
    from stoker.plugins.ray import from_pipeline
    host = list(range(args.host_cores))
    os.sched_setaffinity(0, set(host))
    cluster = Cluster(tempfile.mkdtemp(prefix="scale_out_ray_"), head_cpus=args.host_cores,
                      head_cores=host, object_store=500_000_000, head_resources={"shard": 1})
    it = [None]
    try:
        cluster.connect()
        for k in range(args.workers):
            first = args.host_cores + k * args.worker_cores
            cluster.add_worker(cpus=args.worker_cores,
                               cores=list(range(first, first + args.worker_cores)),
                               resources={"shard": 1})
        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
        ray.data.DataContext.get_current().enable_progress_bars = False

        def factory(shard_id, num_shards):  # each node's cores: its affinity
            return make_pipeline(root, shard_id, num_shards, len(os.sched_getaffinity(0)))
        # One actor per node: every node has one `shard` resource, every actor takes one.
        ds = from_pipeline(factory, num_shards=1 + args.workers, output_names=("image", "label"),
                           resources={"shard": 1})
        moved = []

        def step():
            if it[0] is None:
                it[0] = iter(ds.iter_batches(batch_size=32, batch_format="numpy"))
            try:
                batch = next(it[0])
            except StopIteration:
                it[0] = None
                return 0
            images = batch["image"]
            moved.append(sum(np.asarray(x).nbytes for x in images) / len(images))
            return len(images)
        rates = windows(step, args.images, args.seconds, args.repeats)
        return {"rates": rates, "image_bytes": float(np.median(moved))}
    finally:
        # The iteration broken off ends while Ray runs (its executor's shutdown would start
        # Ray again after ray.shutdown(), and wait for the stopped cluster).
        if it[0] is not None:
            getattr(it[0], "close", lambda: None)()
        if ray.is_initialized():
            ray.shutdown()
        cluster.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=["both", "host", "ray"], default="both")
    ap.add_argument("--host-cores", type=int, default=1)
    ap.add_argument("--worker-cores", type=int, default=1)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--images", type=int, default=512)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--root", help="a folder of JPEG class folders (default: synthetic)")
    ap.add_argument("--json")
    args = ap.parse_args()
    root = args.root
    if root is None:
        from stoker.datasets import make_jpeg_folder
        root = tempfile.mkdtemp(prefix="scale_out_jpegs_")
        make_jpeg_folder(root, num_images=args.images)
    if args.mode != "both":
        result = run_host(args, root) if args.mode == "host" else run_ray(args, root)
        print(json.dumps(result))
        return
    jpeg_bytes = statistics.mean(
        os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(root) for f in fs)
    rows = {}
    sys.path.insert(0, HERE)
    from ray_cluster import clean_env
    for mode in ("host", "ray"):  # each in its own process: pinning and Ray state stay there
        out = subprocess.run([sys.executable, __file__, "--mode", mode, "--root", root,
                              *sum(([f"--{k.replace('_', '-')}", str(v)] for k, v in
                                    vars(args).items()
                                    if k not in ("mode", "root", "json") and v is not None),
                                   [])],
                             capture_output=True, text=True, env=clean_env())
        if out.returncode != 0:
            sys.exit(f"{mode} failed:\n{out.stdout[-2000:]}\n{out.stderr[-4000:]}")
        rows[mode] = json.loads(out.stdout.strip().splitlines()[-1])
    cores = {"host": args.host_cores, "ray": args.host_cores + args.workers * args.worker_cores}
    for mode, r in rows.items():
        med = statistics.median(r["rates"])
        r["cpu_ms_per_image"] = 1e3 * cores[mode] / med
        print(f"{mode:5s} {cores[mode]} cores {med:8.1f} images/s ({min(r['rates']):.1f}-"
              f"{max(r['rates']):.1f}), {r['cpu_ms_per_image']:.1f} core-ms per image, "
              f"{r['image_bytes'] / 1e3:.1f} KB per output image, "
              f"{jpeg_bytes / 1e3:.1f} KB per JPEG")
    if args.json:
        import stoker
        with open(args.json, "w") as f:
            json.dump({"date": time.strftime("%Y-%m-%d"), "machine": platform.node(),
                       "cpus": os.cpu_count(), "stoker": stoker.__version__,
                       "args": vars(args), "jpeg_bytes": jpeg_bytes, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
