"""How long readers.coco takes to index a COCO annotations file, against DALI 2.4's readers.coco
and pycocotools' COCO() on the same file.

    PYTHONPATH=build/python python3 bench/coco_index.py [--scale 1.0] [--dir /tmp/coco-bench]
                                                        [--repeats 3] [--json F]

Writes (once, then reuses) an annotations file shaped like COCO's instances_train2017.json at
--scale 1.0: 118,287 images and 860,001 objects (1% crowds with RLE masks, the rest 1-2
polygons of 6-30 vertices with two decimals), about 450 MB. Each measurement runs in a
fresh process: the time to build a pipeline made of the reader alone (the index is built at
build; no image is read), and the process's peak resident memory, for boxes only, with
polygon_masks and with pixelwise_masks; for pycocotools, COCO(path) (json.load + its index).
Figures: the median of --repeats processes. Prints a Markdown table for bench/RESULTS.md.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

TRAIN2017 = {"images": 118_287, "annotations": 860_001, "categories": 80}


def write_annotations(path, scale, seed=0):
    rng = np.random.default_rng(seed)
    n_images = max(1, int(TRAIN2017["images"] * scale))
    n_objects = max(1, int(TRAIN2017["annotations"] * scale))
    cats = [{"supercategory": "thing", "id": int(i), "name": f"class{i}"}
            for i in sorted(rng.choice(np.arange(1, 91), TRAIN2017["categories"], replace=False))]
    with open(path, "w") as f:
        f.write('{"info": {"description": "synthetic, shaped like COCO train2017"}, "images": [')
        sizes = rng.integers(200, 641, (n_images, 2))
        for i in range(n_images):
            w, h = int(sizes[i, 0]), int(sizes[i, 1])
            f.write(("," if i else "") + json.dumps({
                "license": 3, "file_name": f"{i + 1:012d}.jpg",
                "coco_url": f"http://images.cocodataset.org/train2017/{i + 1:012d}.jpg",
                "height": h, "width": w, "date_captured": "2013-11-14 11:18:45",
                "flickr_url": "http://farm3.staticflickr.com/2/3_4_z.jpg", "id": i + 1}))
        f.write('], "annotations": [')
        owners = rng.integers(0, n_images, n_objects)
        for k in range(n_objects):
            i = int(owners[k])
            w, h = int(sizes[i, 0]), int(sizes[i, 1])
            x, y = float(rng.uniform(0, w / 2)), float(rng.uniform(0, h / 2))
            bw, bh = float(rng.uniform(1, w / 2)), float(rng.uniform(1, h / 2))
            crowd = rng.random() < 0.01
            if crowd:
                counts = rng.integers(1, 400, 30)
                counts[-1] = max(1, w * h - int(counts[:-1].sum()))
                seg = {"counts": counts.tolist(), "size": [h, w]}
            else:
                seg = []
                for _ in range(int(rng.integers(1, 3))):
                    n = int(rng.integers(6, 31))
                    xs = np.round(rng.uniform(x, x + bw, n), 2)
                    ys = np.round(rng.uniform(y, y + bh, n), 2)
                    seg.append([float(v) for xy in zip(xs, ys) for v in xy])
            f.write(("," if k else "") + json.dumps({
                "segmentation": seg, "area": round(bw * bh, 4), "iscrowd": int(crowd),
                "image_id": i + 1, "bbox": [round(x, 2), round(y, 2), round(bw, 2), round(bh, 2)],
                "category_id": cats[int(rng.integers(0, len(cats)))]["id"], "id": k + 1}))
        f.write('], "categories": ' + json.dumps(cats) + "}")


CHILD = r"""
import resource, sys, time
lib, mode, path = sys.argv[1:4]
t0 = time.perf_counter()
if lib == "pycocotools":
    from pycocotools.coco import COCO
    import contextlib, io
    with contextlib.redirect_stdout(io.StringIO()):
        COCO(path)
else:
    if lib == "dali":
        import nvidia.dali as dali
        pipeline_def, fn, extra = dali.pipeline_def, dali.fn, {"device_id": None}
    else:
        import stoker
        pipeline_def, fn, extra = stoker.pipeline_def, stoker.fn, {}
    args = {"polygons": {"polygon_masks": True}, "pixelwise": {"pixelwise_masks": True},
            "boxes": {}}[mode]
    @pipeline_def(batch_size=1, num_threads=1, **extra)
    def pipe():
        return tuple(fn.readers.coco(file_root="/nonexistent", annotations_file=path, **args))
    t0 = time.perf_counter()  # the import is not the index
    p = pipe()
    p.build()
print(time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def measure(lib, mode, path, repeats):
    times, rss = [], []
    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-c", CHILD, lib, mode, path], check=True,
                             capture_output=True, text=True).stdout.split()
        times.append(float(out[-2]))
        rss.append(float(out[-1]))
    return {"seconds": statistics.median(times), "min": min(times), "max": max(times),
            "peak_rss_mb": statistics.median(rss)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--dir", default="/tmp/coco-bench")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--libs", default="stoker,dali,pycocotools")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    path = os.path.join(args.dir, f"instances_scale{args.scale:g}.json")
    if not os.path.exists(path):
        t = time.perf_counter()
        write_annotations(path + ".tmp", args.scale)
        os.replace(path + ".tmp", path)
        print(f"wrote {path} in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    size_mb = os.path.getsize(path) / 1e6
    with open(path, "rb") as f:  # into the page cache
        while f.read(1 << 24):
            pass
    rows = []
    for lib in args.libs.split(","):
        for mode in (("boxes",) if lib == "pycocotools" else ("boxes", "polygons", "pixelwise")):
            r = measure(lib, mode, path, args.repeats)
            rows.append({"lib": lib, "mode": mode, **r})
            print(f"{lib:12s} {mode:10s} {r['seconds']:7.2f} s ({r['min']:.2f}-{r['max']:.2f})"
                  f"  {size_mb / r['seconds']:6.0f} MB/s  peak {r['peak_rss_mb']:6.0f} MB",
                  file=sys.stderr)
    print(f"\nFile: {size_mb:.0f} MB, {platform.processor() or platform.machine()}\n")
    print("| reader | outputs | seconds | min-max | MB/s | peak memory (MB) |")
    print("|---|---|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['lib']} | {r['mode']} | {r['seconds']:.2f} | {r['min']:.2f}-{r['max']:.2f} "
              f"| {size_mb / r['seconds']:.0f} | {r['peak_rss_mb']:.0f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"file_mb": size_mb, "scale": args.scale, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
