"""Trains a torchvision ResNet fed by stoker (decode -> random resized crop -> flip -> normalize),
through stoker.plugins.torch. On a GPU: the mixed decoder (hardware JPEG engines + CPU
threads), GPU augmentation, AMP (float16) and channels_last; on the CPU: the same pipeline on
the CPU backends in float32.

    python examples/train_resnet_torch.py --data /data/imagenet/train --arch resnet50
    python examples/train_resnet_torch.py --size 32 --steps 20     # generated sample data
"""

import argparse
import os
import tempfile
import time

import torch
import torchvision

import stoker
from stoker import fn, types
from stoker.plugins.torch import ClassificationIterator, LastBatchPolicy, shard_from_env

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


@stoker.pipeline_def
def train_pipe(root, size, gpu, shard_id, num_shards):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, shard_id=shard_id,
                                    num_shards=num_shards, pad_last_batch=True, name="reader")
    images = fn.decoders.image_random_crop(jpegs, device="mixed" if gpu else "cpu")
    images = fn.resize(images, device="gpu" if gpu else "cpu", size=(size, size))
    images = fn.crop_mirror_normalize(images, device="gpu" if gpu else "cpu",
                                      mirror=fn.random.coin_flip(), mean=MEAN, std=STD,
                                      dtype=types.FLOAT16 if gpu else types.FLOAT,
                                      output_layout="CHW")
    labels = fn.cast(labels, dtype=types.INT64)
    # On the GPU the labels go over with the images (DALI users write labels.gpu()).
    return images, labels.gpu() if gpu else labels


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", help="a folder with one sub-folder per class (default: generated)")
    ap.add_argument("--arch", default="resnet18")
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--steps", type=int, default=20, help="stop after this many (0: --epochs)")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--lr", type=float, help="default: 0.1 x batch size / 256 (the ResNet rule)")
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--pin", action="store_true",
                    help="GPU training: this thread on a core of its own, stoker's on the rest")
    args = ap.parse_args()
    root = args.data
    if root is None:
        from stoker.datasets import make_jpeg_folder
        root = os.path.join(tempfile.mkdtemp(), "train")
        make_jpeg_folder(root, num_images=32, num_classes=4, seed=3, separable=True)
    shard_id, num_shards, device_id = shard_from_env()
    gpu = device_id is not None
    device = torch.device(f"cuda:{device_id}" if gpu else "cpu")
    affinity = None
    if args.pin and not gpu:
        print("--pin: ignored without a GPU (training on the CPU needs every core)", flush=True)
    elif args.pin and len(os.sched_getaffinity(0)) > 1:
        # The thread that launches the model's kernels keeps its core; stoker's threads (and
        # those they start) run on the others. Threads this one starts later inherit its core
        # (torch's CPU threads too: hence GPU training only).
        first, *affinity = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {first})
        print(f"--pin: training thread on core {first}, stoker's threads on "
              f"{len(affinity)} others", flush=True)
    pipe = train_pipe(root, args.size, gpu, shard_id, num_shards, batch_size=args.batch_size,
                      num_threads=args.threads, device_id=device_id, seed=42 + shard_id,
                      cpu_affinity=affinity)
    loader = ClassificationIterator(pipe, reader_name="reader",
                                    last_batch_policy=LastBatchPolicy.FILL)
    classes = len([d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))])
    model = getattr(torchvision.models, args.arch)(num_classes=classes).to(device)
    if gpu:
        model = model.to(memory_format=torch.channels_last)
    lr = args.lr if args.lr is not None else 0.1 * args.batch_size / 256
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda", enabled=gpu)
    losses, step, t0 = [], 0, time.perf_counter()
    for epoch in range(args.epochs if not args.steps else 10**9):
        for batch in loader:
            x, y = batch[0]["data"], batch[0]["label"].reshape(-1)
            if gpu:
                x = x.contiguous(memory_format=torch.channels_last)
            with torch.autocast(device.type, dtype=torch.float16, enabled=gpu):
                loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            losses.append(loss.item())
            step += 1
            print(f"epoch {epoch} step {step}: loss {losses[-1]:.4f}", flush=True)
            if args.steps and step >= args.steps:
                break
        loader.reset()
        if args.steps and step >= args.steps:
            break
    seconds = time.perf_counter() - t0
    k = max(1, len(losses) // 4)
    print(f"{step} steps in {seconds:.1f} s ({step * args.batch_size / seconds:.0f} images/s); "
          f"loss {sum(losses[:k]) / k:.4f} (first {k} steps) -> {sum(losses[-k:]) / k:.4f} "
          f"(last {k})")


if __name__ == "__main__":
    main()
