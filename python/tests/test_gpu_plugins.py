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
