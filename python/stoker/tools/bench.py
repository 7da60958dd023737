"""stoker bench: how fast the loader alone delivers a standard pipeline on your data and machine,
for several thread counts.

    stoker bench --data DIR [--pipeline rn50-train|rn50-val] [--threads 1,2,4,8,16,auto]
                 [--device auto|cpu|gpu] [--batch B] [--seconds S] [--json]

Each thread count gets its own pipeline, a warm-up and a window of S seconds; the table shows
images/s, the cores stoker's threads kept busy (pipe.cpu_times()) and the busiest stage. For
the comparison with training, see `stoker diagnose`; for stoker against other loaders,
bench/harness.py in the repository.
"""

import argparse
import json
import os
import sys

from stoker.tools.diagnose import batch_waiter, build_pipeline, measure_loader


def bench(data, pipeline, threads, device, batch, seconds, warmup, progress=None):
    """[{threads, images_per_s, cores, busiest stage}] for each thread count."""
    import stoker
    gpu = {"auto": stoker._stoker.cuda_available(), "gpu": True, "cpu": False}[device]
    wait = batch_waiter(gpu)
    rows = []
    for k, t in enumerate(threads):
        if progress:
            progress(f"[{k + 1}/{len(threads)}] {t} threads ...")
        pipe = build_pipeline(data, pipeline, batch, t, gpu)
        try:
            m = measure_loader(pipe, batch, seconds, warmup, wait)
        finally:
            pipe.close()
        stages = [s for s in m["stats"]["stages"] if s["stage"] != "consumer"]
        busiest = max(stages, key=lambda s: s["busy"] - s["starved"])["stage"]
        rows.append({"threads": t, "images_per_s": m["images_per_s"],
                     "cores": m["stats"]["cpu"]["cores"], "busiest_stage": busiest,
                     "threads_used": m["stats"]["autotune"]["threads"]})
    return {"data": data, "pipeline": pipeline, "device": "gpu" if gpu else "cpu",
            "batch": batch, "seconds": seconds, "results": rows}


def table(out):
    lines = [f"stoker bench: {out['pipeline']} on {out['data']} ({out['device']}, batch "
             f"{out['batch']}, {out['seconds']:g} s windows)",
             "threads   images/s   cores busy   busiest stage"]
    for r in out["results"]:
        t = r["threads"] if r["threads"] != "auto" else f"auto:{r['threads_used']}"
        lines.append(f"{t:>7} {r['images_per_s']:10,.0f} {r['cores']:12.1f}   "
                     f"{r['busiest_stage']}")
    return "\n".join(lines)


def main(argv=None, prog="stoker bench"):
    ap = argparse.ArgumentParser(prog=prog, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="class-folder tree of JPEGs")
    ap.add_argument("--pipeline", choices=["rn50-train", "rn50-val"], default="rn50-train")
    ap.add_argument("--threads", default=None,
                    help="comma-separated thread counts, 'auto' for num_threads='auto' (default: "
                         "1, 2, 4, ... up to the cores)")
    ap.add_argument("--device", choices=["auto", "cpu", "gpu"], default="auto")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--seconds", type=float, default=5.0, help="each measurement's window")
    ap.add_argument("--warmup", type=float, default=2.0, help="seconds before each window")
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    args = ap.parse_args(argv)
    if not os.path.isdir(args.data):
        ap.error(f"--data {args.data}: not a folder")
    if args.threads:
        try:
            threads = [t if t == "auto" else int(t) for t in args.threads.split(",")]
        except ValueError:
            ap.error(f"--threads {args.threads}: expected numbers like 1,2,4 (or auto)")
        if any(t != "auto" and t < 1 for t in threads):
            ap.error(f"--threads {args.threads}: every count must be at least 1")
    else:
        cores = os.cpu_count() or 1
        threads = [t for t in (1, 2, 4, 8, 16, 32, 64) if t <= cores]
    out = bench(args.data, args.pipeline, threads, args.device, args.batch, args.seconds,
                args.warmup, progress=lambda s: print(s, file=sys.stderr, flush=True))
    print(json.dumps(out, indent=1) if args.json else table(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
