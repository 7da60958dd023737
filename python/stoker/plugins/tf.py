"""TensorFlow: a pipeline as a tf.data dataset, with DALI's interface
(nvidia.dali.plugin.tf.DALIDataset), and an iterator of tf.Tensors made through DLPack.

    import stoker.plugins.tf as stoker_tf
    ds = stoker_tf.DALIDataset(pipe, batch_size=64, device_id=0,
                               output_dtypes=(tf.float32, tf.int32),
                               output_shapes=((64, 224, 224, 3), (64, 1)))
    model.fit(ds, steps_per_epoch=steps)

The dataset is endless, as DALI's (epochs are counted by steps_per_epoch); it ends only when an
external source ends. Its tensors are TensorFlow's own (tf.data copies what the pipeline
hands it; a GPU pipeline's outputs are copied to the host first). `Iterator` gives tf.Tensors
that are the pipeline's memory itself, CPU or GPU (DLPack, no copy), for custom training loops.

tf.data datasets can feed the pipeline's external sources that have no `source` (DALI's
input_datasets; each element a sample, or a batch with Input(ds, batch=True)):

    @stoker.pipeline_def(batch_size=64)
    def pipe():
        return fn.decoders.image(fn.external_source(name="jpegs"))
    ds = stoker_tf.DALIDataset(pipe(), output_dtypes=tf.uint8,
                               input_datasets={"jpegs": tf.data.Dataset.from_tensor_slices(...)})

Sharding under tf.distribute: build one dataset per input pipeline,

    def dataset_fn(context):
        pipe = train_pipe(shard_id=context.input_pipeline_id,
                          num_shards=context.num_input_pipelines, ...)
        return stoker_tf.DALIDataset(pipe, output_dtypes=..., output_shapes=...)
    dist = strategy.distribute_datasets_from_function(dataset_fn)
"""

import warnings

import numpy as np
import tensorflow as tf
from tensorflow.python.data.ops import dataset_ops

from stoker.plugins._iterator import BaseIterator, LastBatchPolicy

__all__ = ["DALIDataset", "Dataset", "Input", "Iterator", "LastBatchPolicy", "experimental",
           "MIN_TENSORFLOW_VERSION", "dataset_compatible_tensorflow",
           "dataset_distributed_compatible_tensorflow", "dataset_inputs_compatible_tensorflow",
           "dataset_options", "serialize_pipeline"]


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _sample(t):
    """A tf.Tensor element as a numpy sample (a tf.string scalar, e.g. a file's bytes: uint8)."""
    a = t.numpy()
    return np.frombuffer(a, np.uint8) if isinstance(a, bytes) else a


def _samples(t):
    """A batch element (first axis: the samples) as what feed_input takes."""
    a = t.numpy()
    return [np.frombuffer(b, np.uint8) for b in a] if a.dtype == object else a


def _host_array(batch):
    return (batch.as_cpu() if batch.device == "gpu" else batch).as_array()


def _shape_matches(required, got, r=0, g=0):
    """The ways `got` (a batch's shape) fits `required` (a tf.TensorShape of known rank) when
    1-sized dimensions of `got` may be left out: [shape] per way (DALI's CountShapeMatches)."""
    if r == len(required) and g == len(got):
        return [()]
    if g == len(got):
        return []
    ways = []
    if r < len(required) and required[r] in (None, got[g]):
        ways += [(got[g],) + rest for rest in _shape_matches(required, got, r + 1, g + 1)]
    if got[g] == 1:
        ways += _shape_matches(required, got, r, g + 1)
    return ways


def _compatible_shape(required, got, batch_size, k):
    """The shape a batch of shape `got` takes for the declared `required` (DALI's rules: as it
    is where compatible; else 1-sized dimensions are squeezed out, where exactly one way of
    leaving them out fits; a 1-element batch takes any 1-element declared shape)."""
    required = tf.TensorShape(required)
    if required.is_compatible_with(got):
        return got
    if len(required) >= len(got):
        raise ValueError(f"DALIDataset: output {k} has the shape {list(got)}, not compatible "
                         f"with output_shapes[{k}] {required}")
    if batch_size != 1 and (not len(required) or required[0] not in (None, batch_size)):
        raise ValueError(f"DALIDataset: output_shapes[{k}] {required} is not compatible with "
                         f"the batch size {batch_size}")
    if np.prod(got) == 1 and required.is_fully_defined() and required.num_elements() == 1:
        return tuple(required.as_list())
    ways = _shape_matches(required.as_list(), tuple(got))
    if len(ways) != 1:
        raise ValueError(f"DALIDataset: output {k} has the shape {list(got)}, which fits "
                         f"output_shapes[{k}] {required} in {len(ways)} ways, not one")
    return ways[0]


