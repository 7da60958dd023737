"""SSD300's training pipeline (examples/ssd_pipeline.py: readers.coco, decode,
random_bbox_crop, slice, bb_flip, resize 300, colour jitter, crop_mirror_normalize,
box_encoder) on stoker and on DALI 2.4, the same definition and data, images/s.

    PYTHONPATH=build/python python3 bench/ssd.py --data ../shared/data/photos/dali-coco \
        [--device cpu|gpu] [--threads 2] [--batch-size 32] [--seconds 10] [--repeats 3]
        [--libs stoker,dali] [--json F]

Each library runs in its own process: the pipeline built, warm-up batches for --warmup seconds,
then batches for --seconds; the figure is images/s over that window (batches are taken to the
host, as a training step would take them), and the result the median of --repeats processes
(the range after it). The dataset (a COCO folder with instances.json) is read from the page
cache, its epochs repeating. On the GPU (--device gpu) decoding is "mixed" and DALI is also
measured at hw_decoder_load 0.99 beside its default 0.65 (its best setting on the classification
pipeline). --stoker-variants adds rows of stoker with other decoder arguments, e.g.
`--stoker-variants "cuda_decoder='on'" "cuda_decoder='off'"`; stoker's rows also give the mixed
decoder's counters at the end of the window (how it split the batches, its per-image costs).
--baseline measures a copy of the dataset whose progressive JPEGs are re-encoded as baseline
ones with the same quantization tables and subsampling (Pillow's quality="keep"), in a
temporary folder: COCO's own train2017 images are baseline JPEGs.
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = r"""
import importlib.util, os, sys, time
import numpy as np
lib, device, data, threads, batch, warmup, seconds, decoder_args = sys.argv[1:9]
decoder_args = eval(f"dict({decoder_args})")
threads, batch, warmup, seconds = int(threads), int(batch), float(warmup), float(seconds)
spec = importlib.util.spec_from_file_location("ssd", os.path.join(sys.argv[9], "ssd_pipeline.py"))
ssd = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ssd)
if lib == "dali":
    import nvidia.dali as mod
    kwargs = {"device_id": 0 if device == "gpu" else None}
else:
    import stoker as mod
    kwargs = {"device_id": 0} if device == "gpu" else {}
anchors = ssd.ssd300_default_boxes()
if decoder_args:  # e.g. DALI's mixed decoder's share on the hardware decoder
    real = mod.fn.decoders.image
    mod.fn.decoders.image = lambda *a, **k: real(*a, **decoder_args, **k)

@mod.pipeline_def(batch_size=batch, num_threads=threads, seed=7, **kwargs)
def pipe_def():
    return ssd.ssd_pipeline(mod.fn, mod.types, os.path.join(data, "images"),
                            os.path.join(data, "instances.json"), anchors, device)

pipe = pipe_def()
pipe.build()

def step():
    outs = pipe.run()
    for o in outs:  # to the host, as a training step would take them
        o = o.as_cpu() if hasattr(o, "as_cpu") else o
        np.asarray(o.as_array() if hasattr(o, "as_array") else o.as_tensor())

t = time.perf_counter()
while time.perf_counter() - t < warmup:
    step()
n, t = 0, time.perf_counter()
while time.perf_counter() - t < seconds:
    step()
    n += batch
rate = n / (time.perf_counter() - t)
if lib == "stoker" and device == "gpu":
    import json
    counters = {o["name"]: o["counters"] for o in pipe.stats()["operators"]
                if "thread_seconds_per_cpu_image" in o.get("counters", {})}
    print("COUNTERS", json.dumps(counters))
print(rate)
"""


def measure(lib, args, decoder_args=""):
    rates, counters = [], []
    for _ in range(args.repeats):
        lines = subprocess.run(
            [sys.executable, "-c", CHILD, lib, args.device, args.data, str(args.threads),
             str(args.batch_size), str(args.warmup), str(args.seconds), decoder_args,
             os.path.join(HERE, "..", "examples")],
            capture_output=True, text=True)
        if lines.returncode:
            sys.exit(f"{lib} ({decoder_args or 'defaults'}) failed:\n{lines.stderr[-3000:]}")
        lines = lines.stdout.splitlines()
        rates.append(float(lines[-1]))
        counters += [json.loads(l.split(" ", 1)[1]) for l in lines if l.startswith("COUNTERS ")]
    r = {"images_per_s": statistics.median(rates), "min": min(rates), "max": max(rates)}
    if counters:
        r["decoder_counters"] = counters
    return r


def baseline_copy(data, out):
    """`data` (a COCO folder: images/ and instances.json) copied to `out` with its progressive
    JPEGs re-encoded as baseline (same quantization tables and subsampling); returns how many
    were re-encoded."""
    from PIL import Image
    os.makedirs(os.path.join(out, "images"))
    shutil.copy(os.path.join(data, "instances.json"), out)
    changed = 0
    for name in sorted(os.listdir(os.path.join(data, "images"))):
        src, dst = os.path.join(data, "images", name), os.path.join(out, "images", name)
        with Image.open(src) as im:
            if im.format == "JPEG" and im.info.get("progressive"):
                im.save(dst, "JPEG", quality="keep", progressive=False,
                        exif=im.info.get("exif", b""), icc_profile=im.info.get("icc_profile"))
                changed += 1
                continue
        shutil.copy(src, dst)
    return changed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--device", choices=["cpu", "gpu"], default="cpu")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--warmup", type=float, default=3.0)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--libs", default="stoker,dali")
    ap.add_argument("--stoker-variants", nargs="*", default=[],
                    help="more stoker rows, each with these decoders.image arguments")
    ap.add_argument("--baseline", action="store_true",
                    help="measure a copy whose progressive JPEGs are re-encoded as baseline")
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.baseline:
        tmp = tempfile.TemporaryDirectory()
        n = baseline_copy(args.data, tmp.name)
        print(f"{n} progressive JPEGs re-encoded as baseline in {tmp.name}", file=sys.stderr)
        args.data = tmp.name
    rows = []
    for lib in args.libs.split(","):
        settings = [""]
        if lib == "dali" and args.device == "gpu":
            settings.append("hw_decoder_load=0.99")
        if lib == "stoker":
            settings += args.stoker_variants
        for setting in settings:
            r = measure(lib, args, setting)
            name = f"{lib} ({setting})" if setting else lib
            rows.append({"loader": name, **r})
            print(f"{name:32s} {r['images_per_s']:8.1f} images/s ({r['min']:.1f}-{r['max']:.1f})",
                  file=sys.stderr)
    kind = ", progressive JPEGs re-encoded as baseline" if args.baseline else ""
    print(f"\nSSD300 pipeline{kind}, {args.device}, {args.threads} threads, "
          f"batch {args.batch_size}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores\n")
    print("| loader | images/s | min-max |")
    print("|---|---:|---:|")
    for r in rows:
        print(f"| {r['loader']} | {r['images_per_s']:.1f} | {r['min']:.1f}-{r['max']:.1f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": args.device, "threads": args.threads, "baseline": args.baseline,
                       "batch_size": args.batch_size, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
