"""Builds an ImageNet-like benchmark dataset from natural photos.

    python3 scripts/make_dataset.py OUT [--count 2048] [--classes 100] [--src PHOTOS]
                                        [--target-kb 110] [--seed 0] [--formats ...]
    python3 scripts/make_dataset.py --stage .carry/bench-sources   # copy the sources to carry

Sources: the photos listed in ../shared/data/photos/bench-sources/SOURCES.tsv (96 detailed
natural photos, mostly 1280 px), or a folder of JPEGs (--src; e.g. those copies, carried to
the GPU machine, which cannot see ../shared), else scikit-image's or scikit-learn's sample
photos when one of them is installed.

Each sample is a random crop of a source photo covering most of it, scaled (Lanczos) to an
ImageNet size: 7 in 8 are 500x375 or 375x500 (as the photo is wide or tall), 1 in 8 has a
shorter side of 480-600 (4:3); saved as 4:2:0 JPEG at quality 90-96 with a little Gaussian
sensor-like noise, whose strength is calibrated first so that the mean file is --target-kb
(ImageNet's mean is ~110 KB). Seeded: the same arguments give the same files, whatever the
number of worker processes. Writing the containers needs the built stoker on PYTHONPATH.

Writes OUT/jpeg/<class>/<n>.jpg (class = sample number modulo --classes), the same samples as
TFRecord, RecordIO and webdataset shards with their indexes (OUT/tfrecord, OUT/recordio,
OUT/webdataset; stoker.tools.convert), and OUT/MANIFEST.json + OUT/MANIFEST.md (count, mean KB,
mean megapixels, quality range, noise, sources).
"""

import argparse
import csv
import glob
import io
import json
import multiprocessing
import os
import shutil
import sys
import time

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED_PHOTOS = os.path.join(HERE, "..", "..", "shared", "data", "photos")
QUALITY = (90, 96)
LARGE_SHORT_SIDES = (480, 540, 600)


def shared_sources():
    """The bench-sources photos of ../shared (absolute paths), or [] when it is absent."""
    listing = os.path.join(SHARED_PHOTOS, "bench-sources", "SOURCES.tsv")
    if not os.path.exists(listing):
        return []
    with open(listing) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return [os.path.join(SHARED_PHOTOS, r["copied_from (photos/...)"]) for r in rows]


def library_sources(tmp):
    """Sample photos that ship with scikit-image or scikit-learn, written as JPEGs to `tmp`."""
    images = []
    try:
        import skimage.data as d
        for name in ("astronaut", "coffee", "chelsea", "rocket", "immunohistochemistry"):
            images.append((name, getattr(d, name)()))
    except ImportError:
        try:
            from sklearn.datasets import load_sample_images
            data = load_sample_images()
            images = list(zip(data.filenames, data.images))
        except ImportError:
            return []
    os.makedirs(tmp, exist_ok=True)
    paths = []
    for name, a in images:
        path = os.path.join(tmp, os.path.basename(str(name)).split(".")[0] + ".png")
        Image.fromarray(np.asarray(a, np.uint8)).convert("RGB").save(path)
        paths.append(path)
    return paths


def find_sources(src, tmp):
    if src:
        paths = sorted(glob.glob(os.path.join(src, "**", "*.jp*g"), recursive=True))
        if not paths:
            sys.exit(f"make_dataset: no JPEGs under {src}")
        return paths
    paths = shared_sources() or library_sources(tmp)
    if not paths:
        sys.exit("make_dataset: no source photos: ../shared/data/photos is absent and neither "
                 "scikit-image nor scikit-learn is installed; pass --src DIR")
    return paths


