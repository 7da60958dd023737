"""The batch API under DALI's names: TensorListCPU/TensorCPU methods, objects made from numpy,
copy_to_external and feed_ndarray, DataNode.shape()/fn.shapes, DALI's module paths and the
deprecated operator names."""

import ctypes
import importlib
import warnings

import numpy as np
import pytest

import stoker
from stoker import fn, types
from stoker.tensors import TensorCPU, TensorListCPU, TensorListGPU


def _samples():
    return [np.arange(6, dtype=np.uint8).reshape(2, 3) + i for i in range(3)]


def _run(*extra):
    @stoker.pipeline_def(batch_size=3, num_threads=1, seed=1)
    def p():
        x = fn.external_source(source=_samples, layout="HW")
        return (x,) + tuple(f(x) for f in extra)
    pipe = p()
    pipe.build()
    return pipe.run()


def test_a_batch_answers_dalis_methods():
    (b,) = _run()
    assert isinstance(b, TensorListCPU) and isinstance(b, stoker.Batch)
    assert isinstance(b, stoker.backend.TensorListCPU) and not isinstance(b, TensorListGPU)
    assert b.layout() == "HW" and b.shape() == [(2, 3)] * 3 and b.ndim() == 2
    assert b.dtype == types.UINT8 and b.dtype == np.uint8 and len(b) == 3
    assert b.is_dense_tensor()
    s = b[1]
    assert isinstance(s, TensorCPU) and s.shape() == [2, 3] and s.layout() == "HW"
    assert s.ndim() == 2 and s.source_info() == "" and s.get_property("layout") == "HW"
    assert s.get_property("source_info") is None
    np.testing.assert_array_equal(np.array(s), _samples()[1])
    np.testing.assert_array_equal(b[-1], _samples()[2])
    np.testing.assert_array_equal(b.at(2), _samples()[2])
    t = b.as_tensor()
    assert isinstance(t, TensorCPU) and t.shape() == [3, 2, 3] and t.layout() == "NHW"
    np.testing.assert_array_equal(np.array(t), np.stack(_samples()))
    r = b.as_reshaped_tensor([3, 6])
    assert r.shape() == [3, 6] and r.layout() == ""
    np.testing.assert_array_equal(np.array(r), np.stack(_samples()).reshape(3, 6))
    assert b.data_ptr() == b[0].data_ptr() and b.as_cpu() is b
    assert "DALIDataType.UINT8" in repr(b) and "num_samples=3" in repr(b)
    assert "[[0 1 2]" in str(b[0]) and 'layout="HW"' in str(b)


def test_errors_say_what_is_wrong():
    (b,) = _run()
    with pytest.raises(IndexError, match="sample index 3 out of range for a batch of 3"):
        b[3]
    with pytest.raises(TypeError, match="sample indices are integers, got str"):
        b["0"]
    with pytest.raises(ValueError, match="cannot view a batch of 18 elements as a tensor of 10"):
        b.as_reshaped_tensor([10])
    with pytest.raises(ValueError, match="unknown property 'colour'"):
        b[0].get_property("colour")
    with pytest.raises(TypeError, match="expected an address"):
        b.copy_to_external("nowhere")
    ragged = TensorListCPU([np.zeros((1, 2), np.float32), np.zeros((2, 2), np.float32)])
    with pytest.raises(ValueError, match="not uniform"):
        ragged.as_tensor()


def test_copy_to_external_and_feed_ndarray():
    (b,) = _run()
    out = np.zeros((3, 2, 3), np.uint8)
    b.copy_to_external(out.ctypes.data_as(ctypes.c_void_p))
    np.testing.assert_array_equal(out, np.stack(_samples()))
    one = np.zeros((2, 3), np.uint8)
    b[2].copy_to_external(one.ctypes.data)
    np.testing.assert_array_equal(one, _samples()[2])
    torch = pytest.importorskip("torch")
    from stoker.plugin.pytorch import feed_ndarray, to_torch_type
    assert to_torch_type[b.dtype] == torch.uint8 and to_torch_type[types.FLOAT] == torch.float32
    t = feed_ndarray(b, torch.zeros((3, 2, 3), dtype=torch.uint8))
    assert t.numpy().tolist() == np.stack(_samples()).tolist()
    with pytest.raises(ValueError, match=r"shapes do not match: .* \[3, 2, 3\].* \[3, 6\]"):
        feed_ndarray(b, torch.zeros((3, 6), dtype=torch.uint8))
    with pytest.raises(TypeError, match="element type"):
        feed_ndarray(b, torch.zeros((3, 2, 3), dtype=torch.float32))


def test_tensors_made_from_numpy():
    a = np.arange(12, dtype=np.float32).reshape(3, 1, 4)
    tl = TensorListCPU(a, "HW")
    assert tl.shape() == [(1, 4)] * 3 and tl.layout() == "HW" and tl.is_dense_tensor()
    np.testing.assert_array_equal(tl.as_array(), a)
    np.testing.assert_array_equal(tl.as_tensor(), a)
    tl2 = TensorListCPU([np.ones(2, np.int32), np.ones(5, np.int32)])
    assert tl2.shape() == [(2,), (5,)] and not tl2.is_dense_tensor()
    t = TensorCPU(a[0], "HW")
    assert t.shape() == [1, 4] and t.squeeze() is True and t.shape() == [4]
    assert t.layout() == "W" and t.squeeze() is False
    t.set_layout("X")
    assert t.layout() == "X"
    with pytest.raises(ValueError, match="layout 'XY' has 2 dimensions, the tensor 1"):
        t.set_layout("XY")
    # they feed pipelines like any array
    @stoker.pipeline_def(batch_size=3, num_threads=1)
    def p():
        return fn.external_source(source=lambda: [tl[i] for i in range(3)])
    pipe = p()
    pipe.build()
    np.testing.assert_array_equal(pipe.run()[0].as_array(), a)


