# DALI's "Automatic Augmentations" documentation example (docs/auto_aug/auto_aug.rst): an
# ImageNet training pipeline with the AutoAugment policy for ImageNet, written for nvidia.dali.
# Only the image folder and the device come from the environment (the decoder is "mixed" on a
# GPU, as in the documentation, else "cpu"); the reader's elided arguments are filled in.
import os

import numpy as np

from nvidia.dali import pipeline_def, fn, types
from nvidia.dali.auto_aug import auto_augment

image_dir = os.path.join(os.environ["DROPIN_DATA"], "photos", "dali-imagenet-classes")
device_id = int(os.environ["DROPIN_DEVICE_ID"]) if os.environ.get("DROPIN_DEVICE_ID") else None
decoder_device = "mixed" if device_id is not None else "cpu"
RESULTS, COMPARE = {}, {}


@pipeline_def(enable_conditionals=True)
def training_pipe(data_dir, image_size):

    jpegs, labels = fn.readers.file(file_root=data_dir, random_shuffle=False, name="Reader")
    shapes = fn.peek_image_shape(jpegs)
    images = fn.decoders.image(jpegs, device=decoder_device, output_type=types.RGB)

    # Applies the AutoAugment policy for ImageNet
    augmented_images = auto_augment.auto_augment_image_net(images, shape=shapes)

    resized_images = fn.resize(augmented_images, size=[image_size, image_size])

    return resized_images, labels


batch_size = 8
pipe = training_pipe(data_dir=image_dir, image_size=224, batch_size=batch_size, num_threads=2,
                     device_id=device_id, seed=42)
pipe.build()
images, labels, shapes = [], [], []
for _ in range(3):
    out_images, out_labels = pipe.run()
    if device_id is not None:
        out_images = out_images.as_cpu()
    images += [np.array(out_images.at(i)) for i in range(batch_size)]
    labels.append(np.array(out_labels.as_tensor()))
    RESULTS.setdefault("layouts", []).append(out_images.layout())
RESULTS["images"] = images
COMPARE["images"] = "shape"  # which sub-policy each image gets is random (stoker's own stream)
RESULTS["labels"] = labels
RESULTS["epoch_size"] = pipe.epoch_size("Reader")
