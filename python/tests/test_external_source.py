"""fn.external_source without copying (no_copy=True) and with the copy made when fed (the
default), on the CPU; the GPU side is in test_gpu_external_source.py."""

import gc
import weakref

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn
from stoker.external import _from_cuda_array_interface


def _pipe(source, batch_size=2, **kwargs):
    pipe = stoker.Pipeline(batch_size=batch_size, num_threads=1, seed=1)
    with pipe:
        pipe.set_outputs(fn.external_source(source, **kwargs))
    return pipe


def _ptr(a):
    return a.__array_interface__["data"][0]


def test_no_copy_outputs_the_fed_arrays_themselves():
    fed = []

    def source():
        batch = [np.full((3, 4), len(fed) + i, np.uint8) for i in range(2)]
        fed.append(batch)
        return batch

    pipe = _pipe(source, no_copy=True)
    for it in range(3):
        (out,) = pipe.run()
        for i in range(2):
            assert out.data_ptr(i) == _ptr(fed[it][i])
            np.testing.assert_array_equal(np.asarray(out[i]), fed[it][i])


def test_no_copy_single_array_batch_is_sliced_in_place():
    arrays = [np.arange(24, dtype=np.float32).reshape(2, 3, 4) + k for k in range(2)]
    pipe = _pipe(arrays, no_copy=True, cycle=True)
    for it in range(4):
        (out,) = pipe.run()
        a = arrays[it % 2]
        assert [out.data_ptr(i) for i in range(2)] == [_ptr(a), _ptr(a) + a[0].nbytes]
        np.testing.assert_array_equal(out.as_array(), a)


def test_no_copy_keeps_arrays_alive_until_the_pipeline_is_done_then_lets_them_go():
    refs = []

    def source():
        batch = np.full((2, 8), len(refs), np.int32)
        refs.append(weakref.ref(batch))
        return batch  # the source keeps no reference

    pipe = _pipe(source, no_copy=True)
    outs = [pipe.run()[0] for _ in range(3)]
    gc.collect()
    for k, out in enumerate(outs):
        assert refs[k]() is not None  # the output views it
        np.testing.assert_array_equal(out.as_array(), np.full((2, 8), k))
    del outs, out
    pipe.run()  # releases what the pipeline no longer uses
    gc.collect()
    assert refs[0]() is None and refs[1]() is None and refs[2]() is None
    pipe.close()
    gc.collect()
    assert all(r() is None for r in refs)


def test_default_copies_when_fed_so_the_source_may_reuse_its_buffer():
    buffer = np.zeros((2, 5), np.int16)
    calls = []

    def source():
        buffer[:] = len(calls)  # the same array, overwritten on every call
        calls.append(1)
        return buffer

    pipe = _pipe(source)  # prefetches: several calls happen before the first output is used
    for it in range(5):
        (out,) = pipe.run()
        assert out.data_ptr(0) != _ptr(buffer)
        np.testing.assert_array_equal(out.as_array(), np.full((2, 5), it))
    assert len(calls) > 5 - 1


def test_torch_cpu_tensors_are_taken_without_a_copy():
    torch = pytest.importorskip("torch")
    fed = []

    def source():
        fed.append([torch.arange(6, dtype=torch.float32) * (len(fed) + i) for i in range(2)])
        return fed[-1]

    pipe = _pipe(source, no_copy=True)
    for it in range(2):
        (out,) = pipe.run()
        assert [out.data_ptr(i) for i in range(2)] == [t.data_ptr() for t in fed[it]]
        np.testing.assert_array_equal(np.asarray(out[1]), fed[it][1].numpy())


def test_read_only_arrays_and_non_contiguous_arrays_are_taken():
    base = np.arange(48, dtype=np.uint8).reshape(2, 4, 6)
    ro = base.copy()
    ro.flags.writeable = False
    strided = base[:, :, ::2]  # not contiguous: made contiguous (a copy) first
    for data, expect in ((ro, ro), (strided, strided), ([strided[0], strided[1]], strided)):
        (out,) = _pipe((lambda d: lambda: d)(data), no_copy=True).run()
        np.testing.assert_array_equal(out.as_array(), expect)


def test_bad_batches_are_refused_with_clear_errors():
    with pytest.raises(ValueError, match="fed a batch of 3 samples, but the pipeline's "
                                         "batch_size is 2"):
        _pipe(lambda: np.zeros((3, 2), np.uint8), no_copy=True).run()
    with pytest.raises(TypeError, match="sample 1 has dtype float32, sample 0 has uint8"):
        _pipe(lambda: [np.zeros(2, np.uint8), np.zeros(2, np.float32)]).run()
    with pytest.raises(ValueError, match="device must be 'cpu' or 'gpu'"):
        _pipe(lambda: np.zeros((2, 2)), device="mixed")

    class CudaOnly:  # CUDA array interface and nothing else
        __cuda_array_interface__ = {"shape": (2,), "typestr": "<f4", "data": (1 << 20, False),
                                    "version": 3}

    with pytest.raises(TypeError, match="runs on the CPU but got GPU data \\(CudaOnly\\); use "
                                        "device='gpu'"):
        _pipe(lambda: [CudaOnly(), CudaOnly()]).run()


def test_gpu_source_without_a_gpu_says_so():
    with pytest.raises(ValueError, match="but the pipeline has no GPU \\(device_id=None\\)"):
        _pipe(lambda: np.zeros((2, 2)), device="gpu").build()


def test_cuda_array_interface_is_checked():
    class Fake:
        pass

    where = "external_source 'x'"
    ok = {"shape": (2, 3), "typestr": "<f2", "data": (4096, False), "version": 3,
          "strides": (6, 2), "stream": 7}
    waits = set()
    assert _from_cuda_array_interface(Fake(), ok, where, waits)[:3] == (4096, (2, 3), "float16")
    assert waits == {7}
    with pytest.raises(TypeError, match="samples must be C-contiguous \\(got strides \\(2, 4\\)"):
        _from_cuda_array_interface(Fake(), {**ok, "strides": (2, 4)}, where, set())
    with pytest.raises(ValueError, match="gives stream 0, which the protocol forbids"):
        _from_cuda_array_interface(Fake(), {**ok, "stream": 0}, where, set())


def test_release_borrowed_is_safe_to_call_any_time():
    _stoker.release_borrowed()
    _stoker.release_borrowed(wait=True)
