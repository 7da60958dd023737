# Examples of DALI's newer image operators (filters, noise, colour, warps), each with fixed
# arguments on the same photos, cropped so that every input is exact in both libraries.
# Written for nvidia.dali; the data folder and device come from the environment.
# median_blur, dilate, erode and remap exist only on DALI's GPU: they run where a device is given.
import os

import numpy as np

from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn
import nvidia.dali.types as types

image_dir = os.path.join(os.environ["DROPIN_DATA"], "photos", "dali-imagenet-classes")
device_id = int(os.environ["DROPIN_DEVICE_ID"]) if os.environ.get("DROPIN_DEVICE_ID") else None
batch_size = 4
RESULTS, COMPARE = {}, {}


def operators(images):
    bayer = images[:, :, 1]  # one channel, read as a Bayer mosaic
    outs = {
        "laplacian": fn.laplacian(images, window_size=3, dtype=types.FLOAT),
        "lookup_table": fn.lookup_table(images, keys=[0, 64, 128, 255],
                                        values=[1.0, 2.0, 3.0, 4.0], default_value=0.5,
                                        dtype=types.FLOAT),
        "debayer": fn.debayer(bayer, blue_position=[0, 0]),
        "clahe": fn.clahe(images, tiles_x=4, tiles_y=4, clip_limit=2.0, luma_only=False),
        "jpeg_compression_distortion": fn.jpeg_compression_distortion(images, quality=30),
        "water": fn.water(images, ampl_x=5.0, ampl_y=3.0, interp_type=types.INTERP_NN),
        "sphere": fn.sphere(images, interp_type=types.INTERP_NN),
        "grid_mask": fn.grid_mask(images, tile=40, ratio=0.4, angle=0.3),
        "warp_perspective": fn.experimental.warp_perspective(
            images, matrix=[1.0, 0.1, 3.0, -0.05, 1.0, 2.0, 0.0, 0.0005, 1.0],
            interp_type=types.INTERP_NN),
        "noise_gaussian": fn.noise.gaussian(images, stddev=20.0),
        "noise_salt_and_pepper": fn.noise.salt_and_pepper(images, prob=0.1),
        "noise_shot": fn.noise.shot(images, factor=4.0),
    }
    if device_id is not None:
        gpu = images.gpu()
        outs["median_blur"] = fn.experimental.median_blur(gpu, window_size=5)
        outs["dilate"] = fn.experimental.dilate(gpu, mask_size=[3, 3])
        outs["erode"] = fn.experimental.erode(gpu, mask_size=[3, 3])
        mapx, mapy = fn.external_source(source=lambda info: barrel_maps(96, 128), batch=False,
                                        num_outputs=2, layout="HW")
        outs["remap"] = fn.experimental.remap(gpu, mapx.gpu(), mapy.gpu(),
                                              interp=types.INTERP_NN, pixel_origin="center")
    return outs


def barrel_maps(height, width, strength=0.3):
    """Source coordinates of a barrel distortion, whole pixels plus a quarter (each output
    pixel copies one input pixel)."""
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    cy, cx = (height - 1) / 2, (width - 1) / 2
    r2 = ((x - cx) / cx) ** 2 + ((y - cy) / cy) ** 2
    scale = 1 + strength * r2
    mapx = np.clip(np.floor(cx + (x - cx) * scale), 0, width - 1) + 0.25
    mapy = np.clip(np.floor(cy + (y - cy) * scale), 0, height - 1) + 0.25
    return mapx.astype(np.float32), mapy.astype(np.float32)


NAMES = []


@pipeline_def(batch_size=batch_size, num_threads=2, device_id=device_id, seed=7)
def augmentations():
    jpegs, _ = fn.readers.file(file_root=image_dir)
    images = fn.decoders.image(jpegs, device="cpu", output_type=types.RGB)
    images = fn.crop(images, crop=(96, 128), crop_pos_x=0.5, crop_pos_y=0.5)
    outs = operators(images)
    NAMES[:] = list(outs)
    return tuple(outs.values())


pipe = augmentations()
pipe.build()
for name, batch in zip(NAMES, pipe.run()):
    RESULTS[name] = [np.array(batch.as_cpu().at(i)) for i in range(batch_size)]
    RESULTS[name + "_layout"] = batch.layout()
# Noise draws differ by design (docs/dali_differences.md): their statistics compare.
for name in ("noise_gaussian", "noise_salt_and_pepper", "noise_shot"):
    COMPARE[name] = ("moments", 0.05)
# DALI's GPU median/dilate/erode run CV-CUDA, stoker's its own kernels: the same definition.
