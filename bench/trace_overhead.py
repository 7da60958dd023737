"""The cost of stoker's instrumentation: the same pipeline with tracing off (the default:
per-operator and per-stage statistics are always kept) and with `trace=` on, alternating, so
both see the same machine state.

    PYTHONPATH=build/python python3 bench/trace_overhead.py [--data DIR] [--threads 2]

Pipeline: readers.file -> decoders.image_random_crop -> resize 224 -> crop_mirror_normalize
(fp16 CHW, mirror = coin_flip) on the CPU, batch 64; also a tiny-sample pipeline (32x32 images,
batch 8) where the per-operator bookkeeping weighs most. Each configuration: a warm-up, then
--seconds of batches; --repeats rounds of (off, on), the median images/s of each; the
difference is reported with the spread of the "off" runs (what "not measurable" means).
"""

import argparse
import os
import platform
import statistics
import tempfile
import time

import stoker
from stoker import fn, types


def build(data, batch, threads, size, trace):
    pipe = stoker.Pipeline(batch_size=batch, num_threads=threads, seed=1, trace=trace or None)
    with pipe:
        jpegs, labels = fn.readers.file(file_root=data, random_shuffle=True)
        images = fn.decoders.image_random_crop(jpegs)
        images = fn.resize(images, size=(size, size))
        pipe.set_outputs(fn.crop_mirror_normalize(images, mirror=fn.random.coin_flip(),
                                                  dtype=types.FLOAT16, output_layout="CHW"),
                         labels)
    pipe.build()
    return pipe


def measure(data, batch, threads, size, trace, seconds):
    pipe = build(data, batch, threads, size, trace)
    for _ in range(3):
        pipe.run()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        pipe.run()
        n += 1
    rate = n * batch / (time.perf_counter() - t0)
    pipe.close()
    return rate


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="class folders of JPEGs (default: 256 generated ones)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="stoker-trace-")
    data = args.data
    if not data:
        from stoker.datasets import make_jpeg_folder
        data = os.path.join(tmp, "jpeg")
        make_jpeg_folder(data, num_images=256)
    trace = os.path.join(tmp, "trace.json")
    print(f"{time.strftime('%Y-%m-%d')}, {platform.node()}, {os.cpu_count()} CPUs, stoker "
          f"{stoker.__version__}, {args.threads} threads, {args.repeats} x {args.seconds} s per "
          "configuration\n")
    print("| pipeline | tracing off images/s (spread) | tracing on images/s | on vs off |")
    print("|---|---:|---:|---:|")
    for name, batch, size in (("decode + RRC 224 + normalize, batch 64", 64, 224),
                              ("the same to 32x32, batch 8 (bookkeeping-heavy)", 8, 32)):
        off, on = [], []
        for _ in range(args.repeats):
            off.append(measure(data, batch, args.threads, size, "", args.seconds))
            on.append(measure(data, batch, args.threads, size, trace, args.seconds))
        m_off, m_on = statistics.median(off), statistics.median(on)
        spread = 100 * (max(off) - min(off)) / m_off
        print(f"| {name} | {m_off:,.0f} (±{spread / 2:.1f}%) | {m_on:,.0f} | "
              f"{100 * (m_on / m_off - 1):+.1f}% |", flush=True)


if __name__ == "__main__":
    main()
