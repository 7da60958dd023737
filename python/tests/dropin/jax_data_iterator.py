# DALI's JAX data_iterator tutorials, written for nvidia.dali: "Running custom JAX augmentations
# in DALI" (docs/examples/custom_operations/jax_operator_basic.ipynb: a data_iterator, then
# augmentations written in JAX as fn.jax_function inside it, jitted and vmapped, one taking a
# random per-sample flag) and the JAX training example (docs/examples/frameworks/jax/
# jax-basic_example.ipynb: DALIGenericIterator with reader_name and auto_reset feeding a small
# model for a few epochs, `for` loops only). Only the image folder and the device come from the
# environment; the tutorials decode on the GPU ("mixed"), here only where JAX takes GPU arrays.
import os

import jax
import jax.numpy as jnp
import numpy as np

import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import pipeline_def
from nvidia.dali.plugin import jax as dax
from nvidia.dali.plugin.jax import data_iterator

image_dir = os.path.join(os.environ["DROPIN_DATA"], "photos", "dali-imagenet-classes")
jax_gpus = [d for d in jax.devices() if d.platform == "gpu"]
device_id = (int(os.environ["DROPIN_DEVICE_ID"]) if os.environ.get("DROPIN_DEVICE_ID")
             and jax_gpus else None)
decoder_device = "mixed" if device_id is not None else "cpu"
RESULTS, COMPARE = {}, {}


@data_iterator(output_map=["images", "labels"], reader_name="image_reader")
def baseline_iterator_fn():
    jpegs, labels = fn.readers.file(file_root=image_dir, name="image_reader")
    images = fn.decoders.image(jpegs, device=decoder_device)
    images = fn.resize(images, size=(300, 300))
    return images, labels


baseline_iterator = baseline_iterator_fn(batch_size=4, device_id=device_id)
baseline_batch = next(baseline_iterator)
RESULTS["baseline"] = np.asarray(baseline_batch["images"])
COMPARE["baseline"] = ("mean_abs", 0.05)  # resize: DALI's tabulated filters


# Adding an augmentation defined with JAX
@dax.fn.jax_function
@jax.jit
@jax.vmap
def flip_horizontal(image: jax.Array):
    return image[:, ::-1, :]


@data_iterator(output_map=["images", "labels"], reader_name="image_reader")
def iterator_fn():
    jpegs, labels = fn.readers.file(file_root=image_dir, name="image_reader")
    images = fn.decoders.image(jpegs, device=decoder_device)
    images = fn.resize(images, size=(300, 300))
    images = flip_horizontal(images)
    return images, labels


iterator = iterator_fn(batch_size=4, device_id=device_id)
batch = next(iterator)
RESULTS["flipped"] = np.asarray(batch["images"])
COMPARE["flipped"] = ("mean_abs", 0.05)
RESULTS["flip_matches_baseline"] = bool(np.array_equal(
    np.asarray(batch["images"]), np.asarray(baseline_batch["images"])[:, :, ::-1, :]))


# A random augmentation: DALI draws the per-sample flag, JAX applies it
@dax.fn.jax_function
@jax.jit
@jax.vmap
def flip_horizontal_random(image: jax.Array, should_flip: jax.Array):
    return jax.lax.cond(should_flip, lambda x: x[:, ::-1, :], lambda x: x, image)


@data_iterator(output_map=["images", "flags"], reader_name="image_reader")
def random_iterator_fn():
    jpegs, _ = fn.readers.file(file_root=image_dir, name="image_reader")
    images = fn.decoders.image(jpegs, device=decoder_device)
    images = fn.resize(images, size=(300, 300))
    should_flip = fn.random.coin_flip(dtype=types.BOOL)
    if decoder_device == "mixed":
        should_flip = should_flip.gpu()
    return flip_horizontal_random(images, should_flip), should_flip


random_iterator = random_iterator_fn(batch_size=4, device_id=device_id, seed=42)
batch = next(random_iterator)
flags = np.asarray(batch["flags"]).ravel()
expected = np.where(flags[:, None, None, None], RESULTS["baseline"][:, :, ::-1, :],
                    RESULTS["baseline"])
RESULTS["random_flip_consistent"] = bool(np.array_equal(np.asarray(batch["images"]), expected))
RESULTS["random_flags"] = flags
COMPARE["random_flags"] = "shape"  # the random stream is stoker's own


# Training with DALIGenericIterator (jax-basic_example): reader_name sizes the epoch, auto_reset
# starts the next one; each `for` loop over the iterator is an epoch.
@pipeline_def(device_id=device_id, batch_size=8, num_threads=4)
def classification_pipeline():
    jpegs, labels = fn.readers.file(file_root=image_dir, name="reader")
    images = fn.decoders.image(jpegs, device=decoder_device, output_type=types.GRAY)
    images = fn.resize(images, size=(8, 8))
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, std=[255.0],
                                      output_layout="CHW")
    images = fn.reshape(images, shape=[64])
    labels = labels.gpu() if decoder_device == "mixed" else labels
    labels = fn.one_hot(labels, num_classes=1000)
    return images, labels


training_iterator = dax.DALIGenericIterator(classification_pipeline(), output_map=[
    "images", "labels"], reader_name="reader", auto_reset=True)
RESULTS["training_size"] = training_iterator.size


def predict(params, images):
    w, b = params
    return jax.nn.log_softmax(images @ w + b)


@jax.jit
def update(params, batch, step_size=0.5):
    def loss(p):
        return -jnp.mean(jnp.sum(predict(p, batch["images"]) * batch["labels"], axis=1))

    grads = jax.grad(loss)(params)
    return [p - step_size * g for p, g in zip(params, grads)], loss(params)


params = [jnp.zeros((64, 1000), jnp.float32), jnp.zeros((1000,), jnp.float32)]
losses, shapes = [], []
for epoch in range(3):
    for batch in training_iterator:
        params, loss = update(params, batch)
        losses.append(float(loss))
        shapes.append((batch["images"].shape, batch["labels"].shape, str(batch["labels"].dtype)))
RESULTS["train_shapes"] = shapes
RESULTS["train_losses"] = np.array(losses)
COMPARE["train_losses"] = ("tolerance", 0.05)  # the 8x8 resize's filters differ slightly
