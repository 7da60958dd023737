"""The ResNet-50 training feed on the GPU machine: decode -> random resized crop -> flip ->
normalize -> fp16 NCHW, delivered to torch, images/s. stoker (mixed decoder: hardware JPEG
engines + CPU threads with nvJPEG's CUDA decoder or libjpeg-turbo; GPU resize and
crop_mirror_normalize) in several decoder configurations against a torch DataLoader (PIL +
torchvision, `--workers` processes) on the same files, in the same run.

    PYTHONPATH=build-gpu/python python3 bench/gpu_pipeline.py [--images DIR] [--count N]

--images: a folder of JPEGs (searched recursively), listed repeatedly up to --count entries
(scripts/make_dataset.py makes ImageNet-like ones, ~110 KB on average, from the shared
photos; bench/run.sh makes them on the GPU machine). Without it,
--count synthetic JPEGs (500x375 mostly, photo-like content,
quality 90) are written to a temporary folder first (the GPU machine has no dataset). Each
measurement: a warm-up, then --repeats timed passes of --iters batches; the median. The
consumer synchronises torch's stream on every batch (what a training step would wait for).
"""

import argparse
import glob
import os
import statistics
import sys
import tempfile
import time

import numpy as np

import stoker
from stoker import fn, types

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def stoker_rate(files, args, hw_load="auto", cuda="auto", threshold=1000000):
    import torch
    pipe = stoker.Pipeline(batch_size=args.batch, num_threads=args.threads, seed=0, device_id=0,
                           prefetch_queue_depth={"cpu_size": 3, "gpu_size": 2})
    with pipe:
        jpegs, labels = fn.readers.file(files=files, random_shuffle=True, name="reader")
        images = fn.decoders.image_random_crop(jpegs, device="mixed", name="decoder",
                                               hw_decoder_load=hw_load, cuda_decoder=cuda,
                                               hybrid_huffman_threshold=threshold)
        images = fn.resize(images, device="gpu", size=[224, 224])
        out = fn.crop_mirror_normalize(images, device="gpu", mirror=fn.random.coin_flip(),
                                       mean=MEAN, std=STD, dtype=types.FLOAT16,
                                       output_layout="CHW")
        pipe.set_outputs(out, labels)
    stream = torch.cuda.current_stream()

    def one_pass(iters):
        t0 = time.perf_counter()
        for _ in range(iters):
            out, labels = pipe.run()
            t = torch.from_dlpack(out)
            stream.synchronize()
            assert t.shape == (args.batch, 3, 224, 224) and t.dtype == torch.float16
        return iters * args.batch / (time.perf_counter() - t0)

    one_pass(args.warmup)
    before, t0 = pipe.stage_stats(), time.perf_counter()
    rates = [one_pass(args.iters) for _ in range(args.repeats)]
    wall = time.perf_counter() - t0
    stats = pipe.operator_stats("decoder")
    # Each stage's share of the timed passes: busy / starved (waiting for the stage before) /
    # blocked (waiting for room after); the bottleneck is busy and never starved.
    stages = " · ".join(
        f"{a['stage']} {100 * (a['busy'] - b['busy']) / wall:.0f}/"
        f"{100 * (a['starved'] - b['starved']) / wall:.0f}/"
        f"{100 * (a['blocked'] - b['blocked']) / wall:.0f}%"
        for b, a in zip(before, pipe.stage_stats()))
    return statistics.median(rates), stats, stages


class _Files:
    def __init__(self, files):
        self.files = files

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        from PIL import Image
        import torchvision.transforms as T
        if not hasattr(self, "t"):
            self.t = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
                                T.Normalize([m / 255 for m in MEAN], [s / 255 for s in STD])])
        with open(self.files[i], "rb") as f:
            img = Image.open(f).convert("RGB")
        return self.t(img), 0


def _one_thread(_):
    import torch
    torch.set_num_threads(1)  # one process per core: no oversubscription inside the workers