def _start_again(pipeline, start):
    """Each iterator of a DALIDataset starts at the pipeline's first batch, as in DALI (which
    builds a new pipeline per iterator): a pipeline that an earlier iterator ran is restored to
    the state it had before its first batch (readers, random streams, callable sources; an
    iterable source starts again). `start`: [] before the first iterator, then [that state]
    ([None] where it could not be taken: the pipeline had run before, or cannot checkpoint)."""
    pipeline.build()
    if not start:
        try:
            start.append(None if pipeline._ran else pipeline.checkpoint())
        except (RuntimeError, ValueError):  # an operator whose state a checkpoint cannot hold
            start.append(None)
    elif pipeline._ran and start[0] is not None:
        pipeline._forget_runs()
        pipeline._end_delivered = False
        with warnings.catch_warnings():  # (an iterable source starting again is DALI's way)
            warnings.simplefilter("ignore", RuntimeWarning)
            pipeline._restart_from(start[0])


class DALIDataset(dataset_ops.UnaryUnchangedStructureDataset):
    """The batches of `pipeline` as a tf.data.Dataset of tuples of tensors (one per pipeline
    output; as in DALI, a tuple also where output_dtypes is a single tf.DType). output_dtypes:
    tf.DType per output (required, as in DALI); output_shapes: shapes per output (None:
    unknown; a declared shape is checked against every batch, whose 1-sized dimensions are
    squeezed out to fit it as DALI does: (8, 28, 28) takes a batch of shape (8, 1, 28, 28), and
    a pipeline of batch size 1 may leave the batch out). Each new iterator of the dataset starts
    at the pipeline's first batch (DALI builds a pipeline per iterator: `next(iter(ds))`, then
    `model.fit(ds)` trains from the first batch). batch_size, num_threads, device_id,
    prefetch_queue_depth and DALI's other arguments are accepted for DALI's scripts; the
    pipeline's own settings apply (a differing batch_size is refused)."""

    def __init__(self, pipeline, output_dtypes=None, output_shapes=None,
                 fail_on_device_mismatch=True, *, batch_size=None, num_threads=None,
                 device_id=None, exec_separated=False, exec_dynamic=False,
                 prefetch_queue_depth=None, cpu_prefetch_queue_depth=None,
                 gpu_prefetch_queue_depth=None, dtypes=None, shapes=None, input_datasets=None):
        inputs = _inputs(pipeline, input_datasets)
        output_dtypes = output_dtypes if output_dtypes is not None else dtypes
        output_shapes = output_shapes if output_shapes is not None else shapes
        if output_dtypes is None:
            raise TypeError("DALIDataset needs output_dtypes: a tf.DType per pipeline output")
        single = not isinstance(output_dtypes, (tuple, list))
        dtypes = _as_tuple(output_dtypes)
        if not all(isinstance(d, tf.DType) for d in dtypes):
            raise TypeError(f"output_dtypes must be tf.DType values, got {output_dtypes!r}")
        if output_shapes is None:
            shapes = (None,) * len(dtypes)
        else:
            shapes = (output_shapes,) if single else _as_tuple(output_shapes)
        if len(shapes) != len(dtypes):
            raise ValueError(f"DALIDataset: {len(dtypes)} output_dtypes but {len(shapes)} "
                             f"output_shapes")
        if batch_size is not None and batch_size != pipeline.batch_size:
            raise ValueError(f"DALIDataset: batch_size={batch_size}, but the pipeline's is "
                             f"{pipeline.batch_size}")
        self._pipeline = pipeline
        signature = tuple(tf.TensorSpec(shape=s, dtype=d) for s, d in zip(shapes, dtypes))
        dtypes_np = [d.as_numpy_dtype for d in dtypes]

        start = []  # the pipeline's state before its first batch, when it can be restored

        def batches():
            _start_again(pipeline, start)
            feeds = [(name, iter(ds), batch, layout) for name, ds, batch, layout in inputs]
            while True:
                try:
                    for name, it, batch, layout in feeds:  # this batch's data, from tf.data
                        data = (_samples(next(it)) if batch else
                                [_sample(next(it)) for _ in range(pipeline.batch_size)])
                        pipeline.feed_input(name, data, layout=layout)
                    outputs = pipeline.run()
                except StopIteration:  # an input dataset or an external source ended
                    return
                if len(outputs) != len(dtypes):
                    raise ValueError(f"DALIDataset: the pipeline has {len(outputs)} outputs, "
                                     f"output_dtypes names {len(dtypes)}")
                arrays = []
                for k, (b, want, shape) in enumerate(zip(outputs, dtypes_np, shapes)):
                    a = _host_array(b)
                    if a.dtype != want:
                        raise TypeError(f"DALIDataset: output {k} is {a.dtype}, output_dtypes "
                                        f"says {tf.as_dtype(want).name}")
                    arrays.append(a.reshape(_compatible_shape(shape, a.shape,
                                                              pipeline.batch_size, k)))
                yield tuple(arrays)

        inner = tf.data.Dataset.from_generator(batches, output_signature=signature)
        super().__init__(inner, inner._variant_tensor)


