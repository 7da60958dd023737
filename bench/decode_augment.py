"""Decode + random-resized-crop + flip + normalize throughput: stoker vs PIL + torchvision.

    PYTHONPATH=build/python python3 bench/decode_augment.py --images DIR [--threads 1,16]

DIR holds JPEGs (the shared ImageNet-class photos: ../shared/data/photos/dali-imagenet-classes).
The same files, in memory (page cache), go through:
- stoker (decoders.image + random_resized_crop): readers.file -> decoders.image ->
  random_resized_crop(224) -> crop_mirror_normalize(mirror = coin_flip, CHW float32);
- stoker (fused): the same with decoders.image_random_crop + resize (only the window decoded);
- stoker (DCT): fused, with downscale_hint=[224, 224] (large windows decoded at 1/2-1/8 in the
  DCT domain: faster, different pixels, opt-in);
- PIL + torchvision: Image.open().convert("RGB") -> RandomResizedCrop(224) ->
  RandomHorizontalFlip -> ToTensor -> Normalize, in one process (threads = 1) or a torch
  DataLoader with that many workers.
Each: a warm-up pass, then --repeats timed passes over --count images; the median images/s.
"""

import argparse
import glob
import os
import platform
import statistics
import sys
import time

import numpy as np

import stoker
from stoker import fn, types

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def stoker_rate(files, threads, count, repeats, fused, batch=64, dct=False):
    pipe = stoker.Pipeline(batch_size=batch, num_threads=threads, seed=0, prefetch_queue_depth=2)
    with pipe:
        jpegs, labels = fn.readers.file(files=files, random_shuffle=True)
        if fused:
            hint = [224, 224] if dct else []
            images = fn.resize(fn.decoders.image_random_crop(jpegs, downscale_hint=hint),
                               size=[224, 224])
        else:
            images = fn.random_resized_crop(fn.decoders.image(jpegs), size=[224, 224])
        out = fn.crop_mirror_normalize(images, mirror=fn.random.coin_flip(), mean=MEAN, std=STD,
                                       dtype=types.FLOAT, output_layout="CHW")
        pipe.set_outputs(out, labels)
    pipe.build()
    iters = max(1, count // batch)

    def run():
        for _ in range(iters):
            pipe.run()

    run()  # warm-up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return iters * batch / statistics.median(times)


class _Dataset:
    def __init__(self, blobs, transform):
        self.blobs, self.transform = blobs, transform

    def __len__(self):
        return len(self.blobs)

    def __getitem__(self, i):
        import io

        from PIL import Image

        img = Image.open(io.BytesIO(self.blobs[i % len(self.blobs)])).convert("RGB")
        return self.transform(img), 0


def torchvision_rate(files, threads, count, repeats, batch=64):
    import torch
    import torchvision.transforms as T

    torch.set_num_threads(1)
    transform = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
                           T.Normalize([m / 255 for m in MEAN], [s / 255 for s in STD])])
    blobs = [open(f, "rb").read() for f in files]
    reps = (count + len(blobs) - 1) // len(blobs)
    ds = _Dataset(blobs * reps, transform)
    n = (len(ds) // batch) * batch
    if threads <= 1:
        def run():
            for i in range(n):
                ds[i]
    else:
        loader = torch.utils.data.DataLoader(ds, batch_size=batch, num_workers=threads,
                                             persistent_workers=True, prefetch_factor=2)

        def run():
            for _ in loader:
                pass

    run()  # warm-up (and worker start)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return n / statistics.median(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--images", required=True)
    ap.add_argument("--threads", default="1,16")
    ap.add_argument("--count", type=int, default=1024)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    files = sorted(glob.glob(os.path.join(args.images, "**", "*.jpg"), recursive=True))
    if not files:
        sys.exit(f"no JPEGs under {args.images}")
    try:
        import torchvision  # noqa: F401
        have_tv = True
    except ImportError:
        have_tv = False
        print("torchvision is not installed: the peer is skipped", file=sys.stderr)
    rows = []
    for t in [int(x) for x in args.threads.split(",")]:
        row = {"threads": t,
               "stoker": stoker_rate(files, t, args.count, args.repeats, fused=False),
               "stoker_fused": stoker_rate(files, t, args.count, args.repeats, fused=True),
               "stoker_dct": stoker_rate(files, t, args.count, args.repeats, fused=True,
                                         dct=True)}
        if have_tv:
            row["torchvision"] = torchvision_rate(files, t, args.count, args.repeats)
        rows.append(row)
        print(row, file=sys.stderr)
    print(f"{time.strftime('%Y-%m-%d')}, {os.cpu_count()} CPUs, {len(files)} JPEGs from "
          f"{args.images} (page cache), {args.count} images per pass, median of {args.repeats}, "
          f"Python {platform.python_version()}, numpy {np.__version__}"
          + (f", torch {__import__('torch').__version__}, torchvision "
             f"{__import__('torchvision').__version__}" if have_tv else ""))
    print()
    print("| threads | stoker: decode + random_resized_crop | stoker: image_random_crop + "
          "resize | stoker: same, downscale_hint (DCT scaling) | PIL + torchvision | "
          "same pixels / torchvision |")
    print("|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        tv = r.get("torchvision")
        best = max(r["stoker"], r["stoker_fused"])  # DCT scaling changes pixels: not counted
        ratio = f"{best / tv:.2f}x" if tv else "-"
        print(f"| {r['threads']} | {r['stoker']:,.0f} | {r['stoker_fused']:,.0f} | "
              f"{r['stoker_dct']:,.0f} | {f'{tv:,.0f}' if tv else '-'} | {ratio} |")


if __name__ == "__main__":
    main()
