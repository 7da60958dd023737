"""A segmentation training pipeline on a COCO dataset: images and their pixel-wise masks go
through the same random window, the same flip and the same resize (nearest-neighbour for the
masks, so labels stay labels), as DALI's segmentation examples do: one random decision made
once and given to both.

    python examples/segmentation_pipeline.py --data /data/coco --images train2017 \
        --annotations /data/coco/annotations/instances_train2017.json
    python examples/segmentation_pipeline.py      # DALI's COCO subset from ../shared/data
"""

import argparse
import os

import numpy as np

import stoker
from stoker import fn, types

SHARED_COCO = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "photos",
                           "dali-coco")


def segmentation_pipeline(fn, types, file_root, annotations, size, device):
    jpegs, _, _, masks = fn.readers.coco(file_root=file_root, annotations_file=annotations,
                                         pixelwise_masks=True, random_shuffle=True,
                                         name="Reader")
    decode = "mixed" if device == "gpu" else "cpu"
    images = fn.decoders.image(jpegs, device=decode, output_type=types.RGB)
    masks = fn.cast(masks, dtype=types.UINT8)  # COCO's 80 classes fit a byte
    if device == "gpu":
        masks = masks.gpu()
    # One window, one flip, one size for both.
    anchor, shape = fn.random_crop_generator(fn.peek_image_shape(jpegs), random_area=[0.3, 1.0])
    images = fn.slice(images, anchor, shape, axes=[0, 1])
    masks = fn.slice(masks, anchor, shape, axes=[0, 1])
    flip = fn.random.coin_flip(probability=0.5)
    images = fn.flip(images, horizontal=flip)
    masks = fn.flip(masks, horizontal=flip)
    images = fn.resize(images, size=[size, size])
    masks = fn.resize(masks, size=[size, size], interp_type=types.INTERP_NN)
    images = fn.crop_mirror_normalize(images, mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                      std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
                                      dtype=types.FLOAT, output_layout="CHW")
    return images, masks


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=SHARED_COCO)
    ap.add_argument("--images", default="images")
    ap.add_argument("--annotations", help="default: --data/instances.json")
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--batches", type=int, default=3)
    ap.add_argument("--device", choices=["cpu", "gpu"],
                    default="gpu" if stoker._stoker.cuda_available() else "cpu")
    args = ap.parse_args()
    file_root = os.path.join(args.data, args.images)
    annotations = args.annotations or os.path.join(args.data, "instances.json")

    @stoker.pipeline_def(batch_size=args.batch_size, num_threads=4, seed=7,
                         device_id=0 if args.device == "gpu" else None)
    def pipe_def():
        return segmentation_pipeline(fn, types, file_root, annotations, args.size, args.device)

    pipe = pipe_def()
    pipe.build()
    print(f"{pipe.epoch_size('Reader')} images, device {args.device}")
    for step in range(args.batches):
        images, masks = (out.as_cpu() for out in pipe.run())
        x, m = images.as_array(), masks.as_array()
        covered = float((m > 0).mean())
        print(f"batch {step}: images {x.shape} {x.dtype}, masks {m.shape} {m.dtype}, "
              f"classes {sorted(set(np.unique(m).tolist()) - {0})}, {covered:.0%} of pixels "
              f"labelled")
    print("done")


if __name__ == "__main__":
    main()
