"""fn.external_source(device="gpu"): CUDA data from torch, cupy and CUDA-array-interface
producers taken without a copy and ordered after the producer's stream (no host sync), the copy
made at feed time by default, host data uploaded, epochs. Skipped without a CUDA device."""

import gc
import weakref

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn

needs_gpu = pytest.mark.skipif(not _stoker.cuda_available(),
                               reason="no CUDA device: GPU test skipped")
SLEEP_CYCLES = 200_000_000  # ~0.1 s of GPU time: long enough for a missing wait to show


def _pipe(source, double=False, batch_size=2, **kwargs):
    pipe = stoker.Pipeline(batch_size=batch_size, num_threads=2, seed=1, device_id=0)
    with pipe:
        x = fn.external_source(source, device="gpu", **kwargs)
        pipe.set_outputs(x * 2 if double else x)
    return pipe


def _host(batch):
    assert batch.device == "gpu"
    return batch.as_cpu().as_array()


@needs_gpu
def test_torch_cuda_tensors_are_taken_without_a_copy():
    torch = pytest.importorskip("torch")
    fed = []

    def source():
        fed.append([torch.full((4, 5), len(fed) * 10 + i, dtype=torch.uint8, device="cuda")
                    for i in range(2)])
        return fed[-1]

    pipe = _pipe(source, no_copy=True)
    for it in range(3):
        (out,) = pipe.run()
        assert [out.data_ptr(i) for i in range(2)] == [t.data_ptr() for t in fed[it]]
        for i in range(2):  # separate tensors: a ragged-capable batch, viewed per sample
            assert torch.equal(torch.from_dlpack(out[i]), fed[it][i])


@needs_gpu
@pytest.mark.parametrize("no_copy", [True, False])
def test_the_producers_pending_work_is_waited_for(no_copy):
    """The source's tensor is written on torch's stream after ~0.1 s of GPU sleep and handed
    over at once: the pipeline's kernel must read the written values."""
    torch = pytest.importorskip("torch")
    calls = []

    def source():
        x = torch.zeros((2, 256, 256), dtype=torch.float32, device="cuda")
        torch.cuda._sleep(SLEEP_CYCLES)
        x.fill_(len(calls) + 1)
        calls.append(1)
        return x

    pipe = _pipe(source, double=True, no_copy=no_copy)
    for it in range(3):
        np.testing.assert_array_equal(_host(pipe.run()[0]), np.full((2, 256, 256), 2 * (it + 1)))


@needs_gpu
def test_the_cuda_array_interface_stream_is_waited_for():
    torch = pytest.importorskip("torch")
    side = torch.cuda.Stream()
    keep = []

    class Producer:  # only the CUDA array interface, naming the stream its data is written on
        def __init__(self, t):
            self.t = t
            self.__cuda_array_interface__ = {
                "shape": tuple(t.shape), "typestr": "<f4", "data": (t.data_ptr(), False),
                "version": 3, "strides": None, "stream": side.cuda_stream}

    def source():
        with torch.cuda.stream(side):
            x = torch.zeros((2, 128, 128), dtype=torch.float32, device="cuda")
            torch.cuda._sleep(SLEEP_CYCLES)
            x.fill_(len(keep) + 1)
        keep.append(x)
        return [Producer(x[0]), Producer(x[1])]

    pipe = _pipe(source, double=True, no_copy=True)
    for it in range(3):
        np.testing.assert_array_equal(_host(pipe.run()[0]), np.full((2, 128, 128), 2 * (it + 1)))


@needs_gpu
def test_default_copy_lets_the_source_overwrite_its_tensor():
    torch = pytest.importorskip("torch")
    buffer = torch.zeros((2, 64), dtype=torch.int32, device="cuda")
    calls = []

    def source():
        buffer.fill_(len(calls))  # the same tensor, overwritten on every call
        calls.append(1)
        return buffer

    pipe = _pipe(source)
    for it in range(5):
        (out,) = pipe.run()
        assert out.data_ptr(0) != buffer.data_ptr()
        np.testing.assert_array_equal(_host(out), np.full((2, 64), it))


@needs_gpu
def test_fresh_tensors_are_released_after_use_and_never_read_after_reuse():
    """Tensors made on every call and dropped by the source: torch's caching allocator reuses
    their memory as soon as stoker lets them go, so a release before the pipeline's kernel ran
    would show as wrong values."""
    torch = pytest.importorskip("torch")
    refs = []

    def source():
        x = torch.full((2, 1024, 1024), float(len(refs)), device="cuda")
        refs.append(weakref.ref(x))
        return x

    pipe = _pipe(source, double=True, no_copy=True)
    for it in range(20):
        out = pipe.run()[0]
        torch.cuda._sleep(SLEEP_CYCLES // 20)  # torch's stream busy while stoker works
        assert float(torch.from_dlpack(out)[1, 7, 9]) == 2.0 * it
    del out
    pipe.run()
    gc.collect()
    assert all(r() is None for r in refs[:15])  # all but the few prefetched ones are gone
    pipe.close()
    gc.collect()
    assert all(r() is None for r in refs)


@needs_gpu
def test_cupy_arrays_and_host_arrays():
    cupy = pytest.importorskip("cupy")
    fed = []

    def source():
        fed.append(cupy.arange(12, dtype=cupy.float32).reshape(2, 6) + len(fed))
        return fed[-1]

    pipe = _pipe(source, no_copy=True)
    for it in range(2):
        (out,) = pipe.run()
        assert out.data_ptr(0) == fed[it].data.ptr
        np.testing.assert_array_equal(_host(out), cupy.asnumpy(fed[it]))


@needs_gpu
def test_host_data_is_uploaded_and_epochs_end():
    batches = [[np.full((3, 3), 10 * b + i, np.uint8) for i in range(2)] for b in range(3)]
    pipe = _pipe(batches)
    for epoch in range(2):
        for b in range(3):
            (out,) = pipe.run()
            np.testing.assert_array_equal(_host(out), np.stack(batches[b]))
        with pytest.raises(StopIteration):
            pipe.run()
        pipe.reset()


@needs_gpu
def test_device_data_in_a_mixed_list_is_refused():
    torch = pytest.importorskip("torch")
    pipe = _pipe(lambda: [torch.zeros(3, device="cuda"), np.zeros(3, np.float32)])
    with pytest.raises(TypeError, match="sample 1 is in host memory, sample 0 in device memory"):
        pipe.run()
