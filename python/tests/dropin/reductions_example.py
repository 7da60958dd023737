# DALI's "Reduction operators" example (docs/examples/general/reductions.ipynb): an external
# source of small integer tensors reduced over all axes, chosen axes and axis names, with
# keep_dims, dtype, and std_dev/variance given the mean. Written for nvidia.dali.
import os

import numpy as np

from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn
import nvidia.dali.types as types

device_id = int(os.environ["DROPIN_DEVICE_ID"]) if os.environ.get("DROPIN_DEVICE_ID") else None
batch_size = 2
RESULTS, COMPARE = {}, {}


def get_batch():
    return [np.reshape(np.arange(9, dtype=np.int32) + k, (3, 3)) * (k + 1) for k in range(2)]


def run(pipe):
    pipe.build()
    return [[np.array(o.as_cpu().at(i)) for i in range(batch_size)] for o in pipe.run()]


@pipeline_def(batch_size=batch_size, num_threads=1, device_id=device_id)
def example_pipe():
    data = fn.external_source(source=get_batch, layout="AB", dtype=types.INT32, batch=True)
    data = data.gpu() if device_id is not None else data
    sum_all = fn.reductions.sum(data)
    sum_rows = fn.reductions.sum(data, axes=0)
    sum_cols = fn.reductions.sum(data, axis_names="B", keep_dims=True)
    min_all, max_all = fn.reductions.min(data), fn.reductions.max(data, axes=[0, 1])
    mean = fn.reductions.mean(data, axes=1, dtype=types.FLOAT)
    mean_sq = fn.reductions.mean_square(data)
    rms = fn.reductions.rms(data, axes=0)
    std = fn.reductions.std_dev(data, fn.reductions.mean(data))
    var = fn.reductions.variance(data, fn.reductions.mean(data, axes=0), axes=0, ddof=1)
    return sum_all, sum_rows, sum_cols, min_all, max_all, mean, mean_sq, rms, std, var


names = ["sum_all", "sum_rows", "sum_cols", "min_all", "max_all", "mean", "mean_square", "rms",
         "std_dev", "variance"]
for name, out in zip(names, run(example_pipe())):
    RESULTS[name] = out
    if device_id is not None and name in ("mean", "mean_square", "rms", "std_dev", "variance"):
        COMPARE[name] = ("tolerance", 1e-4)  # the GPU sums floats in another order
