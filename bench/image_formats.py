"""Image decoding per format, stoker against DALI 2.4 in the same run.

    PYTHONPATH=build/python python3 bench/image_formats.py --images DIR [--device cpu|mixed]
        [--threads 2] [--formats jpeg,png,webp,tiff,jpeg2000] [--json OUT]

The photos in DIR (default: ../shared/data/photos/dali-imagenet-classes, 47 JPEGs of 640-1280
px) are re-encoded once with Pillow into each format (JPEG q90 baseline, PNG, WebP lossy q90,
TIFF LZW, JPEG 2000 lossless and lossy at 20:1) and held in memory; for each format and
library, a pipeline feeds them from an external source to decoders.image (RGB, uint8) and
resizes to 224 x 224, the same definition for both (only the import differs). Each row: a
warm-up of --warmup seconds, then --repeats windows of --seconds, the median images/s (range).
Both mixed backends decode JPEG 2000 with nvJPEG2000 and TIFF with nvTIFF where they find them
(stoker: 8-bit images as stored, `stoker info` says whether the libraries load); the "on the
GPU" column is the share of stoker's images its GPU decoders took (operator_stats).
"""

import argparse
import glob
import io
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_IMAGES = os.path.join(HERE, "..", "..", "shared", "data", "photos",
                              "dali-imagenet-classes")

ENCODINGS = {
    "jpeg": ("JPEG", dict(quality=90)),
    "png": ("PNG", dict(compress_level=6)),
    "webp": ("WEBP", dict(quality=90)),
    "tiff": ("TIFF", dict(compression="tiff_lzw")),
    "jpeg2000": ("JPEG2000", dict(irreversible=False)),
    "jpeg2000-lossy": ("JPEG2000", dict(irreversible=True, quality_mode="rates",
                                        quality_layers=[20])),
}


def encode_all(files, fmt):
    from PIL import Image
    kind, kw = ENCODINGS[fmt]
    out = []
    for f in files:
        buf = io.BytesIO()
        Image.open(f).convert("RGB").save(buf, kind, **kw)
        out.append(np.frombuffer(buf.getvalue(), np.uint8))
    return out


def rate(lib, blobs, device, threads, batch, warmup, seconds, repeats):
    if lib == "dali":
        from nvidia.dali import fn, pipeline_def, types
    else:
        from stoker import fn, pipeline_def, types
    feed = blobs

    @pipeline_def(batch_size=batch, num_threads=threads,
                  device_id=0 if device == "mixed" else None, prefetch_queue_depth=2)
    def pipe():
        state = {"at": 0}

        def source():
            at = state["at"]
            state["at"] = (at + batch) % len(feed)
            return [feed[(at + i) % len(feed)] for i in range(batch)]

        data = fn.external_source(source=source, batch=True, no_copy=False)
        images = fn.decoders.image(data, device=device, output_type=types.RGB, name="dec")
        return fn.resize(images, resize_x=224, resize_y=224)

    p = pipe()
    p.build()

    def window(limit):
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < limit:
            p.run()
            n += batch
        return n / (time.perf_counter() - t0)

    window(warmup)
    rates = [window(seconds) for _ in range(repeats)]
    on_gpu = None
    if lib == "stoker" and device == "mixed":
        st = p.operator_stats("dec")
        gpu = sum(st.get(k, 0) for k in ("hw_images", "cuda_images", "j2k_images", "tiff_images"))
        on_gpu = gpu / max(1.0, gpu + st.get("cpu_images", 0))
    del p
    return statistics.median(rates), min(rates), max(rates), on_gpu


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--images", default=DEFAULT_IMAGES)
    ap.add_argument("--device", choices=["cpu", "mixed"], default="cpu")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--formats", default=",".join(ENCODINGS))
    ap.add_argument("--libs", default="stoker,dali")
    ap.add_argument("--warmup", type=float, default=2.0)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args()
    files = sorted(glob.glob(os.path.join(args.images, "**", "*.jpg"), recursive=True))
    if not files:
        sys.exit(f"no JPEGs under {args.images}")
    import stoker
    versions = {"stoker": stoker.__version__}
    try:
        import nvidia.dali
        versions["dali"] = nvidia.dali.__version__
    except ImportError:
        pass
    rows = []
    print(f"{len(files)} photos, device {args.device}, {args.threads} threads, batch "
          f"{args.batch}; {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; "
          f"{versions}")
    print(f"| format | MB per image | " +
          " | ".join(f"{lib} images/s" for lib in args.libs.split(",")) +
          " | stoker / dali | stoker on the GPU |")
    for fmt in args.formats.split(","):
        blobs = encode_all(files, fmt)
        mb = sum(b.size for b in blobs) / len(blobs) / 1e6
        row = {"format": fmt, "mb_per_image": mb}
        for lib in args.libs.split(","):
            if lib == "dali" and "dali" not in versions:
                continue
            try:
                row[lib] = rate(lib, blobs, args.device, args.threads, args.batch, args.warmup,
                                args.seconds, args.repeats)
            except Exception as e:  # a format the library cannot decode: say so in the row
                row[lib] = str(e).splitlines()[0][:120]
        rows.append(row)
        cells = []
        for lib in args.libs.split(","):
            v = row.get(lib)
            cells.append(f"{v[0]:,.0f} ({v[1]:,.0f}-{v[2]:,.0f})" if isinstance(v, tuple)
                         else str(v))
        ratio = (f"{row['stoker'][0] / row['dali'][0]:.2f}x"
                 if isinstance(row.get("stoker"), tuple) and isinstance(row.get("dali"), tuple)
                 else "")
        st = row.get("stoker")
        share = f"{st[3]:.0%}" if isinstance(st, tuple) and st[3] is not None else ""
        print(f"| {fmt} | {mb:.2f} | " + " | ".join(cells) + f" | {ratio} | {share} |",
              flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"date": time.strftime("%Y-%m-%d"), "device": args.device,
                       "threads": args.threads, "batch": args.batch, "versions": versions,
                       "cpus": os.cpu_count(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