def torch_rate(files, args):
    import torch
    loader = torch.utils.data.DataLoader(_Files(files), batch_size=args.batch, shuffle=True,
                                         num_workers=args.workers, pin_memory=True,
                                         persistent_workers=True, prefetch_factor=4,
                                         worker_init_fn=_one_thread,
                                         # stoker's threads and CUDA are live in this process:
                                         # forked workers crash, so they start fresh.
                                         multiprocessing_context="spawn")

    def batches():
        while True:
            yield from loader

    it = batches()

    def one_pass(iters):
        t0 = time.perf_counter()
        for _ in range(iters):
            x, _ = next(it)
            x = x.cuda(non_blocking=True).half()
            torch.cuda.current_stream().synchronize()
        return iters * args.batch / (time.perf_counter() - t0)

    one_pass(max(2, args.warmup // 2))
    return statistics.median(one_pass(max(2, args.iters // 4)) for _ in range(args.repeats))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--images")
    p.add_argument("--count", type=int, default=2048)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--workers", type=int, default=os.cpu_count())
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--skip-torch", action="store_true")
    p.add_argument("--configs", default="auto/auto,1.0/off,auto/off,0.0/on,0.0/off",
                   help="decoder configurations to run: hw_decoder_load/cuda_decoder[/"
                   "hybrid_huffman_threshold], ...")
    args = p.parse_args()
    import torch
    tmp = None
    if args.images:
        files = sorted(glob.glob(os.path.join(args.images, "**", "*.jp*g"), recursive=True))
        files = (files * (args.count // len(files) + 1))[:max(args.count, len(files))]
    else:
        from stoker.datasets import make_jpeg_folder
        tmp = tempfile.mkdtemp(prefix="stoker-gpu-bench-")
        files = make_jpeg_folder(tmp, num_images=args.count, num_classes=8, seed=1,
                                 quality=(90, 90))
    sizes = [os.path.getsize(f) for f in files]
    for f in files:  # into the page cache
        with open(f, "rb") as fh:
            fh.read()
    print(f"# GPU training feed: {len(set(files))} distinct JPEGs ({len(files)} per epoch), mean {np.mean(sizes) / 1024:.0f} KB, "
          f"batch {args.batch}, {args.threads} threads; {torch.cuda.get_device_name()}, "
          f"torch {torch.__version__}, python {sys.version.split()[0]}")
    print()
    print("| pipeline | images/s | decoder split |")
    print("|---|---:|---|")
    for config in [c for c in args.configs.split(",") if c]:
        load, cuda, *threshold = config.split("/")
        load = load if load == "auto" else float(load)
        threshold = int(threshold[0]) if threshold else 1000000
        rate, s, stages = stoker_rate(files, args, load, cuda, threshold)
        split = (f"{int(s['hw_images'])} hw / {int(s['cuda_images'])} cuda / "
                 f"{int(s['cpu_images'])} cpu ({int(s['threads_images_ahead'])} of the "
                 f"threads' in the CPU stage), "
                 f"load {s['hw_load']:.2f}; thread ms per image: cuda "
                 f"{s['thread_seconds_per_cuda_image'] * 1e3:.2f}, cpu "
                 f"{s['thread_seconds_per_cpu_image'] * 1e3:.2f}; CPU stage: headers "
                 f"{s['seconds_headers']:.2f} s, decoding ahead "
                 f"{s['seconds_threads_ahead']:.2f} s; "
                 f"mixed stage: hw submit {s['seconds_hw_submit']:.2f} s, threads "
                 f"{s['seconds_threads']:.2f} s, uploads {s['seconds_finish']:.2f} s of "
                 f"{s['seconds_total']:.2f} s; stages busy/starved/blocked: {stages}")
        gpu_huffman = f", hybrid_huffman_threshold={threshold}" if threshold != 1000000 else ""
        print(f"| stoker mixed(hw_decoder_load={load}, cuda_decoder={cuda}{gpu_huffman}) -> resize -> "
              f"crop_mirror_normalize (fp16 NCHW) | {rate:,.0f} | {split} |", flush=True)
    if not args.skip_torch:
        rate = torch_rate(files, args)
        print(f"| torch DataLoader ({args.workers} workers, PIL + torchvision) | {rate:,.0f} | "
              f"CPU |", flush=True)


if __name__ == "__main__":
    main()
