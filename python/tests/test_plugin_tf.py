"""stoker.plugins.tf: DALIDataset as a tf.data.Dataset (declared dtypes and shapes, a small Keras
model trained on it, tf.distribute's per-input-pipeline datasets, an external source's end ending
it, tf.data datasets feeding external sources (input_datasets), errors), and Iterator's
tf.Tensors made through DLPack. TensorFlow from PyPI, on the CPU."""

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

import stoker  # noqa: E402
import stoker.plugins.tf as stoker_tf  # noqa: E402
from stoker import fn  # noqa: E402


@pytest.fixture(scope="module")
def two_classes(tmp_path_factory):
    pytest.importorskip("PIL")
    from stoker.datasets import make_jpeg_folder
    root = str(tmp_path_factory.mktemp("tf_jpegs"))
    make_jpeg_folder(root, num_images=24, num_classes=2, seed=3, separable=True)
    return root


def _pipe(root, shard_id=0, num_shards=1, batch=8):
    pipe = stoker.Pipeline(batch_size=batch, num_threads=2, seed=1)
    with pipe:
        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, shard_id=shard_id,
                                        num_shards=num_shards, name="r")
        images = fn.resize(fn.decoders.image(jpegs), size=(32, 32))
        images = fn.crop_mirror_normalize(images, mean=[128.0], std=[64.0], output_layout="HWC")
        pipe.set_outputs(images, labels)
    return pipe


def test_dataset_trains_a_keras_model(two_classes):
    ds = stoker_tf.DALIDataset(_pipe(two_classes), batch_size=8, device_id=None,
                               output_dtypes=(tf.float32, tf.int32),
                               output_shapes=((8, 32, 32, 3), (8, 1)))
    assert isinstance(ds, tf.data.Dataset)
    assert ds.element_spec == (tf.TensorSpec((8, 32, 32, 3), tf.float32),
                               tf.TensorSpec((8, 1), tf.int32))
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([
        tf.keras.Input((32, 32, 3)), tf.keras.layers.Conv2D(8, 3, activation="relu"),
        tf.keras.layers.GlobalAveragePooling2D(), tf.keras.layers.Dense(2)])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    losses = model.fit(ds, steps_per_epoch=6, epochs=4, verbose=0,
                       shuffle=False).history["loss"]
    assert losses[-1] < 0.5 * losses[0], losses


def test_one_output_gives_1_tuples_and_an_external_source_ends_the_dataset():
    # DALI's elements are tuples even for one tf.DType (its tutorial reads `batch[0]`).
    batches = [np.full((2, 3), k, np.int16) for k in range(3)]
    pipe = stoker.Pipeline(batch_size=2)
    with pipe:
        pipe.set_outputs(fn.external_source(batches))
    ds = stoker_tf.DALIDataset(pipe, output_dtypes=tf.int16, output_shapes=(2, 3))
    assert ds.element_spec == (tf.TensorSpec((2, 3), tf.int16),)
    got = [t[0].numpy() for t in ds]
    assert [int(t[0, 0]) for t in got] == [0, 1, 2] and got[0].shape == (2, 3)


