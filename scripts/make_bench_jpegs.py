"""Writes ImageNet-like benchmark JPEGs from the shared natural photos: each photo scaled so its
shorter side is 375 (Lanczos), centre-cropped to 500x375 (or 375x500), saved at quality 96 with
4:2:0 chroma (about 85 KB each, like the 87 KB ImageNet files the hardware decoder was measured
on). The GPU machine cannot see ../shared: the folder is carried there (.carry is ignored).

    python3 scripts/make_bench_jpegs.py [--src ../shared/data/photos] [--out .carry/bench-jpegs]
"""

import argparse
import glob
import os

from PIL import Image


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--src", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared",
                                                 "data", "photos"))
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", ".carry",
                                                 "bench-jpegs"))
    p.add_argument("--quality", type=int, default=96)
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    src = sorted(glob.glob(os.path.join(args.src, "**", "*.jpg"), recursive=True))
    total = 0
    for i, f in enumerate(src):
        im = Image.open(f).convert("RGB")
        w, h = im.size
        s = 375 / min(w, h)
        im = im.resize((max(1, round(w * s)), max(1, round(h * s))), Image.LANCZOS)
        big_w, big_h = im.size
        tw, th = (500, 375) if big_w >= big_h else (375, 500)
        left, top = (big_w - tw) // 2, (big_h - th) // 2
        im = im.crop((left, top, left + tw, top + th))
        path = os.path.join(args.out, f"img_{i:03d}.jpg")
        im.save(path, quality=args.quality, subsampling=2)
        total += os.path.getsize(path)
    print(f"{len(src)} JPEGs in {args.out}, mean {total / max(1, len(src)) / 1024:.0f} KB")


if __name__ == "__main__":
    main()