def plan(count, num_sources, seed):
    """Per sample: (source index, shorter side, quality, crop seed), from the seed alone."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        large = rng.random() < 1 / 8
        short = int(rng.choice(LARGE_SHORT_SIDES)) if large else 375
        out.append((i % num_sources, short, int(rng.integers(QUALITY[0], QUALITY[1] + 1)),
                    int(rng.integers(1 << 31))))
    return out


def render(source, short, quality, crop_seed, sigma):
    """One sample's JPEG bytes and its (width, height)."""
    rng = np.random.default_rng(crop_seed)
    im = Image.open(source).convert("RGB")
    w, h = im.size
    tw, th = (short * 4 // 3, short) if w >= h else (short, short * 4 // 3)
    scale = rng.uniform(0.8, 1.0) * min(w / tw, h / th)
    cw, ch = max(1, round(tw * scale)), max(1, round(th * scale))
    left, top = int(rng.integers(0, w - cw + 1)), int(rng.integers(0, h - ch + 1))
    if rng.random() < 0.5:
        im = im.transpose(Image.FLIP_LEFT_RIGHT)
    out = im.crop((left, top, left + cw, top + ch)).resize((tw, th), Image.LANCZOS)
    if sigma > 0:
        a = np.asarray(out, np.float32) + rng.normal(0, sigma, (th, tw, 3))
        out = Image.fromarray(np.clip(a + 0.5, 0, 255).astype(np.uint8))
    buf = io.BytesIO()
    out.save(buf, format="JPEG", quality=quality, subsampling=2)
    return buf.getvalue(), (tw, th)


def _render_job(job):
    return render(*job)


def calibrate(jobs, target_kb, pool):
    """The noise sigma (0-20) whose files average target_kb on a sample of the plan, by
    bisection (file size grows with noise)."""
    probe = jobs[:: max(1, len(jobs) // 96)][:96]

    def mean_kb(sigma):
        sizes = pool.map(_render_job, [j + (sigma,) for j in probe])
        return sum(len(b) for b, _ in sizes) / len(sizes) / 1000

    lo, hi = 0.0, 20.0
    if mean_kb(lo) >= target_kb:
        return lo
    if mean_kb(hi) <= target_kb:
        return hi
    for _ in range(7):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if mean_kb(mid) < target_kb else (lo, mid)
    return round((lo + hi) / 2, 2)


def write_manifest(out, info):
    with open(os.path.join(out, "MANIFEST.json"), "w") as f:
        json.dump(info, f, indent=1)
    lines = [
        "# Benchmark dataset (scripts/make_dataset.py)", "",
        f"- {info['count']} JPEGs in {info['classes']} classes: jpeg/<class>/<n>.jpg",
        f"- mean file {info['mean_kb']:.1f} KB (target {info['target_kb']}), "
        f"mean {info['mean_megapixels']:.3f} MP",
        f"- sizes: {', '.join(f'{k}: {v}' for k, v in info['sizes'].items())}",
        f"- quality {info['quality'][0]}-{info['quality'][1]}, 4:2:0, noise sigma "
        f"{info['noise_sigma']}",
        f"- {len(info['sources'])} source photos, seed {info['seed']}",
        f"- containers: {', '.join(info['formats']) or 'none'} "
        f"({info['shards']} shards each, with indexes)",
    ]
    with open(os.path.join(out, "MANIFEST.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def stage(dest):
    """Copies the shared bench-source photos to `dest` (flat names) to carry them."""
    paths = shared_sources()
    if not paths:
        sys.exit("make_dataset: ../shared/data/photos/bench-sources is absent")
    os.makedirs(dest, exist_ok=True)
    for p in paths:
        name = os.path.relpath(p, SHARED_PHOTOS).replace(os.sep, "_")
        shutil.copyfile(p, os.path.join(dest, name))
    print(f"{len(paths)} source photos copied to {dest}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="?")
    ap.add_argument("--count", type=int, default=2048)
    ap.add_argument("--classes", type=int, default=100)
    ap.add_argument("--src", help="a folder of source JPEGs (default: ../shared's bench sources)")
    ap.add_argument("--target-kb", type=float, default=110.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--formats", default="tfrecord,recordio,webdataset",
                    help="container formats to write too (comma-separated; '' for none)")
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    ap.add_argument("--stage", metavar="DIR", help="only copy the shared sources to DIR")
    args = ap.parse_args(argv)
    if args.stage:
        return stage(args.stage)
    if not args.out:
        ap.error("OUT is required")
    if args.count < 1 or args.classes < 1:
        ap.error("--count and --classes must be at least 1")
    formats = [f for f in args.formats.split(",") if f]
    if formats:  # checked before minutes of rendering, not after
        try:
            from stoker.tools import convert
        except ImportError as e:
            sys.exit(f"make_dataset: writing {', '.join(formats)} needs the built stoker "
                     f"(PYTHONPATH=build/python), or --formats '': {e}")
        try:
            convert.check_formats(formats)
        except ValueError as e:
            ap.error(f"--formats: {e} (the JPEG folder is always written)")
    t0 = time.time()
    if os.path.exists(args.out):
        shutil.rmtree(args.out)
    os.makedirs(args.out)
    sources = find_sources(args.src, os.path.join(args.out, ".sources"))
    jobs = [(sources[s], short, q, cs) for s, short, q, cs in
            plan(args.count, len(sources), args.seed)]
    with multiprocessing.Pool(max(1, args.workers)) as pool:
        sigma = calibrate(jobs, args.target_kb, pool)
        results = pool.map(_render_job, [j + (sigma,) for j in jobs], chunksize=8)
    samples, total_bytes, pixels, sizes = [], 0, 0, {}
    for i, (data, (w, h)) in enumerate(results):
        label = i % args.classes
        d = os.path.join(args.out, "jpeg", f"{label:04d}")
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, f"{i:07d}.jpg")
        with open(path, "wb") as f:
            f.write(data)
        samples.append((path, label))
        total_bytes += len(data)
        pixels += w * h
        sizes[f"{w}x{h}"] = sizes.get(f"{w}x{h}", 0) + 1
    if formats:
        samples.sort()  # readers.file's order
        for fmt in formats:
            convert.convert(samples, os.path.join(args.out, fmt), [fmt], args.shards)
    n = len(results)
    info = {"count": n, "classes": args.classes, "mean_kb": total_bytes / n / 1000,
            "target_kb": args.target_kb, "mean_megapixels": pixels / n / 1e6,
            "sizes": dict(sorted(sizes.items(), key=lambda kv: -kv[1])),
            "quality": list(QUALITY), "noise_sigma": sigma, "seed": args.seed,
            "formats": formats, "shards": args.shards,
            "sources": [os.path.basename(s) for s in sources]}
    write_manifest(args.out, info)
    shutil.rmtree(os.path.join(args.out, ".sources"), ignore_errors=True)
    print(f"{n} JPEGs in {args.out}: mean {info['mean_kb']:.1f} KB, "
          f"{info['mean_megapixels']:.3f} MP, noise sigma {sigma}, "
          f"{time.time() - t0:.1f} s")


if __name__ == "__main__":
    main()
