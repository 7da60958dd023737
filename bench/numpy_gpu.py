"""readers.numpy with device="gpu": stoker against DALI 2.4's GPU reader (GPUDirect Storage through
cuFile, its compatibility mode where the system has no GDS) on the same files, in one run.

    PYTHONPATH=build/python python3 bench/numpy_gpu.py --dir /tmp/npy [--mb 4 --count 512]

Writes --count .npy files of about --mb MiB each (float32 volumes, the kind of data the GPU
reader is for), reads them once so the page cache holds them, then measures one epoch per
repeat for each variant, alternating (A B C D A B C D ...): stoker and DALI at their defaults
and with use_o_direct=True (reads that bypass the page cache). The GPU's work is waited for at
the end of every epoch (torch.cuda.synchronize: every stream). --drop-caches also measures
cold reads where the process may write /proc/sys/vm/drop_caches (root). --device cpu runs the
CPU readers instead (a machine without a GPU). Prints a Markdown table (samples/s, GB/s, median
of --repeats) for bench/RESULTS.md; --json writes the figures.
"""

import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np


def write_files(root, count, mb):
    os.makedirs(root, exist_ok=True)
    side = max(1, int(round((mb * (1 << 20) / 4 / 64) ** 0.5)))
    shape = (64, side, side)
    names = [os.path.join(root, f"{k:05d}.npy") for k in range(count)]
    rng = np.random.default_rng(0)
    for path in names:
        if not os.path.exists(path):
            np.save(path, rng.random(shape, dtype=np.float32))
    return shape, sum(os.path.getsize(p) for p in names)


def warm(root):
    for name in sorted(os.listdir(root)):
        with open(os.path.join(root, name), "rb") as f:
            while f.read(1 << 24):
                pass


def drop_caches():
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def make_pipe(lib, root, device, batch, threads, o_direct):
    if lib == "stoker":
        import stoker as mod
    else:
        import nvidia.dali as mod
    fn = mod.fn
    # (both libraries read with use_o_direct only without a mapping)
    kwargs = {"use_o_direct": True, "dont_use_mmap": True} if o_direct else {}

    @mod.pipeline_def(batch_size=batch, num_threads=threads, device_id=0 if device == "gpu" else None,
                      seed=0, prefetch_queue_depth=2)
    def pipe():
        return fn.readers.numpy(file_root=root, file_filter="*.npy", device=device, name="R",
                                **kwargs)

    p = pipe()
    p.build()
    return p


def epoch_seconds(pipe, iters, sync):
    t = time.perf_counter()
    for _ in range(iters):
        pipe.run()
    sync()
    return time.perf_counter() - t


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default="/tmp/stoker-bench-npy")
    ap.add_argument("--mb", type=float, default=4.0, help="MiB per file")
    ap.add_argument("--count", type=int, default=512)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--threads", type=int, default=min(8, os.cpu_count()))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--device", choices=["gpu", "cpu"], default="gpu")
    ap.add_argument("--libs", default="stoker,dali")
    ap.add_argument("--drop-caches", action="store_true")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args(argv)

    shape, total = write_files(args.dir, args.count, args.mb)
    warm(args.dir)
    sync = lambda: None  # noqa: E731
    if args.device == "gpu":
        import torch
        sync = torch.cuda.synchronize
    variants = [(lib, od) for lib in args.libs.split(",") for od in (False, True)]
    pipes = {v: make_pipe(v[0], args.dir, args.device, args.batch, args.threads, v[1])
             for v in variants}
    iters = args.count // args.batch
    for v in variants:  # warm-up: one epoch each
        epoch_seconds(pipes[v], iters, sync)
    modes = [("page cache", False)] + ([("cold", True)] if args.drop_caches else [])
    rows = []
    for mode, cold in modes:
        times = {v: [] for v in variants}
        for _ in range(args.repeats):
            for v in variants:
                if cold and not drop_caches():
                    print("cold: /proc/sys/vm/drop_caches is not writable here; skipped",
                          file=sys.stderr)
                    break
                times[v].append(epoch_seconds(pipes[v], iters, sync))
        for v in variants:
            if not times[v]:
                continue
            t = statistics.median(times[v])
            samples = iters * args.batch
            rows.append({"mode": mode, "library": v[0], "use_o_direct": v[1],
                         "samples_per_s": samples / t,
                         "gb_per_s": samples * (total / args.count) / t / 1e9,
                         "range": [samples / max(times[v]), samples / min(times[v])]})
    print(f"\n{args.count} files of {shape} float32 ({total / args.count / (1 << 20):.1f} MiB), "
          f"batch {args.batch}, {args.threads} threads, device {args.device}, median of "
          f"{args.repeats}\n")
    print("| reads | library | use_o_direct | samples/s | GB/s |")
    print("|---|---|---|---:|---:|")
    for r in rows:
        print(f"| {r['mode']} | {r['library']} | {r['use_o_direct']} | "
              f"{r['samples_per_s']:,.0f} | {r['gb_per_s']:.2f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": platform.node(), "python": platform.python_version(),
                       "date": time.strftime("%Y-%m-%d"), "args": vars(args),
                       "results": rows}, f, indent=1)


if __name__ == "__main__":
    main()
