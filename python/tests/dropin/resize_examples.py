# Resizing beyond fn.resize, as in DALI's examples: a fused resize-crop-mirror for training
# crops, tensor_resize on a volume built from the photos and on a 1-D signal, and (where a
# device is given: DALI runs it on the GPU only) the CV-CUDA experimental.resize.
# Written for nvidia.dali; the data folder and device come from the environment.
import os

import numpy as np

from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn
import nvidia.dali.types as types

image_dir = os.path.join(os.environ["DROPIN_DATA"], "photos", "dali-imagenet-classes")
device_id = int(os.environ["DROPIN_DEVICE_ID"]) if os.environ.get("DROPIN_DEVICE_ID") else None
batch_size = 4
RESULTS, COMPARE = {}, {}
NAMES = []


@pipeline_def(batch_size=batch_size, num_threads=2, device_id=device_id, seed=3)
def resizing():
    jpegs, _ = fn.readers.file(file_root=image_dir)
    images = fn.decoders.image(jpegs, device="cpu", output_type=types.RGB)
    images = fn.crop(images, crop=(120, 160), crop_pos_x=0.5, crop_pos_y=0.5)
    outs = {
        # resize, crop and flip in one pass: only the window's region is resampled
        "resize_crop_mirror": fn.resize_crop_mirror(
            images, resize_shorter=96, crop=(80, 80), crop_pos_x=0.3, crop_pos_y=0.6,
            mirror=1),
        "resize_crop_mirror_nn": fn.resize_crop_mirror(
            images, size=(60, 90), crop_h=48, crop_w=64, mirror=2,
            interp_type=types.INTERP_NN),
        "fast_resize_crop_mirror": fn.fast_resize_crop_mirror(
            images, resize_x=100, resize_y=75, crop=(64, 64)),
        # any axes of any tensor: the height and width of an HWC image by name...
        "tensor_resize_hw": fn.tensor_resize(images, sizes=[60, 100], axis_names="HW"),
        # ...a volume (three rows of the image as depth)...
        "tensor_resize_volume": fn.tensor_resize(
            fn.reshape(fn.cast(images[:, :, 0], dtype=types.FLOAT), shape=[3, 40, 160],
                       layout="DHW"),
            scales=[2.0, 0.5, 0.5], antialias=False),
        # ...or a 1-D signal (one row), with the deprecated experimental name
        "tensor_resize_1d": fn.experimental.tensor_resize(
            fn.cast(images[60, :, 1], dtype=types.FLOAT), sizes=[240], antialias=False),
    }
    if device_id is not None:
        outs["experimental_resize"] = fn.experimental.resize(images.gpu(), size=(60, 80),
                                                             interp_type=types.INTERP_NN)
    NAMES[:] = list(outs)
    return tuple(outs.values())


pipe = resizing()
pipe.build()
for name, batch in zip(NAMES, pipe.run()):
    RESULTS[name] = [np.array(batch.as_cpu().at(i)) for i in range(batch_size)]
    RESULTS[name + "_layout"] = batch.layout()
# Resampling: DALI samples its filters from tables and repeats edge pixels where stoker
# reweights them (docs/dali_differences.md); nearest neighbour is exact.
for name in ("resize_crop_mirror", "fast_resize_crop_mirror", "tensor_resize_hw"):
    COMPARE[name] = ("mean_abs", 0.05)
for name in ("tensor_resize_volume", "tensor_resize_1d"):
    COMPARE[name] = ("tolerance", 0.01)
