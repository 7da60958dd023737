"""SSD300's training pipeline on a COCO dataset (DALI's, and MLPerf's SSD reference): read
images with their boxes and labels, pick SSD's prospective crop, cut it, flip image and boxes
together, resize to 300x300, jitter the colours, normalise, and encode the boxes against the
8,732 default boxes as the loss expects them.

    python examples/ssd_pipeline.py --data /data/coco --annotations \
        /data/coco/annotations/instances_train2017.json --images train2017
    python examples/ssd_pipeline.py      # DALI's COCO subset from ../shared/data, if present

With --dali the same definition also runs on NVIDIA DALI (only the import differs) and the two
are compared where they are deterministic: the boxes the reader gives.
"""

import argparse
import itertools
import math
import os

import numpy as np

import stoker
from stoker import fn, types

SHARED_COCO = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "photos",
                           "dali-coco")


def ssd300_default_boxes():
    """SSD300's 8,732 default boxes for COCO as [l, t, r, b] rows (MLPerf's dboxes300_coco):
    six feature maps, a small and a large square box per cell plus boxes of aspect ratio 2
    (and 3) and their transposes, clipped to the image."""
    fig, feat = 300, [38, 19, 10, 5, 3, 1]
    steps = [8, 16, 32, 64, 100, 300]
    scales = [21, 45, 99, 153, 207, 261, 315]
    ratios = [[2], [2, 3], [2, 3], [2, 3], [2], [2]]
    boxes = []
    for k, f in enumerate(feat):
        sk, sk_next = scales[k] / fig, scales[k + 1] / fig
        sizes = [(sk, sk), (math.sqrt(sk * sk_next),) * 2]
        for r in ratios[k]:
            w, h = sk * math.sqrt(r), sk / math.sqrt(r)
            sizes += [(w, h), (h, w)]
        fk = fig / steps[k]
        for w, h in sizes:
            for i, j in itertools.product(range(f), repeat=2):
                cx, cy = (j + 0.5) / fk, (i + 0.5) / fk
                boxes.append((cx, cy, w, h))
    b = np.clip(np.array(boxes, np.float64), 0, 1)
    ltrb = np.stack([b[:, 0] - b[:, 2] / 2, b[:, 1] - b[:, 3] / 2,
                     b[:, 0] + b[:, 2] / 2, b[:, 1] + b[:, 3] / 2], axis=1)
    return ltrb.astype(np.float32)


