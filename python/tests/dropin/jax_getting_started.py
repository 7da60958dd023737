# DALI's "Getting started with JAX and DALI" tutorial
# (docs/examples/frameworks/jax/jax-getting_started.ipynb), written for nvidia.dali: the quick
# start's data_iterator, the same iterator over a pipeline_def pipeline with DALIGenericIterator,
# epochs as `for` loops, a jitted step on the batches, and the multi-device sections (`sharding`
# for automatic parallelism, `devices` for jax.pmap). Only the image folder and the device come
# from the environment. The tutorial decodes on the GPU ("mixed"); here that happens only where
# JAX can take GPU arrays. The multi-device sections need one GPU per JAX device under DALI (it
# gives pipeline k device_id=k, which a pipeline without CUDA refuses): they run where there
# are several, and stoker's side of them is tested in python/tests/test_plugin_jax.py.
import os

import jax
import jax.numpy as jnp
import numpy as np

import nvidia.dali.fn as fn
from nvidia.dali import pipeline_def
from nvidia.dali.plugin.jax import DALIGenericIterator, data_iterator

image_dir = os.path.join(os.environ["DROPIN_DATA"], "photos", "dali-imagenet-classes")
jax_gpus = [d for d in jax.devices() if d.platform == "gpu"]
device_id = (int(os.environ["DROPIN_DEVICE_ID"]) if os.environ.get("DROPIN_DEVICE_ID")
             and jax_gpus else None)
decoder_device = "mixed" if device_id is not None else "cpu"
RESULTS, COMPARE = {}, {}


# Quick start
@data_iterator(output_map=["images", "labels"], reader_name="image_reader")
def iterator_fn():
    jpegs, labels = fn.readers.file(file_root=image_dir, name="image_reader")
    images = fn.decoders.image(jpegs, device=decoder_device)
    images = fn.resize(images, resize_x=256, resize_y=256)
    return images, (labels.gpu() if device_id is not None else labels)


iterator = iterator_fn(batch_size=8, device_id=device_id)
batch = next(iterator)  # batch of data ready to be used by JAX
print(type(batch["images"]), batch["images"].shape, batch["images"].dtype)
RESULTS["quick_start"] = {k: (isinstance(v, jax.Array), v.shape, str(v.dtype))
                          for k, v in batch.items()}
RESULTS["quick_start_labels"] = np.asarray(batch["labels"])
RESULTS["quick_start_images"] = np.asarray(batch["images"])
COMPARE["quick_start_images"] = ("mean_abs", 0.05)  # resize: DALI's tabulated filters
RESULTS["iterator_size"] = (iterator.size, len(iterator))


# Running DALI with JAX: the pipeline on its own, then wrapped in the iterator
@pipeline_def(batch_size=8, num_threads=4, device_id=device_id)
def simple_pipeline():
    jpegs, labels = fn.readers.file(file_root=image_dir, name="image_reader")
    images = fn.decoders.image(jpegs, device=decoder_device)
    images = fn.resize(images, resize_x=256, resize_y=256)
    return images, (labels.gpu() if device_id is not None else labels)


pipe = simple_pipeline()
pipe.build()
images, labels = pipe.run()
RESULTS["pipeline_labels"] = np.array(labels.as_cpu().as_tensor())

dali_iterator = DALIGenericIterator(simple_pipeline(), ["images", "labels"],
                                    reader_name="image_reader")
steps = []
for epoch in range(2):  # each `for` loop is an epoch
    for i, batch in enumerate(dali_iterator):
        steps.append((epoch, i, batch["images"].shape, np.asarray(batch["labels"]).ravel()))
RESULTS["epochs"] = steps
RESULTS["generic_len"] = len(dali_iterator)


# A training-like step: the batches go straight into jitted JAX code
@jax.jit
def mean_brightness(images, labels):
    return jnp.mean(images.astype(jnp.float32), axis=(1, 2, 3)), labels.sum()


brightness, label_sum = mean_brightness(batch["images"], batch["labels"])
RESULTS["step"] = (np.asarray(brightness), int(label_sum))
COMPARE["step"] = ("tolerance", 0.05)


# Multiple GPUs: `sharding` (automatic parallelism) and `devices` (jax.pmap)
if device_id is not None and len(jax_gpus) > 1:
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    mesh = Mesh(jax.devices(), axis_names=("batch"))
    sharding = NamedSharding(mesh, PartitionSpec("batch"))

    @data_iterator(output_map=["images", "labels"], reader_name="image_reader",
                   sharding=sharding)
    def iterator_fn_sharded(num_shards, shard_id):
        jpegs, labels = fn.readers.file(file_root=image_dir, name="image_reader",
                                        num_shards=num_shards, shard_id=shard_id)
        images = fn.decoders.image(jpegs, device="mixed")
        images = fn.resize(images, resize_x=256, resize_y=256)
        return images, labels.gpu()

    sharded = iterator_fn_sharded(batch_size=8)
    batch = next(sharded)
    RESULTS["sharded"] = (batch["images"].shape, len(batch["images"].sharding.device_set),
                          np.asarray(batch["labels"]))

    @data_iterator(output_map=["images", "labels"], reader_name="image_reader",
                   devices=jax.devices())
    def iterator_fn_pmapped(num_shards, shard_id):
        jpegs, labels = fn.readers.file(file_root=image_dir, name="image_reader",
                                        num_shards=num_shards, shard_id=shard_id)
        images = fn.decoders.image(jpegs, device="mixed")
        images = fn.resize(images, resize_x=256, resize_y=256)
        return images, labels.gpu()

    pmapped = iterator_fn_pmapped(batch_size=8)
    batch = next(pmapped)
    per_device = jax.pmap(lambda labels: labels.sum())(batch["labels"])
    RESULTS["pmapped"] = (batch["images"].shape, np.asarray(per_device))
