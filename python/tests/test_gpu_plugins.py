"""The framework plugins on the GPU: tensors on the pipeline's device without a copy (DLPack and
the CUDA array interface), stream-ordered hand-off through the torch iterator while buffers are
recycled, and the JAX iterator's device arrays. Skipped without a CUDA device."""

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn

needs_gpu = pytest.mark.skipif(not _stoker.cuda_available(),
                               reason="no CUDA device: GPU test skipped")


def _pipe(root, device, **kwargs):
    pipe = stoker.Pipeline(batch_size=8, num_threads=2, seed=3,
                           device_id=0 if device != "cpu" else None, **kwargs)
    with pipe:
        jpegs, labels = fn.readers.file(file_root=root, name="reader", pad_last_batch=True)
        images = fn.decoders.image_crop(jpegs, device="mixed" if device != "cpu" else "cpu",
                                        crop=(48, 48))
        pipe.set_outputs(images, labels)
    return pipe


@needs_gpu
def test_torch_tensors_are_the_batches_memory(jpeg_folder):
    torch = pytest.importorskip("torch")
    (images, labels) = _pipe(jpeg_folder, "gpu").run()
    t = torch.from_dlpack(images)
    assert t.is_cuda and t.data_ptr() == images._impl.data_ptr(0)
    u = torch.as_tensor(images, device="cuda")  # through __cuda_array_interface__
    assert u.data_ptr() == images._impl.data_ptr(0)
    assert torch.equal(t, u)
    s = torch.as_tensor(images[3], device="cuda")
    assert s.data_ptr() == images._impl.data_ptr(3) and tuple(s.shape) == (48, 48, 3)
    cupy = pytest.importorskip("cupy")
    c = cupy.asarray(images)
    assert c.data.ptr == images._impl.data_ptr(0)


@needs_gpu
def test_torch_iterator_on_another_stream_never_reads_recycled_buffers(jpeg_folder):
    """Batches taken from the iterator on a side stream (the DLPack hand-off makes that stream
    wait and records it), held while later batches reuse the pool's buffers: every batch's mean
    stays the CPU decode's (corruption would show as large differences)."""
    torch = pytest.importorskip("torch")
    from stoker.plugins.torch import ClassificationIterator
    cpu = ClassificationIterator(_pipe(jpeg_folder, "cpu"), reader_name="reader",
                                 auto_reset=True)
    gpu_pipe = _pipe(jpeg_folder, "gpu")
    gpu = ClassificationIterator(gpu_pipe, reader_name="reader", auto_reset=True)
    def step(it):  # auto_reset: an epoch's end raises once, then the next epoch goes on
        try:
            return next(it)
        except StopIteration:
            return next(it)

    side = torch.cuda.Stream()
    held = []
    for _ in range(40):
        ref = step(cpu)
        with torch.cuda.stream(side):
            t = step(gpu)[0]["data"]  # created on the side stream: it waits and is recorded
            assert t.is_cuda and t.shape == (8, 48, 48, 3)
            m = t.float().mean(dim=(1, 2, 3))
        held.append((t, m, ref[0]["data"].double().mean(dim=(1, 2, 3)).numpy()))
        if len(held) > 5:
            _, m, expect = held.pop(0)
            side.synchronize()
            np.testing.assert_allclose(m.cpu().numpy(), expect, atol=2.0)
    assert gpu_pipe.memory_stats()["device"]["reused"] > 0


@needs_gpu
def test_jax_iterator_gives_device_arrays(jpeg_folder):
    jax = pytest.importorskip("jax")
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("JAX has no GPU backend here")
    from stoker.plugins.jax import Iterator
    cpu = Iterator(_pipe(jpeg_folder, "cpu"), ["data", "label"], reader_name="reader")
    gpu = Iterator(_pipe(jpeg_folder, "gpu"), ["data", "label"], reader_name="reader")
    for a, b in zip(cpu, gpu):
        assert next(iter(b["data"].devices())).platform == "gpu"
        diff = np.abs(np.asarray(a["data"], np.float64) - np.asarray(b["data"], np.float64))
        assert diff.mean() <= 2.0
        np.testing.assert_array_equal(np.asarray(a["label"]), np.asarray(b["label"]))


def _gpu_count():
    try:
        import torch
        return torch.cuda.device_count()
    except ImportError:
        return 0


def _shard_pipe(root, device_id, shard):
    pipe = stoker.Pipeline(batch_size=4, num_threads=2, seed=3, device_id=device_id)
    with pipe:
        jpegs, labels = fn.readers.file(file_root=root, name="reader", shard_id=shard,
                                        num_shards=2, pad_last_batch=True)
        images = fn.decoders.image_crop(jpegs, device="mixed" if device_id is not None
                                        else "cpu", crop=(32, 32))
        pipe.set_outputs(images, labels)
    return pipe


@needs_gpu
def test_one_pipeline_per_gpu_with_torch_and_a_jax_sharding(jpeg_folder, request):
    """Two GPUs: each pipeline's batches on its own device (torch), and one global JAX array
    split over both GPUs, equal to the CPU pipelines' batches."""
    if _gpu_count() < 2:
        pytest.skip("fewer than two GPUs: multi-GPU test skipped")
    torch = pytest.importorskip("torch")
    from stoker.plugins.torch import GenericIterator
    it = GenericIterator([_shard_pipe(jpeg_folder, g, g) for g in range(2)], ["data", "label"],
                         reader_name="reader")
    cpu = GenericIterator([_shard_pipe(jpeg_folder, None, g) for g in range(2)],
                          ["data", "label"], reader_name="reader")
    for step, ref in zip(it, cpu):
        for g in range(2):
            assert step[g]["data"].device == torch.device("cuda", g)
            diff = (step[g]["data"].cpu().double() - ref[g]["data"].double()).abs().mean()
            assert float(diff) <= 2.0
            assert torch.equal(step[g]["label"], ref[g]["label"])
    assert torch.cuda.current_device() == 0  # stoker left the thread's device alone
    jax = pytest.importorskip("jax")
    gpus = [d for d in jax.devices() if d.platform == "gpu"]
    if len(gpus) < 2:
        pytest.skip("JAX sees fewer than two GPUs")
    from jax.sharding import Mesh, NamedSharding, PartitionSpec
    from stoker.plugins.jax import Iterator
    sharding = NamedSharding(Mesh(np.array(gpus[:2]), ("batch",)), PartitionSpec("batch"))
    jit = Iterator([_shard_pipe(jpeg_folder, g, g) for g in range(2)], ["data", "label"],
                   reader_name="reader", sharding=sharding)
    request.addfinalizer(lambda: torch.cuda.set_device(0))  # JAX may leave GPU 1 current
    cpu = GenericIterator([_shard_pipe(jpeg_folder, None, g) for g in range(2)],
                          ["data", "label"], reader_name="reader")
    for step, ref in zip(jit, cpu):
        a = step["data"]
        assert a.shape == (8, 32, 32, 3) and a.sharding.device_set == set(gpus[:2])
        expect = np.concatenate([ref[g]["data"].numpy() for g in range(2)])
        assert np.abs(np.asarray(a, np.float64) - expect).mean() <= 2.0
        np.testing.assert_array_equal(np.asarray(step["label"]),
                                      np.concatenate([ref[g]["label"].numpy() for g in range(2)]))
