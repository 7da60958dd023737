"""Operators that DALI runs on the GPU and stoker on the CPU only (stoker._schema.GPU_BY_COPY):
device="gpu" runs them on the CPU and copies their outputs to the GPU."""

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn

needs_gpu = pytest.mark.skipif(not _stoker.cuda_available(),
                               reason="no CUDA device: GPU test skipped")


def _gpu_by_copy_pipeline(folder, device_id):
    np.save(folder / "a.npy", np.arange(6, dtype=np.int16).reshape(2, 3))
    pipe = stoker.Pipeline(batch_size=2, num_threads=1, device_id=device_id, seed=5)
    with pipe:
        pipe.set_outputs(fn.random.uniform(device="gpu", range=[2, 3], shape=[100]),
                         fn.random.coin_flip(device="gpu", probability=1.0),
                         fn.constant(device="gpu", idata=[1, 2, 3]),
                         fn.readers.numpy(device="gpu", file_root=str(folder), name="npy"))
    return pipe


def test_operators_without_a_gpu_backend_run_on_the_cpu_and_copy_for_device_gpu(tmp_path):
    # (DALI has GPU backends for these; stoker runs them on the CPU and copies the outputs.)
    pipe = _gpu_by_copy_pipeline(tmp_path, 0)
    nodes = pipe._nodes
    assert [n["op"] for n in nodes].count("copy_to_device") == 4
    assert all(n["device"] == "cpu" for n in nodes if n["op"] != "copy_to_device")
    assert next(n for n in nodes if n["op"] == "readers.numpy")["name"] == "npy"


@needs_gpu
def test_gpu_by_copy_outputs_are_on_the_gpu(tmp_path):
    pipe = _gpu_by_copy_pipeline(tmp_path, 0)
    pipe.build()
    outs = pipe.run()
    assert all(o.device == "gpu" for o in outs)
    u, c, k, a = ([np.array(o.as_cpu().at(i)) for i in range(2)] for o in outs)
    assert all(x.shape == (100,) and x.min() >= 2 and x.max() < 3 for x in u)
    assert all(x == 1 for x in c)
    assert all(np.array_equal(x, [1, 2, 3]) and x.dtype == np.int32 for x in k)
    assert np.array_equal(a[0], np.arange(6, dtype=np.int16).reshape(2, 3))
    assert pipe.epoch_size("npy") == 1