def test_data_node_shape_and_shapes_operator():
    b, s, s32 = _run(lambda x: x.shape(), lambda x: fn.shapes(x, dtype=types.INT32))
    assert s.dtype == np.int64 and s32.dtype == np.int32
    assert s.as_array().tolist() == [[2, 3]] * 3 == s32.as_array().tolist()


def test_dalis_module_paths():
    for path, names in {
        "stoker.plugin.pytorch": ["DALIGenericIterator", "DALIClassificationIterator",
                                  "DALIRaggedIterator", "LastBatchPolicy", "feed_ndarray",
                                  "to_torch_type", "TorchPythonFunction", "TensorGPU"],
        "stoker.plugin.pytorch.fn": ["torch_python_function"],
        "stoker.plugin.base_iterator": ["LastBatchPolicy"],
        "stoker.plugin.jax": ["DALIGenericIterator"],
        "stoker.tensors": ["TensorCPU", "TensorGPU", "TensorListCPU", "TensorListGPU"],
        "stoker.backend": ["TensorCPU", "TensorGPU", "TensorListCPU", "TensorListGPU"],
        "stoker.data_node": ["DataNode"],
        "stoker.external_source": ["ExternalSource", "external_source"],
        "stoker.pipeline": ["Pipeline", "pipeline_def", "DataNode"],
    }.items():
        try:
            module = importlib.import_module(path)
        except ImportError as e:  # the framework is not installed
            assert "torch" in str(e) or "jax" in str(e), e
            continue
        assert all(hasattr(module, n) for n in names), (path, names)


def test_deprecated_names_warn_as_dali_and_run():
    @stoker.pipeline_def(batch_size=2, num_threads=1, seed=1)
    def p():
        return fn.coin_flip(), fn.transform_translation(offset=[1, 2]), fn.random.coin_flip()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        pipe = p()
        pipe.build()
    messages = [str(x.message) for x in w if x.category is DeprecationWarning]
    assert ("WARNING: `stoker.fn.coin_flip` is now deprecated. Use `stoker.fn.random.coin_flip` "
            "instead.") in messages
    assert any("fn.transform_translation" in m and "fn.transforms.translation" in m
               for m in messages)
    flips, translation, flips2 = pipe.run()
    assert translation.as_array()[0].tolist() == [[1, 0, 1], [0, 1, 2]]
    assert set(flips.as_array().tolist()) <= {0, 1}
    assert "file_reader" in dir(fn) and fn.experimental.decoders.image is not None
    assert stoker.ops.FileReader._op == "readers.file"
    assert stoker.ops.experimental.decoders.Video._op == "decoders.video"
    assert stoker.ops.MXNetReader._op == "readers.mxnet"


def test_gpu_batches_copy_out_and_answer_dalis_methods():
    if not stoker._stoker.cuda_available():
        pytest.skip("no CUDA device: GPU test skipped")
    torch = pytest.importorskip("torch")
    from stoker.plugin.pytorch import feed_ndarray

    @stoker.pipeline_def(batch_size=3, num_threads=1, device_id=0, seed=1)
    def p():
        x = fn.external_source(source=_samples, layout="HW").gpu()
        return x, x.shape(device="gpu"), fn.shapes(x)
    pipe = p()
    pipe.build()
    b, s, s2 = pipe.run()
    assert isinstance(b, TensorListGPU) and b.layout() == "HW" and b.shape() == [(2, 3)] * 3
    assert isinstance(b[0], stoker.tensors.TensorGPU) and b[0].shape() == [2, 3]
    assert b.at(1).shape() == [2, 3] and b.device_id() == 0
    np.testing.assert_array_equal(b.as_cpu().as_array(), np.stack(_samples()))
    np.testing.assert_array_equal(b.as_tensor().as_cpu(), np.stack(_samples()))
    assert s.device == "gpu" and s.as_cpu().as_array().tolist() == [[2, 3]] * 3
    assert s2.as_cpu().as_array().tolist() == [[2, 3]] * 3
    out = torch.zeros((3, 2, 3), dtype=torch.uint8, device="cuda")
    feed_ndarray(b, out, cuda_stream=torch.cuda.current_stream())
    torch.cuda.synchronize()
    assert out.cpu().numpy().tolist() == np.stack(_samples()).tolist()
    one = torch.zeros((2, 3), dtype=torch.uint8, device="cuda")
    feed_ndarray(b[2], one)
    assert one.cpu().numpy().tolist() == _samples()[2].tolist()
    host = np.zeros((3, 2, 3), np.uint8)  # a GPU batch copied into host memory
    b.copy_to_external(host.ctypes.data)
    np.testing.assert_array_equal(host, np.stack(_samples()))
