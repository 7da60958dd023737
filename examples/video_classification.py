"""Trains a small 3-D convolutional network on video clips fed by stoker: readers.video cuts
clips of 16 frames (NVDEC on a GPU, libavcodec on the CPU), one random resized crop and one
horizontal flip per clip (every frame alike), normalised into CFHW — channels, frames, height,
width: what 3-D convolutions take — and handed to torch without a copy.

    python examples/video_classification.py --data /data/videos/train     # class sub-folders
    python examples/video_classification.py --steps 20                    # generated clips
"""

import argparse
import os
import tempfile
import time

import torch

import stoker
from stoker import fn, types
from stoker.plugins.torch import GenericIterator, LastBatchPolicy, shard_from_env

MEAN = [0.45 * 255, 0.45 * 255, 0.45 * 255]
STD = [0.225 * 255, 0.225 * 255, 0.225 * 255]


@stoker.pipeline_def
def video_pipe(root, frames, stride, size, gpu, shard_id, num_shards):
    device = "gpu" if gpu else "cpu"
    clips, labels = fn.readers.video(device=device, file_root=root, sequence_length=frames,
                                     stride=stride, random_shuffle=True, initial_fill=64,
                                     shard_id=shard_id, num_shards=num_shards,
                                     pad_last_batch=True, name="reader")
    # Sequences go through the image operators frame by frame, with one random decision per
    # clip: the same window and the same flip for all of its frames.
    clips = fn.random_resized_crop(clips, size=(size, size), random_area=(0.4, 1.0))
    clips = fn.crop_mirror_normalize(clips, mirror=fn.random.coin_flip(), mean=MEAN, std=STD,
                                     dtype=types.FLOAT, output_layout="CFHW")
    labels = fn.cast(labels, dtype=types.INT64)
    return clips, labels  # a gpu reader gives its labels on the GPU too


def small_video_net(classes):
    """Two 3-D convolution blocks and a linear head: enough to tell motions apart."""
    return torch.nn.Sequential(
        torch.nn.Conv3d(3, 16, kernel_size=3, padding=1), torch.nn.BatchNorm3d(16),
        torch.nn.ReLU(), torch.nn.MaxPool3d(2),
        torch.nn.Conv3d(16, 32, kernel_size=3, padding=1), torch.nn.BatchNorm3d(32),
        torch.nn.ReLU(), torch.nn.AdaptiveAvgPool3d(1), torch.nn.Flatten(),
        torch.nn.Linear(32, classes))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", help="a folder with one sub-folder of videos per class "
                                   "(default: generated clips of squares moving up or down)")
    ap.add_argument("--frames", type=int, default=16, help="frames per clip")
    ap.add_argument("--stride", type=int, default=2, help="take every stride-th frame")
    ap.add_argument("--size", type=int, default=112)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--steps", type=int, default=20, help="stop after this many (0: --epochs)")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--threads", type=int, default=4)
    args = ap.parse_args()
    root = args.data
    if root is None:
        from stoker.datasets import make_video_folder
        root = os.path.join(tempfile.mkdtemp(), "train")
        make_video_folder(root, num_videos=16, num_classes=2, seed=3,
                          frames=args.frames * args.stride * 2, size=(96, 128))
    shard_id, num_shards, device_id = shard_from_env()
    gpu = device_id is not None
    device = torch.device(f"cuda:{device_id}" if gpu else "cpu")
    pipe = video_pipe(root, args.frames, args.stride, args.size, gpu, shard_id, num_shards,
                      batch_size=args.batch_size, num_threads=args.threads, device_id=device_id,
                      seed=42 + shard_id)
    loader = GenericIterator(pipe, ["clips", "label"], reader_name="reader",
                             last_batch_policy=LastBatchPolicy.FILL)
    classes = len([d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))])
    torch.manual_seed(shard_id)
    model = small_video_net(classes).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    losses, step, t0 = [], 0, time.perf_counter()
    for epoch in range(args.epochs if not args.steps else 10**9):
        for batch in loader:
            x, y = batch[0]["clips"], batch[0]["label"].reshape(-1)  # x: N x C x F x H x W
            with torch.autocast(device.type, dtype=torch.float16, enabled=gpu):
                loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.item())
            step += 1
            print(f"epoch {epoch} step {step}: loss {losses[-1]:.4f} (clips {tuple(x.shape)})",
                  flush=True)
            if args.steps and step >= args.steps:
                break
        if args.steps and step >= args.steps:
            break
        loader.reset()
    seconds = time.perf_counter() - t0
    k = max(1, len(losses) // 4)
    print(f"{step} steps in {seconds:.1f} s ({step * args.batch_size / seconds:.1f} clips/s); "
          f"loss {sum(losses[:k]) / k:.4f} (first {k} steps) -> {sum(losses[-k:]) / k:.4f} "
          f"(last {k})")


if __name__ == "__main__":
    main()
