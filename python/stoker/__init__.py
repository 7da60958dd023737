"""stoker: keeps accelerators fed.

Define a pipeline with ``@stoker.pipeline_def`` and ``stoker.fn`` operators, build it, and
iterate over batches::

    import stoker
    from stoker import fn, types

    @stoker.pipeline_def(batch_size=32, num_threads=4, seed=42)
    def train(root):
        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
        images = fn.decoders.image(jpegs, output_type=types.RGB)
        images = fn.random_resized_crop(images, size=(224, 224))
        images = fn.crop_mirror_normalize(images, mirror=fn.random.coin_flip(),
                                          mean=[123.675, 116.28, 103.53],
                                          std=[58.395, 57.12, 57.375],
                                          dtype=types.FLOAT16, output_layout="CHW")
        return images, labels

    pipe = train("/data/train")
    pipe.build()
    images, labels = pipe.run()
"""

from stoker import _stoker
from stoker import types
from stoker.batch import Batch, Sample
from stoker.pipeline import DataNode, OperatorConcurrency, Pipeline, StreamPolicy, pipeline_def
from stoker import fn
from stoker import ops
from stoker import math
from stoker import tfrecord
from stoker.subscript import newaxis
# DALI's module paths (nvidia.dali.backend, .tensors, .data_node, .external_source, .plugin.*)
from stoker import backend, data_node, external_source, tensors  # noqa: E402

InternalError = _stoker.InternalError
PipelineOptions = _stoker.PipelineOptions
from stoker._version import __version__  # noqa: E402

__all__ = ["Batch", "DataNode", "InternalError", "OperatorConcurrency", "Pipeline",
           "PipelineOptions", "Sample", "StreamPolicy", "backend", "data_node", "external_source", "fn", "math", "ops", "pipeline_def",
           "newaxis", "tensors", "tfrecord", "types", "__version__"]
