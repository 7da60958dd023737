"""Example 1: the standard ImageNet training pipeline, defined with @pipeline_def and iterated
for one epoch (or --batches batches).

    python examples/01_training_pipeline.py --data /data/imagenet/train
    python examples/01_training_pipeline.py            # generates a small sample folder
"""

import argparse
import os
import tempfile

import stoker
from stoker import fn, types


@stoker.pipeline_def
def train_pipe(root, size, shard_id=0, num_shards=1):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, shard_id=shard_id,
                                    num_shards=num_shards, name="Reader")
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    images = fn.random_resized_crop(images, size=(size, size))
    images = fn.crop_mirror_normalize(images, mirror=fn.random.coin_flip(probability=0.5),
                                      mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                      std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
                                      dtype=types.FLOAT16, output_layout="CHW")
    return images, labels


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data")
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--batches", type=int, default=0, help="stop after this many (0: an epoch)")
    args = ap.parse_args()
    root = args.data
    if root is None:
        from stoker.datasets import make_jpeg_folder
        root = os.path.join(tempfile.mkdtemp(), "train")
        make_jpeg_folder(root, num_images=48, num_classes=4)
    pipe = train_pipe(root, args.size, batch_size=args.batch_size, num_threads=4, seed=42)
    pipe.build()
    print(f"{pipe.epoch_size('Reader')} images")
    for step, (images, labels) in enumerate(pipe):
        x, y = images.as_array(), labels.as_array()  # numpy views, no copies
        print(f"batch {step}: images {x.shape} {x.dtype}, labels {y.ravel().tolist()}")
        if args.batches and step + 1 >= args.batches:
            break


if __name__ == "__main__":
    main()
