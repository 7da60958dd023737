"""Data-parallel training with torchrun: every process builds its own stoker pipeline on its
shard (shard_from_env: RANK, WORLD_SIZE, LOCAL_RANK), trains a DistributedDataParallel model on
it, and at the end the processes compare which samples they saw: disjoint, covering the epoch.
NCCL on GPUs, gloo on the CPU.

    torchrun --nproc_per_node=2 examples/torchrun_ddp.py --data /data/train
    torchrun --standalone --nproc_per_node=2 examples/torchrun_ddp.py     # generated data
"""

import argparse
import gc
import os
import tempfile

import torch
import torch.distributed as dist

import stoker
from stoker import fn, types
from stoker.plugins.torch import ClassificationIterator, LastBatchPolicy, shard_from_env


@stoker.pipeline_def
def pipe_def(root, gpu, shard_id, num_shards):
    jpegs, labels = fn.readers.file(file_root=root, shard_id=shard_id, num_shards=num_shards,
                                    stick_to_shard=True, pad_last_batch=True, name="reader")
    images = fn.decoders.image(jpegs, device="mixed" if gpu else "cpu", output_type=types.GRAY)
    images = fn.resize(images, device="gpu" if gpu else "cpu", size=(16, 16))
    images = fn.crop_mirror_normalize(images, device="gpu" if gpu else "cpu", mean=[128.0],
                                      std=[64.0], output_layout="CHW")
    return images, fn.cast(labels, dtype=types.INT64)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", help="class sub-folders (default: one generated image per class, "
                                   "so a label names its sample)")
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=2)
    args = ap.parse_args()
    shard_id, num_shards, device_id = shard_from_env()
    gpu = device_id is not None
    dist.init_process_group("nccl" if gpu else "gloo")
    root = args.data
    if root is None:  # rank 0 writes the data, the others wait for it
        root = os.path.join(tempfile.gettempdir(), f"stoker_ddp_{os.environ.get('MASTER_PORT')}")
        if shard_id == 0:
            from stoker.datasets import make_jpeg_folder
            make_jpeg_folder(root, num_images=22, num_classes=22, seed=5)
        dist.barrier()
    device = torch.device(f"cuda:{device_id}" if gpu else "cpu")
    pipe = pipe_def(root, gpu, shard_id, num_shards, batch_size=args.batch_size, num_threads=2,
                    device_id=device_id, seed=7)
    loader = ClassificationIterator(pipe, reader_name="reader",
                                    last_batch_policy=LastBatchPolicy.PARTIAL)
    classes = pipe.reader_meta("reader")["epoch_size"]
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16 * 16, classes)).to(device)
    model = torch.nn.parallel.DistributedDataParallel(
        model, device_ids=[device_id] if gpu else None)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    seen = []
    for epoch in range(args.epochs):
        for batch in loader:
            x, y = batch[0]["data"], batch[0]["label"].reshape(-1)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if epoch == 0:
                seen += y.tolist()
        loader.reset()
    everyone = [None] * num_shards
    dist.all_gather_object(everyone, seen)
    if shard_id == 0:
        flat = [s for rank in everyone for s in rank]
        disjoint = len(flat) == len(set(flat))
        print(f"samples per rank: {[len(r) for r in everyone]}; disjoint: {disjoint}; "
              f"cover the epoch: {sorted(set(flat)) == list(range(classes))}; last loss "
              f"{loss.item():.4f}", flush=True)
    # The DDP model (its reducer holds gloo's finished work) goes before the process group:
    # otherwise gloo's threads can abort the process at exit ("terminate called without an
    # active exception": 4-6 runs in 20 with torch 2.14 on the CPU, stoker or not; none after).
    del model, opt, loss
    gc.collect()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
