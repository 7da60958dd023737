"""The standard training pipeline (read -> decode -> random resized crop -> flip -> normalize)
run for a few epochs with a progress bar, then images/s and a short report.

    python -m stoker.demo                 # on a generated folder of sample JPEGs
    python -m stoker.demo --data DIR      # on a folder of class sub-folders of images
"""

import argparse
import os
import sys
import time

import stoker
from stoker import fn, types

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


@stoker.pipeline_def
def training_pipeline(root, size=224):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    images = fn.random_resized_crop(images, size=(size, size))
    images = fn.crop_mirror_normalize(images, mirror=fn.random.coin_flip(probability=0.5),
                                      mean=MEAN, std=STD, dtype=types.FLOAT16,
                                      output_layout="CHW")
    return images, labels


def _bar(done, total, rate, width=30):
    filled = int(width * done / max(total, 1))
    return f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total} batches {rate:8.0f} img/s"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", default=os.environ.get("DATA") or None,
                    help="folder with one sub-folder of images per class")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=min(8, os.cpu_count() or 1))
    ap.add_argument("--prefetch", type=int, default=2)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--images", type=int, default=256,
                    help="sample images to generate when --data is not given")
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args(argv)

    root = args.data
    if root is None:
        root = os.path.abspath(os.path.join("demo_data", f"jpegs_{args.images}"))
        if not os.path.isdir(root):
            from stoker.datasets import make_jpeg_folder
            try:
                import PIL  # noqa: F401 (the sample JPEGs are written with Pillow)
            except ImportError:
                sys.exit("stoker.demo generates its sample JPEGs with Pillow, which is not "
                         "installed: pip install pillow (or pip install 'stoker[datasets]'), "
                         "or give a folder of your own images with --data DIR")
            print(f"generating {args.images} sample JPEGs in {root} ...", flush=True)
            make_jpeg_folder(root, num_images=args.images)
    pipe = training_pipeline(root, size=args.size, batch_size=args.batch_size,
                             num_threads=args.threads, seed=args.seed,
                             prefetch_queue_depth=args.prefetch)
    pipe.build()
    meta = pipe.reader_meta("Reader")
    steps = -(-meta["shard_size"] // args.batch_size)
    print(f"stoker {stoker.__version__}: {meta['epoch_size']} images in {root}")
    print(f"pipeline: readers.file -> decoders.image -> random_resized_crop({args.size}) -> "
          f"crop_mirror_normalize(mirror=coin_flip, float16, CHW)")
    print(f"batch {args.batch_size}, {args.threads} threads, prefetch {args.prefetch}, "
          f"{args.epochs} epochs of {steps} batches")
    epoch_rates = []
    total_images, t_all = 0, time.perf_counter()
    for epoch in range(args.epochs):
        t0, images = time.perf_counter(), 0
        for step, (batch, labels) in enumerate(pipe):
            images += len(batch)
            rate = images / (time.perf_counter() - t0)
            sys.stdout.write(f"\repoch {epoch + 1}/{args.epochs} {_bar(step + 1, steps, rate)}")
            sys.stdout.flush()
        epoch_rates.append(images / (time.perf_counter() - t0))
        total_images += images
        print()
    elapsed = time.perf_counter() - t_all
    last = batch.as_array()
    mem = pipe.memory_stats()["host"]
    print("\nreport")
    print(f"  images processed      : {total_images} in {elapsed:.2f} s")
    print(f"  throughput            : {total_images / elapsed:.0f} images/s overall, "
          f"{max(epoch_rates):.0f} images/s best epoch (epochs: "
          f"{', '.join(f'{r:.0f}' for r in epoch_rates)})")
    print(f"  output batch          : {last.shape} {last.dtype}, layout {batch.layout()}")
    print(f"  host memory           : peak {mem['peak_bytes_in_use'] / 2**20:.1f} MiB in use, "
          f"{mem['bytes_reserved'] / 2**20:.1f} MiB reserved, "
          f"{mem['reused']}/{mem['allocations']} allocations served from the pool")
    print(f"  seed                  : {pipe.seed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
