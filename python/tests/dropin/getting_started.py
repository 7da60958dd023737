# DALI's "Getting Started" notebook (docs/examples/getting_started.ipynb), its cells in order,
# written for nvidia.dali. Only the image folder and the device come from the environment;
# RESULTS holds what the notebook prints and shows.
import os

import numpy as np

from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn
import nvidia.dali.types as types

image_dir = os.path.join(os.environ["DROPIN_DATA"], "photos", "dali-imagenet-classes")
device_id = int(os.environ["DROPIN_DEVICE_ID"]) if os.environ.get("DROPIN_DEVICE_ID") else None
max_batch_size = 8
RESULTS, COMPARE = {}, {}


@pipeline_def
def simple_pipeline():
    jpegs, labels = fn.readers.file(file_root=image_dir)
    images = fn.decoders.image(jpegs, device="cpu")

    return images, labels


pipe = simple_pipeline(batch_size=max_batch_size, num_threads=1, device_id=device_id)
pipe.build()
pipe_out = pipe.run()
print(pipe_out)
images, labels = pipe_out
print("Images is_dense_tensor: " + str(images.is_dense_tensor()))
print("Labels is_dense_tensor: " + str(labels.is_dense_tensor()))
labels_tensor = labels.as_tensor()
print(labels_tensor.shape())
print(np.array(labels_tensor))
RESULTS["dense"] = (images.is_dense_tensor(), labels.is_dense_tensor())
RESULTS["labels_shape"] = labels_tensor.shape()
RESULTS["labels"] = np.array(labels_tensor)
RESULTS["images"] = [images.at(j) for j in range(max_batch_size)]  # show_images
RESULTS["layout"] = images.layout()
RESULTS["shapes"] = images.shape()


@pipeline_def
def shuffled_pipeline():
    jpegs, labels = fn.readers.file(file_root=image_dir, random_shuffle=True, initial_fill=21)
    images = fn.decoders.image(jpegs, device="cpu")

    return images, labels


pipe = shuffled_pipeline(batch_size=max_batch_size, num_threads=1, device_id=device_id,
                         seed=1234)
pipe.build()
images, labels = pipe.run()
RESULTS["shuffled_labels"] = np.array(labels.as_tensor())
COMPARE["shuffled_labels"] = "shape"  # the shuffle's random stream is stoker's own


@pipeline_def
def rotated_pipeline():
    jpegs, labels = fn.readers.file(file_root=image_dir, random_shuffle=True, initial_fill=21)
    images = fn.decoders.image(jpegs, device="cpu")
    rotated_images = fn.rotate(images, angle=10.0, fill_value=0)

    return rotated_images, labels


pipe = rotated_pipeline(batch_size=max_batch_size, num_threads=1, device_id=device_id,
                        seed=1234)
pipe.build()
images, labels = pipe.run()
RESULTS["rotated"] = [images.at(j) for j in range(max_batch_size)]
COMPARE["rotated"] = "kind"  # other images (shuffled)


@pipeline_def
def random_rotated_pipeline():
    jpegs, labels = fn.readers.file(file_root=image_dir, random_shuffle=True, initial_fill=21)
    images = fn.decoders.image(jpegs, device="cpu")
    angle = fn.random.uniform(range=(-10.0, 10.0))
    rotated_images = fn.rotate(images, angle=angle, fill_value=0)

    return rotated_images, labels


pipe = random_rotated_pipeline(batch_size=max_batch_size, num_threads=1, device_id=device_id,
                               seed=1234)
pipe.build()
images, labels = pipe.run()
RESULTS["random_rotated"] = [images.at(j) for j in range(max_batch_size)]
COMPARE["random_rotated"] = "kind"

if device_id is not None:  # the notebook's GPU cells

    @pipeline_def
    def random_rotated_gpu_pipeline():
        jpegs, labels = fn.readers.file(file_root=image_dir, random_shuffle=True,
                                        initial_fill=21)
        images = fn.decoders.image(jpegs, device="mixed")
        angle = fn.random.uniform(range=(-10.0, 10.0))
        rotated_images = fn.rotate(images, angle=angle, fill_value=0)

        return rotated_images, labels

    pipe = random_rotated_gpu_pipeline(batch_size=max_batch_size, num_threads=1,
                                       device_id=device_id, seed=1234)
    pipe.build()
    images, labels = pipe.run()
    print(images)
    RESULTS["gpu_random_rotated"] = [images.as_cpu().at(j) for j in range(max_batch_size)]
    COMPARE["gpu_random_rotated"] = "kind"