Dataset = DALIDataset


class Input:
    """An input dataset of DALIDataset(input_datasets=...) with its options: `batch=True` when
    each element is a whole batch (first axis: the samples), else each element is a sample;
    `layout` (default: the external source's)."""

    def __init__(self, dataset, *, layout=None, batch=False):
        if not isinstance(dataset, tf.data.Dataset):
            raise TypeError(f"Input: expected a tf.data.Dataset, got {type(dataset).__name__}")
        self.dataset, self.layout, self.batch = dataset, layout, batch


def _inputs(pipeline, input_datasets):
    """[(name, dataset, batch, layout)] for the external sources `input_datasets` feeds (DALI's
    rules: a plain dataset gives samples; every external source without a `source` must get
    one; layout from Input, else the external source's)."""
    pipeline._define()
    placeholders = {name: es for name in pipeline._external
                    if (es := pipeline._external.get(name)).source is None}
    given = dict(input_datasets or {})
    for name, value in given.items():
        if not isinstance(name, str):
            raise TypeError(f"DALIDataset: input_datasets maps external source names to "
                            f"datasets; got the key {name!r}")
        if not isinstance(value, (tf.data.Dataset, Input)):
            raise TypeError(f"DALIDataset: input_datasets['{name}'] must be a tf.data.Dataset "
                            f"or stoker.plugins.tf.Input, got {type(value).__name__}")
        if name not in placeholders:
            raise ValueError(f"DALIDataset: input_datasets names '{name}', but the pipeline has "
                             f"no external source of that name without a `source` (those: "
                             f"{sorted(placeholders) or 'none'})")
    missing = sorted(set(placeholders) - set(given))
    if missing:
        raise ValueError(f"DALIDataset: the external sources {missing} have no `source`; give "
                         f"them data with input_datasets={{name: tf.data.Dataset}}")
    inputs = []
    for name, value in given.items():
        spec = value if isinstance(value, Input) else Input(value)
        es = placeholders[name]
        layout = spec.layout if spec.layout is not None else es.layouts[es.names.index(name)]
        inputs.append((name, spec.dataset, spec.batch, layout))
    return inputs


def serialize_pipeline(pipeline):
    """The pipeline's serialized definition (DALI's helper; stoker's text is its own JSON)."""
    try:
        return pipeline.serialize()
    except (RuntimeError, ValueError) as e:
        raise RuntimeError("the pipeline cannot be serialized (Python operators and external "
                           "sources with a source cannot)") from e


def _tf_version():
    """(major, minor, patch) of TensorFlow ("2.21.0-rc1" -> (2, 21, 0))."""
    import re

    return tuple(int(re.match(r"\d*", p).group() or 0) for p in tf.__version__.split(".")[:3])


def _min_version():
    from packaging.version import Version  # (a dependency of TensorFlow's)

    return Version("2.0")


MIN_TENSORFLOW_VERSION = _min_version()  # DALI's constant: stoker needs TensorFlow 2 (DALI 1.15)


def dataset_options():
    """The tf.data.Options DALI gives its datasets: tf.data's default optimizations and
    autotuning off (DALI's helper; stoker's datasets need no options)."""
    options = tf.data.Options()
    options.experimental_optimization.apply_default_optimizations = False
    options.autotune.enabled = False
    return options


def dataset_compatible_tensorflow():
    """Whether this TensorFlow runs DALIDataset (DALI's check; stoker needs TF 2)."""
    return _tf_version() >= (2, 0)


def dataset_inputs_compatible_tensorflow():
    """Whether this TensorFlow takes input_datasets (DALI's check: 2.4.1 and newer)."""
    return _tf_version() >= (2, 4, 1)


def dataset_distributed_compatible_tensorflow():
    """Whether tf.distribute works with DALIDataset (DALI's check: 2.5 and newer)."""
    return _tf_version() >= (2, 5)


class experimental:  # noqa: N801 (DALI's namespace: plugin.tf.experimental)
    """DALI's experimental names: DALIDatasetWithInputs (DALIDataset, which takes
    input_datasets here) and Input."""

    DALIDatasetWithInputs = DALIDataset
    Input = Input


class Iterator(BaseIterator):
    __doc__ = BaseIterator.__doc__ + """
    Each step is a list with one dict per pipeline, {name: tf.Tensor}: the batch's own memory
    (CPU or GPU) through DLPack, no copy."""

    def _convert(self, k, batch, take):
        t = tf.experimental.dlpack.from_dlpack(batch.__dlpack__())
        return t[:take] if take < t.shape[0] else t