def test_declared_shapes_squeeze_1_sized_dimensions_as_dali():
    # DALI's tutorial declares (batch, 28, 28) for 1-channel CHW images and (batch,) for (1,)
    # labels; a batch of 1 may leave the batch out; an impossible or ambiguous fit is an error
    # (DALI counts the ways of leaving 1-sized dimensions out: (4, 1, 1) fits (4, None) two).
    @stoker.pipeline_def(batch_size=4)
    def pipe():
        image = fn.constant(fdata=np.arange(6, dtype=np.float32).tolist(), shape=[1, 2, 3])
        return image, fn.constant(idata=[7], shape=[1]), fn.constant(idata=[1], shape=[1, 1])

    dtypes = (tf.float32, tf.int32, tf.int32)
    ds = stoker_tf.DALIDataset(pipe(), output_dtypes=dtypes,
                               output_shapes=((4, 2, 3), (4,), (4, 1, 1)))
    images, labels, ones = next(iter(ds))
    assert images.shape == (4, 2, 3) and labels.numpy().tolist() == [7] * 4
    np.testing.assert_array_equal(images[1], np.arange(6).reshape(2, 3))
    one = stoker_tf.DALIDataset(pipe(batch_size=1), output_dtypes=dtypes,
                                output_shapes=((2, 3), (), (1,)))
    images, label, ones = next(iter(one))
    assert images.shape == (2, 3) and label.numpy() == 7 and ones.shape == (1,)
    wrong = stoker_tf.DALIDataset(pipe(), output_dtypes=dtypes,
                                  output_shapes=(None, None, (4, 2, 1)))
    with pytest.raises(Exception, match=r"output 2 has the shape \[4, 1, 1\], not compatible"):
        next(iter(wrong))
    ambiguous = stoker_tf.DALIDataset(pipe(), output_dtypes=dtypes,
                                      output_shapes=(None, None, (4, None)))
    with pytest.raises(Exception, match=r"fits output_shapes\[2\] \(4, None\) in 2 ways"):
        next(iter(ambiguous))


def test_each_iterator_starts_at_the_first_batch_as_dali(two_classes):
    # DALI builds a pipeline per iterator: peeking with next(iter(ds)) then iterating again
    # starts again from the first batch (readers, random draws and callable sources alike).
    ds = stoker_tf.DALIDataset(_pipe(two_classes), output_dtypes=(tf.float32, tf.int32))
    first = [[t.numpy() for t in step] for step, _ in zip(ds, range(2))]
    again = [[t.numpy() for t in step] for step, _ in zip(ds, range(3))]
    for a, b in zip(first, again):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)

    @stoker.pipeline_def(batch_size=2, seed=5)
    def sourced():
        data = fn.external_source(lambda info: np.full(2, info.idx_in_epoch, np.int32),
                                  batch=False)
        return data, fn.random.uniform(shape=[2])

    ds = stoker_tf.DALIDataset(sourced(), output_dtypes=(tf.int32, tf.float32))
    first = [(a.numpy(), b.numpy()) for (a, b), _ in zip(ds, range(2))]
    again = [(a.numpy(), b.numpy()) for (a, b), _ in zip(ds, range(2))]
    assert first[1][0].tolist() == [[2, 2], [3, 3]]
    for (a, b), (c, d) in zip(first, again):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)


def test_sharded_datasets_under_tf_distribute(two_classes):
    strategy = tf.distribute.MirroredStrategy(devices=["/cpu:0"])
    contexts = []

    def dataset_fn(context):
        contexts.append((context.input_pipeline_id, context.num_input_pipelines))
        pipe = _pipe(two_classes, shard_id=context.input_pipeline_id,
                     num_shards=context.num_input_pipelines)
        return stoker_tf.DALIDataset(pipe, output_dtypes=(tf.float32, tf.int32),
                                     output_shapes=((8, 32, 32, 3), (8, 1)))

    dist = strategy.distribute_datasets_from_function(dataset_fn)
    images, labels = next(iter(dist))
    assert contexts == [(0, 1)] and tuple(images.shape) == (8, 32, 32, 3)


def test_declared_types_are_checked(two_classes):
    with pytest.raises(TypeError, match="DALIDataset needs output_dtypes"):
        stoker_tf.DALIDataset(_pipe(two_classes))
    with pytest.raises(ValueError, match="batch_size=4, but the pipeline's is 8"):
        stoker_tf.DALIDataset(_pipe(two_classes), batch_size=4,
                              output_dtypes=(tf.float32, tf.int32))
    wrong = stoker_tf.DALIDataset(_pipe(two_classes), output_dtypes=(tf.float32, tf.float32))
    with pytest.raises(Exception, match="output 1 is int32, output_dtypes says float32"):
        next(iter(wrong))


def test_iterator_gives_the_batches_through_dlpack(two_classes):
    it = stoker_tf.Iterator(_pipe(two_classes), ["images", "labels"], reader_name="r")
    step = next(it)[0]
    assert isinstance(step["images"], tf.Tensor) and step["labels"].dtype == tf.int32
    expect = _pipe(two_classes).run()
    np.testing.assert_array_equal(step["images"].numpy(), expect[0].as_array())
    assert len(it) == 3  # 24 images, batch 8


