"""Video loading, frames/s: stoker's readers.video on NVDEC (gpu) and on the CPU (FFmpeg),
DALI 2.4's readers.video (NVDEC) and PyAV (what torchvision's video reading uses), in the same
run on the same clips.

    python3 bench/video.py --make DIR            # the clips (needs the ffmpeg tool)
    PYTHONPATH=build/python python3 bench/video.py --data DIR [--configs h264-1080p,...]
        [--libs stoker-gpu,stoker-cpu,dali-gpu,pyav] [--threads 16] [--batch-size 8]
        [--sequence-length 16] [--seconds 8] [--repeats 3] [--json F]

The clips: for each of H.264 and HEVC at 1920x1080 and 640x360, 30 fps, 10 s, a GOP of 30
frames (a re-encoded training set's), constant bit rates of 6 and 1 Mbit/s, two clips each
(test pattern with grain, so the bit rate is spent). Each loader reads random sequences of
--sequence-length frames (random_shuffle, non-overlapping starts) in batches, in its own
process: warm-up, then a --seconds window; frames/s over the window, median of --repeats
processes. GPU loaders' batches are copied into a torch tensor on the GPU and synchronised (what
a training step would wait for); CPU loaders' end on the host as numpy. During the GPU loaders'
windows NVML samples the NVDEC engines' utilisation (median of the samples).
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys

CONFIGS = {  # name: (codec, encoder arguments, size, bit rate)
    "h264-1080p": ("h264", "-c:v libx264 -preset veryfast", "1920x1080", "6M"),
    "hevc-1080p": ("hevc", "-c:v libx265 -preset ultrafast -x265-params log-level=none", "1920x1080", "6M"),
    "h264-360p": ("h264", "-c:v libx264 -preset veryfast", "640x360", "1M"),
    "hevc-360p": ("hevc", "-c:v libx265 -preset ultrafast -x265-params log-level=none", "640x360", "1M"),
}


def make(root):
    for name, (codec, encoder, size, rate) in CONFIGS.items():
        folder = os.path.join(root, name)
        os.makedirs(folder, exist_ok=True)
        for k in range(2):
            ext = "mp4" if codec == "h264" else "mkv"
            path = os.path.join(folder, f"clip{k}.{ext}")
            if os.path.exists(path):
                continue
            source = (f"testsrc2=size={size}:rate=30:duration=10,noise=alls={8 + 6 * k}:allf=t"
                      f",hue=h={40 * k}")
            subprocess.run(f"ffmpeg -v error -y -f lavfi -i {source} {encoder} -g 30 -b:v {rate} "
                           f"-maxrate {rate} -bufsize {rate} -pix_fmt yuv420p {path}",
                           shell=True, check=True)
            print(path, os.path.getsize(path) // 1024, "KiB", file=sys.stderr)


CHILD = r"""
import ctypes, glob, json, os, random, statistics, sys, threading, time
import numpy as np
lib, folder, threads, batch, length, warmup, seconds = sys.argv[1:8]
threads, batch, length, warmup, seconds = int(threads), int(batch), int(length), float(warmup), float(seconds)
files = sorted(glob.glob(os.path.join(folder, "clip*")))

def nvdec_sampler():
    # NVML's decoder utilisation of GPU 0, sampled every 0.25 s while `running`.
    samples, running = [], [True]
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
        nvml.nvmlInit_v2()
        dev = ctypes.c_void_p()
        nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev))
    except OSError:
        return samples, running
    def loop():
        u, p = ctypes.c_uint(), ctypes.c_uint()
        while running[0]:
            if nvml.nvmlDeviceGetDecoderUtilization(dev, ctypes.byref(u), ctypes.byref(p)) == 0:
                samples.append(u.value)
            time.sleep(0.25)
    threading.Thread(target=loop, daemon=True).start()
    return samples, running

if lib == "pyav":
    import av
    starts = []
    for f in files:
        with av.open(f) as c:
            n = c.streams.video[0].frames or sum(1 for _ in c.demux(video=0)) - 1
        starts += [(f, s) for s in range(0, n - length + 1, length)]
    def sequence(f, first):
        with av.open(f) as c:
            st = c.streams.video[0]
            st.thread_type = "AUTO"
            rate = st.average_rate
            c.seek(int(first / rate / st.time_base), stream=st, backward=True)
            out = []
            for fr in c.decode(st):
                k = round(float(fr.pts * st.time_base * rate))
                if k >= first:
                    out.append(fr.to_ndarray(format="rgb24"))
                if len(out) == length:
                    break
            return np.stack(out)
    from concurrent.futures import ThreadPoolExecutor
    pool = ThreadPoolExecutor(threads)
    rng = random.Random(7)
    def step():
        picks = [rng.choice(starts) for _ in range(batch)]
        return list(pool.map(lambda p: sequence(*p), picks))
    samples, running = [], [False]