def ssd_pipeline(fn, types, file_root, annotations, anchors, device, shard_id=0, num_shards=1):
    """The definition: fn and types are stoker's (or DALI's) modules."""
    jpegs, bboxes, labels = fn.readers.coco(file_root=file_root, annotations_file=annotations,
                                            skip_empty=True, ratio=True, ltrb=True,
                                            random_shuffle=True, shard_id=shard_id,
                                            num_shards=num_shards, name="Reader")
    decode = "mixed" if device == "gpu" else "cpu"
    images = fn.decoders.image(jpegs, device=decode, output_type=types.RGB)
    crop_begin, crop_size, bboxes, labels = fn.random_bbox_crop(
        bboxes, labels, aspect_ratio=[0.5, 2.0], thresholds=[0, 0.1, 0.3, 0.5, 0.7, 0.9],
        scaling=[0.3, 1.0], bbox_layout="xyXY", allow_no_crop=True, num_attempts=50)
    images = fn.slice(images, crop_begin, crop_size, out_of_bounds_policy="trim_to_shape")
    flip = fn.random.coin_flip(probability=0.5)
    bboxes = fn.bb_flip(bboxes, ltrb=True, horizontal=flip)
    images = fn.resize(images, resize_x=300, resize_y=300)
    saturation = fn.random.uniform(range=[0.5, 1.5])
    contrast = fn.random.uniform(range=[0.5, 1.5])
    brightness = fn.random.uniform(range=[0.875, 1.125])
    hue = fn.random.uniform(range=[-0.5, 0.5])
    images = fn.hsv(images, dtype=types.FLOAT, hue=hue, saturation=saturation)
    images = fn.brightness_contrast(images, brightness=brightness, contrast=contrast,
                                    dtype=types.UINT8)
    images = fn.crop_mirror_normalize(images, crop=(300, 300),
                                      mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                      std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
                                      mirror=flip, dtype=types.FLOAT, output_layout="CHW")
    bboxes, labels = fn.box_encoder(bboxes, labels, criteria=0.5,
                                    anchors=anchors.ravel().tolist())
    return images, bboxes, labels


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=SHARED_COCO, help="the dataset's folder")
    ap.add_argument("--images", default="images", help="the images' folder inside --data")
    ap.add_argument("--annotations", help="default: --data/instances.json")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--batches", type=int, default=3)
    ap.add_argument("--device", choices=["cpu", "gpu"],
                    default="gpu" if stoker._stoker.cuda_available() else "cpu")
    ap.add_argument("--dali", action="store_true", help="also run it on DALI and compare")
    args = ap.parse_args()
    file_root = os.path.join(args.data, args.images)
    annotations = args.annotations or os.path.join(args.data, "instances.json")
    anchors = ssd300_default_boxes()
    print(f"{len(anchors)} default boxes, device {args.device}")

    @stoker.pipeline_def(batch_size=args.batch_size, num_threads=4, seed=7,
                         device_id=0 if args.device == "gpu" else None)
    def pipe_def():
        return ssd_pipeline(fn, types, file_root, annotations, anchors, args.device)

    pipe = pipe_def()
    pipe.build()
    print(f"{pipe.epoch_size('Reader')} images with objects")
    for step in range(args.batches):
        images, bboxes, labels = (out.as_cpu() for out in pipe.run())
        x = images.as_array()
        matched = [int((labels.at(i) > 0).sum()) for i in range(len(labels))]
        print(f"batch {step}: images {x.shape} {x.dtype}, encoded boxes "
              f"{np.array(bboxes.at(0)).shape}, anchors matched per image {matched}")
    if args.dali:
        compare_with_dali(file_root, annotations, anchors)
    print("done")


def compare_with_dali(file_root, annotations, anchors):
    """The whole definition on DALI's CPU backend gives outputs of the same shapes and types;
    the reader's boxes and labels are equal (the rest is random: each library draws from its
    own generator)."""
    import nvidia.dali as dali

    kinds = {}
    for name, lib in (("stoker", stoker), ("dali", dali)):
        kwargs = {"device_id": None} if name == "dali" else {}

        @lib.pipeline_def(batch_size=4, num_threads=2, seed=7, **kwargs)
        def whole():
            return ssd_pipeline(lib.fn, lib.types, file_root, annotations, anchors, "cpu")

        p = whole()
        p.build()
        kinds[name] = [(np.array(b.at(0)).shape, np.array(b.at(0)).dtype) for b in p.run()]
    print(f"SSD outputs on DALI: {kinds['dali']}; the same shapes and types: "
          f"{kinds['stoker'] == kinds['dali']}")
    outs = {}
    for name, lib in (("stoker", stoker), ("dali", dali)):
        kwargs = {"device_id": None} if name == "dali" else {}

        @lib.pipeline_def(batch_size=8, num_threads=2, seed=7, **kwargs)
        def reader():
            _, bboxes, labels = lib.fn.readers.coco(file_root=file_root,
                                                    annotations_file=annotations,
                                                    skip_empty=True, ratio=True, ltrb=True)
            return bboxes, labels

        p = reader()
        p.build()
        outs[name] = [[np.array(b.at(i)) for i in range(len(b))] for b in p.run()]
    same = all(np.array_equal(a, b) for k in range(2)
               for a, b in zip(outs["stoker"][k], outs["dali"][k]))
    print(f"reader outputs equal to DALI's: {same}")


if __name__ == "__main__":
    main()
