# DALI's tensor examples (docs/examples/general: "Mathematical Expressions", "Indexing and
# slicing", "Tensor manipulation"): arithmetic with constants and broadcasting, math functions,
# subscripts with steps, negative indices and new axes, and the shape operators. Written for
# nvidia.dali.
import os

import numpy as np

import nvidia.dali as dali
import nvidia.dali.fn as fn
import nvidia.dali.math as dmath
import nvidia.dali.types as types
from nvidia.dali import pipeline_def

device_id = int(os.environ["DROPIN_DEVICE_ID"]) if os.environ.get("DROPIN_DEVICE_ID") else None
batch_size = 3
RESULTS, COMPARE = {}, {}
rng = np.random.default_rng(7)
DATA = [rng.integers(0, 100, size=(4, 6, 3)).astype(np.uint8) for _ in range(batch_size)]
LABELS = [np.array([k % 3], dtype=np.int32) for k in range(batch_size)]


@pipeline_def(batch_size=batch_size, num_threads=1, device_id=device_id)
def expressions():
    x = fn.external_source(source=lambda: DATA, layout="HWC", batch=True)
    labels = fn.external_source(source=lambda: LABELS, batch=True)
    if device_id is not None:
        x = x.gpu()
    f = fn.cast(x, dtype=types.FLOAT)
    return (x + 5, x * 2 - 3, (f - 50.0) / 25.0, x > 50, (x & 0xF0) | 1,
            f * types.Constant(np.array([0.5, 1.0, 2.0], dtype=np.float32)),
            dmath.sqrt(f), dmath.clamp(x, 10, 90), dmath.pow(f, 0.5), dmath.atan2(f, f + 1),
            dmath.max(x, 40), dmath.floor(f / 3), labels * 10 + 1)


@pipeline_def(batch_size=batch_size, num_threads=1, device_id=device_id)
def subscripts():
    x = fn.external_source(source=lambda: DATA, layout="HWC", batch=True)
    if device_id is not None:
        x = x.gpu()
    # On the GPU the shape is taken on the GPU: stoker's GPU values do not come back to the CPU
    # inside a pipeline (docs/dali_differences.md, "Python API").
    shape_device = "gpu" if device_id is not None else "cpu"
    return (x[1], x[:, 2:5], x[-1, -2, :], x[::2, ::-1], x[1:3, :, 0],
            x[dali.newaxis, :, 1], x[:, :, 1:2].shape(device=shape_device))


@pipeline_def(batch_size=batch_size, num_threads=1, device_id=device_id)
def manipulation():
    x = fn.external_source(source=lambda: DATA, layout="HWC", batch=True)
    labels = fn.external_source(source=lambda: LABELS, batch=True)
    if device_id is not None:
        x = x.gpu()
    y = fn.expand_dims(x, axes=0, new_axis_names="F")
    return (y, fn.squeeze(y, axes=0), fn.reshape(x, shape=[-1, 3]),
            fn.transpose(x, perm=[2, 0, 1]), fn.cast(x, dtype=types.INT16),
            fn.one_hot(labels, num_classes=3), fn.cat(x, x, axis=1), fn.stack(x, x),
            fn.pad(x, axes=[0], shape=[6], fill_value=7))


for name, define in (("expressions", expressions), ("subscripts", subscripts),
                     ("manipulation", manipulation)):
    pipe = define()
    pipe.build()
    outs = pipe.run()
    RESULTS[name] = [[np.array(o.as_cpu().at(i)) for i in range(batch_size)] for o in outs]
    RESULTS[name + "_layouts"] = [o.layout() for o in outs]
COMPARE["expressions"] = ("tolerance", 1e-5)  # float math functions (sqrt, pow, atan2)