else:
    device = "gpu" if lib.endswith("gpu") else "cpu"
    if lib.startswith("dali"):
        import nvidia.dali as mod
        extra = {"device": "gpu"}
        pipe = mod.Pipeline(batch_size=batch, num_threads=threads, device_id=0, seed=7,
                            prefetch_queue_depth=2)
    else:
        import stoker as mod
        extra = {"device": device, "num_io_threads": threads}
        pipe = mod.Pipeline(batch_size=batch, num_threads=threads, seed=7,
                            device_id=0 if device == "gpu" else None)
    with pipe:
        # skip_vfr_check: DALI takes Matroska's millisecond timestamps at 30 fps (33, 33, 34
        # ms) for a variable frame rate; the clips are constant-rate.
        video = mod.fn.readers.video(filenames=files, sequence_length=length, random_shuffle=True,
                                     initial_fill=64, skip_vfr_check=True, **extra)
        pipe.set_outputs(video)
    pipe.build()
    if device == "gpu":
        import torch
        dst = None
        if lib.startswith("dali"):
            from nvidia.dali.plugin.pytorch import feed_ndarray
    def step():
        global dst
        (out,) = pipe.run()
        if device == "cpu":
            return out.as_array() if hasattr(out, "as_array") else out.as_tensor()
        if lib.startswith("dali"):
            t = out.as_tensor()
            if dst is None:
                dst = torch.empty(t.shape(), dtype=torch.uint8, device="cuda")
            feed_ndarray(t, dst, cuda_stream=torch.cuda.current_stream())
        else:  # the batch is one device buffer: a tensor without a copy (DLPack)
            torch.from_dlpack(out)
        torch.cuda.current_stream().synchronize()
    samples, running = nvdec_sampler() if device == "gpu" else ([], [False])

t = time.perf_counter()
while time.perf_counter() - t < warmup:
    step()
samples.clear()
n, t = 0, time.perf_counter()
while time.perf_counter() - t < seconds:
    step()
    n += batch * length
rate = n / (time.perf_counter() - t)
running[0] = False
print(json.dumps({"frames_per_s": rate, "nvdec_util": statistics.median(samples) if samples else None}))
"""


def measure(lib, folder, args):
    runs = []
    for _ in range(args.repeats):
        out = subprocess.run([sys.executable, "-c", CHILD, lib, folder, str(args.threads),
                              str(args.batch_size), str(args.sequence_length), str(args.warmup),
                              str(args.seconds)], capture_output=True, text=True)
        if out.returncode != 0:
            lines = [ln for ln in out.stderr.strip().splitlines()
                     if "nanobind" not in ln and "leaked" not in ln]
            return {"error": " / ".join(lines[-3:])[:600]}
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    rates = [r["frames_per_s"] for r in runs]
    utils = [r["nvdec_util"] for r in runs if r["nvdec_util"] is not None]
    return {"frames_per_s": statistics.median(rates), "min": min(rates), "max": max(rates),
            "nvdec_util": statistics.median(utils) if utils else None}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--make")
    ap.add_argument("--data")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--libs", default="stoker-gpu,dali-gpu,stoker-cpu,pyav")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--sequence-length", type=int, default=16)
    ap.add_argument("--warmup", type=float, default=3.0)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.make:
        return make(args.make)
    rows = []
    for config in args.configs.split(","):
        for lib in args.libs.split(","):
            r = measure(lib, os.path.join(args.data, config), args)
            rows.append({"clips": config, "loader": lib, **r})
            print(config, lib, r, file=sys.stderr, flush=True)
    print(f"\nreaders.video, sequences of {args.sequence_length}, batch {args.batch_size}, "
          f"{args.threads} threads, {platform.machine()}, {os.cpu_count()} cores\n")
    print("| clips | loader | frames/s | min-max | NVDEC % |")
    print("|---|---|---:|---:|---:|")
    for r in rows:
        if "error" in r:
            print(f"| {r['clips']} | {r['loader']} | error: {r['error']} | | |")
            continue
        util = "" if r["nvdec_util"] is None else f"{r['nvdec_util']:.0f}"
        print(f"| {r['clips']} | {r['loader']} | {r['frames_per_s']:.0f} | "
              f"{r['min']:.0f}-{r['max']:.0f} | {util} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"threads": args.threads, "batch_size": args.batch_size,
                       "sequence_length": args.sequence_length, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
