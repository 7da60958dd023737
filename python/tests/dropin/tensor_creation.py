# DALI's tensor creation and metadata operators, with the arguments their operator
# documentation describes: constant (fdata/idata, shape, dtype, layout; types.Constant), full
# and full_like (a scalar or a broadcast fill value), ones/zeros (shape, dtype, layout) and
# ones_like/zeros_like, cast_like, copy, shapes, get_property ("source_info" of
# readers.file's samples, "layout"), and reinterpret as DALI's "Reinterpreting Tensors" example
# shows it (docs/examples/general/reinterpret.ipynb: uint8 bytes viewed as uint32, new shapes
# and layouts). Written for nvidia.dali; the data folder and device come from the environment.
import glob
import os

import numpy as np

from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn
import nvidia.dali.types as types

image_dir = os.path.join(os.environ["DROPIN_DATA"], "photos", "dali-imagenet-classes")
device_id = int(os.environ["DROPIN_DEVICE_ID"]) if os.environ.get("DROPIN_DEVICE_ID") else None
batch_size = 3
RESULTS, COMPARE = {}, {}

# HWC images of different heights, and rows of bytes (4 x k per row) as in the example
DATA = [(np.arange((4 + k) * 6 * 3) * 7 % 256).astype(np.uint8).reshape(4 + k, 6, 3)
        for k in range(batch_size)]
FILES = sorted(glob.glob(os.path.join(image_dir, "*", "*.jpg")))[:batch_size]
rng = np.random.default_rng(1234)
BYTES = [rng.integers(0, 255, size=(k + 2, 4 * (k + 1)), dtype=np.uint8)
         for k in range(batch_size)]


def samples(batch):
    return [np.array(batch.as_cpu().at(i)) for i in range(batch_size)]


def creation():
    x = fn.external_source(source=lambda: DATA, batch=True, layout="HWC")
    return {
        "constant_f": fn.constant(fdata=[1.5, 2.5, 3.5, 4.5], shape=[2, 2]),
        "constant_i16": fn.constant(idata=7, shape=[3], dtype=types.INT16),
        "constant_layout": fn.constant(idata=[1, 2, 3], layout="X"),
        "types_constant": types.Constant(np.array([[1, 2], [3, 4]], dtype=np.uint16)),
        "full_scalar": fn.full(5.0, shape=[2, 3]),
        "full_broadcast": fn.full(np.array([1, 2, 3], np.int32), shape=[2, 3], layout="AB"),
        "full_like": fn.full_like(x, 7),
        "full_like_row": fn.full_like(x, np.array([1.0, 2.0, 3.0], np.float32)),
        "ones": fn.ones(shape=[2, 3]),
        "ones_float": fn.ones(shape=[4], dtype=types.FLOAT, layout="X"),
        "ones_like": fn.ones_like(x),
        "zeros": fn.zeros(shape=[3, 2], dtype=types.UINT8, layout="HW"),
        "zeros_like": fn.zeros_like(x),
    }


def metadata():
    x = fn.external_source(source=lambda: DATA, batch=True, layout="HWC")
    raw = fn.external_source(source=lambda: BYTES, batch=True)
    # (the files by their full paths: with file_root, DALI's source_info is the path relative
    # to the root, "100/swan-3584559_640.jpg", and stoker's the full path, a difference left
    # out here)
    jpegs, _ = fn.readers.file(files=FILES)
    f = fn.cast(x, dtype=types.FLOAT)
    outs = {
        "cast_like_to_uint8": fn.cast_like(f * 0.5 + 0.6, x),
        "cast_like_halves": fn.cast_like(f * 0.5, x),
        "cast_like_to_float": fn.cast_like(x, fn.constant(fdata=1.0)),
        "copy": fn.copy(x),
        "reinterpret_uint32": fn.reinterpret(raw, dtype=types.UINT32),
        "reinterpret_int8": fn.reinterpret(x, dtype=types.INT8),
        "reinterpret_shape": fn.reinterpret(x, shape=[-1, 3], layout="XC"),
        "reinterpret_rel_shape": fn.reinterpret(x, rel_shape=[1, 0.5, 2]),
        "shapes": fn.shapes(x),
        "shapes_int32": fn.shapes(x, dtype=types.INT32),
        "layout_property": fn.get_property(x, key="layout"),
        "source_info": fn.get_property(jpegs, key="source_info"),
        "encoded_layout": fn.get_property(jpegs, key="layout"),
    }
    if device_id is not None:  # the GPU backends, on the same data
        xg, rawg = x.gpu(), raw.gpu()
        outs.update({
            "gpu_types_constant": types.Constant(np.array([[1, 2], [3, 4]], dtype=np.uint16),
                                                 device="gpu"),
            "gpu_cast_like": fn.cast_like(xg, f.gpu()),
            "gpu_copy": fn.copy(xg),
            "gpu_reinterpret_uint32": fn.reinterpret(rawg, dtype=types.UINT32),
            "gpu_reinterpret_shape": fn.reinterpret(xg, shape=[-1, 3], layout="XC"),
            "gpu_shapes": fn.shapes(xg),
            "gpu_layout": fn.get_property(xg, key="layout"),
            "gpu_layout_of_cpu_data": fn.get_property(x, key="layout", device="gpu"),
        })
    return outs


NAMES = {}


@pipeline_def(batch_size=batch_size, num_threads=1, device_id=device_id)
def pipe_of(graph):  # a pipeline returns a tuple: the dict's values, its keys kept aside
    outs = graph()
    NAMES[graph.__name__] = list(outs)
    return tuple(outs.values())


for graph in (creation, metadata):
    pipe = pipe_of(graph)
    pipe.build()
    for name, batch in zip(NAMES[graph.__name__], pipe.run()):
        RESULTS[name] = samples(batch)
        RESULTS[name + "_layout"] = batch.layout()