def _jpeg_bytes(root):
    import glob
    return [open(p, "rb").read() for p in sorted(glob.glob(f"{root}/*/*.jpg"))]


def test_input_datasets_feed_samples_and_batches(two_classes):
    files = _jpeg_bytes(two_classes)[:8]

    @stoker.pipeline_def(batch_size=4, num_threads=2)
    def decode():
        jpegs = fn.external_source(name="jpegs")
        scale = fn.external_source(name="scale", layout="")
        return fn.resize(fn.decoders.image(jpegs), size=(16, 16)), scale * 2

    @stoker.pipeline_def(batch_size=4, num_threads=2)
    def reference():
        jpegs = fn.external_source(source=lambda i: [np.frombuffer(f, np.uint8)
                                                     for f in files[4 * (i % 2):4 * (i % 2) + 4]])
        return fn.resize(fn.decoders.image(jpegs), size=(16, 16))

    scales = np.arange(8, dtype=np.float32).reshape(2, 4)
    ds = stoker_tf.experimental.DALIDatasetWithInputs(
        decode(), output_dtypes=(tf.uint8, tf.float32),
        input_datasets={
            "jpegs": tf.data.Dataset.from_tensor_slices(files),  # samples: tf.string bytes
            "scale": stoker_tf.experimental.Input(tf.data.Dataset.from_tensor_slices(scales),
                                                  batch=True)})
    got = [(a.numpy(), b.numpy()) for a, b in ds]
    assert len(got) == 2  # the inputs ran out after two batches: the dataset ends
    ref = reference()
    for k, (images, doubled) in enumerate(got):
        np.testing.assert_array_equal(images, ref.run()[0].as_array())
        np.testing.assert_array_equal(doubled, scales[k] * 2)


def test_input_datasets_errors():
    @stoker.pipeline_def(batch_size=2)
    def p():
        return fn.external_source(name="x") + fn.external_source(lambda: [np.zeros(1)] * 2)

    one = tf.data.Dataset.from_tensor_slices(np.zeros((4, 1)))
    with pytest.raises(ValueError, match=r"input_datasets names 'y', but the pipeline has no "
                                         r"external source of that name without a `source` "
                                         r"\(those: \['x'\]\)"):
        stoker_tf.DALIDataset(p(), output_dtypes=tf.float64, input_datasets={"x": one, "y": one})
    with pytest.raises(ValueError, match=r"the external sources \['x'\] have no `source`"):
        stoker_tf.DALIDataset(p(), output_dtypes=tf.float64)
    with pytest.raises(TypeError, match=r"input_datasets\['x'\] must be a tf.data.Dataset"):
        stoker_tf.DALIDataset(p(), output_dtypes=tf.float64, input_datasets={"x": [1, 2]})
    with pytest.raises(TypeError, match="Input: expected a tf.data.Dataset, got list"):
        stoker_tf.Input([1, 2])


def test_dalis_helper_functions(two_classes):
    from stoker.plugin import tf as plugin
    assert plugin.dataset_compatible_tensorflow() and plugin.dataset_inputs_compatible_tensorflow()
    assert plugin.dataset_distributed_compatible_tensorflow()
    assert stoker_tf._tf_version() >= (2, 16, 0)
    assert str(plugin.MIN_TENSORFLOW_VERSION) == "2.0"
    options = plugin.dataset_options()
    assert not options.experimental_optimization.apply_default_optimizations
    assert not options.autotune.enabled
    pipe = stoker.Pipeline(batch_size=2, seed=1)
    with pipe:
        pipe.set_outputs(fn.random.uniform(shape=[2]))
    assert '"random.uniform"' in plugin.serialize_pipeline(pipe)
    pipe = stoker.Pipeline(batch_size=2)
    with pipe:
        pipe.set_outputs(fn.external_source(source=lambda: [np.zeros(1)] * 2))
    with pytest.raises(RuntimeError, match="cannot be serialized"):
        plugin.serialize_pipeline(pipe)
