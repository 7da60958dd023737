"""Writes ImageNet-like benchmark JPEGs from the shared natural photos: two per photo, each a
crop scaled (Lanczos) to an ImageNet size: mostly 500x375 or 375x500 (as the photo is wide or
tall), one in eight larger (shorter side 480-600, 4:3), with a little sensor-like noise (the
downscaled photos are cleaner than camera JPEGs), saved with 4:2:0 chroma at quality 94-96; the
mean file is about 110 KB at about 0.2 megapixels, like ImageNet's. Seeded. The GPU machine cannot see ../shared:
the folder is carried there (.carry is ignored).

    python3 scripts/make_bench_jpegs.py [--src ../shared/data/photos] [--out .carry/bench-jpegs]
"""

import argparse
import glob
import os
import random

import numpy as np
from PIL import Image


NOISE_SIGMA = 5.0


def ship(im, short, rng):
    """A random 4:3 (or 3:4) crop of `im` covering most of it, scaled so its shorter side is
    `short`."""
    w, h = im.size
    wide = w >= h
    tw, th = (short * 4 // 3, short) if wide else (short, short * 4 // 3)
    scale = rng.uniform(0.85, 1.0) * min(w / tw, h / th)
    cw, ch = round(tw * scale), round(th * scale)
    left, top = rng.randint(0, w - cw), rng.randint(0, h - ch)
    return im.crop((left, top, left + cw, top + ch)).resize((tw, th), Image.LANCZOS)


def noisy(im, rng, sigma=NOISE_SIGMA):
    """Adds Gaussian noise of `sigma` levels to every sample."""
    a = np.asarray(im, np.float32) + rng.normal(0, sigma, (im.size[1], im.size[0], 3))
    return Image.fromarray(np.clip(a + 0.5, 0, 255).astype(np.uint8))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--src", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared",
                                                 "data", "photos"))
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", ".carry",
                                                 "bench-jpegs"))
    p.add_argument("--per-photo", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    rng = random.Random(args.seed)
    nrng = np.random.default_rng(args.seed)
    os.makedirs(args.out, exist_ok=True)
    for old in glob.glob(os.path.join(args.out, "*.jpg")):
        os.remove(old)
    src = sorted(glob.glob(os.path.join(args.src, "**", "*.jpg"), recursive=True))
    sizes = []
    pixels = 0
    for i, f in enumerate(src):
        im = Image.open(f).convert("RGB")
        for k in range(args.per_photo):
            short = 375 if rng.random() < 0.875 else rng.choice([480, 540, 600])
            out = noisy(ship(im, short, rng), nrng)
            path = os.path.join(args.out, f"img_{i:03d}_{k}.jpg")
            out.save(path, quality=rng.randint(94, 96), subsampling=2)
            sizes.append(os.path.getsize(path))
            pixels += out.size[0] * out.size[1]
    n = max(1, len(sizes))
    print(f"{len(sizes)} JPEGs in {args.out}: mean {sum(sizes) / n / 1000:.0f} KB, "
          f"mean {pixels / n / 1e6:.3f} MP, quality 94-96, 4:2:0, noise sigma {NOISE_SIGMA}")


if __name__ == "__main__":
    main()
