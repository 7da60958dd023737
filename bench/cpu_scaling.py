"""How far the machine itself lets the CPU-only RN50-train pipeline scale: one process with K
threads (stoker as users run it) against K independent processes of one thread each on a shard
of the data (no barriers, queues or shared state between them: the machine's own limit for K
cores: clocks, caches and memory shared by busy cores, a VM's steal time), and (layout
two-pipelines) one process with two pipelines of K/2 threads taking batches in turn.

    PYTHONPATH=build-gpu/python python3 bench/cpu_scaling.py --data DIR/jpeg [--k 1,8,16]
        [--window 20] [--warmup 8] [--layouts threads,processes,two-pipelines]
        [--json out.json]

Each figure: images/s over one common window after a warm-up (every process counts the batches
it finishes inside [start, end), wall clock); the two layouts alternate per K.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]
BATCH = 256


def child(data, threads, shard, shards, start, end, pipelines=1):
    """Runs the pipeline (or `pipelines` of them, each on its own shard, taking batches in turn)
    until `end`; prints the images finished in [start, end) and the process's CPU use then."""
    import stoker
    from stoker import fn, types

    def build(shard, shards):
        pipe = stoker.Pipeline(batch_size=BATCH, num_threads=threads, seed=shard,
                               prefetch_queue_depth=3)
        with pipe:
            jpegs, labels = fn.readers.file(file_root=data, random_shuffle=True, shard_id=shard,
                                            num_shards=shards)
            coin = fn.random.coin_flip()
            images = fn.resize(fn.decoders.image_random_crop(jpegs), size=(224, 224))
            pipe.set_outputs(fn.crop_mirror_normalize(images, mirror=coin, mean=MEAN, std=STD,
                                                      dtype=types.FLOAT16, output_layout="CHW"),
                             labels)
        pipe.build()
        return pipe

    pipes = [build(shard * pipelines + p, shards * pipelines) for p in range(pipelines)]
    images, r0, turn = 0, None, 0
    while time.time() < end:
        pipes[turn % pipelines].run()
        turn += 1
        now = time.time()
        if now >= start:
            if r0 is None:  # the first batch inside the window only marks its start
                r0, t0 = resource.getrusage(resource.RUSAGE_SELF), now
                continue
            images += BATCH
    if r0 is None:
        print(json.dumps({"images": 0, "seconds": 0, "cpu": 0}), flush=True)
        return
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"images": images, "seconds": time.time() - t0,
                      "cpu": r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime,
                      "sys": r1.ru_stime - r0.ru_stime,
                      "minor_faults": r1.ru_minflt - r0.ru_minflt,
                      "involuntary_switches": r1.ru_nivcsw - r0.ru_nivcsw}), flush=True)


# How K cores are used: one pipeline with K threads; K one-thread processes; one process with
# two pipelines of K/2 threads taking batches in turn (two batches in flight, as one pipeline
# would have if its CPU stage overlapped iterations).
LAYOUTS = {"threads": (1, None, 1), "processes": (None, 1, 1), "two-pipelines": (1, None, 2)}


def run(data, k, layout, warmup, window):
    """Images/s of K cores in one of LAYOUTS."""
    start = time.time() + warmup + 2.0  # imports and building take about a second
    end = start + window
    count, threads, pipelines = LAYOUTS[layout]
    count = count or k
    threads = threads or k // pipelines
    cmd = [sys.executable, __file__, "--child", data, str(threads)]
    procs = [subprocess.Popen(cmd + [str(s), str(count), str(start), str(end), str(pipelines)],
                              stdout=subprocess.PIPE, text=True) for s in range(count)]
    out = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
    rate = sum(o["images"] / o["seconds"] for o in out if o["seconds"] > 0)
    span = max(o["seconds"] for o in out) or 1.0
    images = sum(o["images"] for o in out) or 1
    return {"k": k, "layout": layout, "images_per_s": rate,
            "cores_busy": sum(o["cpu"] for o in out) / span,
            "system_cores": sum(o.get("sys", 0) for o in out) / span,
            "minor_faults_per_image": sum(o.get("minor_faults", 0) for o in out) / images,
            "switches_per_s": sum(o.get("involuntary_switches", 0) for o in out) / span}


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        a = sys.argv[2:]
        return child(a[0], int(a[1]), int(a[2]), int(a[3]), float(a[4]), float(a[5]), int(a[6]))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--k", default="1,8,16")
    ap.add_argument("--warmup", type=float, default=8.0)
    ap.add_argument("--window", type=float, default=20.0)
    ap.add_argument("--layouts", default="threads,processes",
                    help="comma-separated, of " + ", ".join(LAYOUTS))
    ap.add_argument("--json")
    args = ap.parse_args()
    results = []
    layouts = args.layouts.split(",")
    for k in (int(x) for x in args.k.split(",")):
        for layout in (("threads",) if k == 1 else layouts):
            r = run(args.data, k, layout, args.warmup, args.window)
            results.append(r)
            print(f"K={k:2d} {r['layout']:13}: {r['images_per_s']:8,.0f} images/s, "
                  f"{r['cores_busy']:5.2f} cores busy ({r['system_cores']:.2f} in the kernel), "
                  f"{r['minor_faults_per_image']:.0f} page faults per image, "
                  f"{r['switches_per_s']:,.0f} preemptions/s", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"date": time.strftime("%Y-%m-%d"), "cpus": os.cpu_count(),
                       "results": results}, f, indent=1)
    if not any(r["k"] == 1 for r in results) or not {"threads", "processes"} <= set(layouts):
        return 0
    one = next(r["images_per_s"] for r in results if r["k"] == 1)
    print("\n| K | one process, K threads | K processes, 1 thread each | threads / processes "
          "| processes / (K x one thread) |\n|---:|---:|---:|---:|---:|")
    for k in sorted({r["k"] for r in results if r["k"] > 1}):
        t = next(r for r in results if r["k"] == k and r["layout"] == "threads")
        p = next(r for r in results if r["k"] == k and r["layout"] == "processes")
        print(f"| {k} | {t['images_per_s']:,.0f} ({t['cores_busy']:.1f} cores) | "
              f"{p['images_per_s']:,.0f} ({p['cores_busy']:.1f} cores) | "
              f"{t['images_per_s'] / p['images_per_s']:.1%} | "
              f"{p['images_per_s'] / (k * one):.1%} |")
    print(f"\nK = 1: {one:,.0f} images/s")


if __name__ == "__main__":
    sys.exit(main())
