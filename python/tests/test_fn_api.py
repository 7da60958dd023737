"""fn.* is generated from the native schemas; misuse gives errors naming the operator and the
line that defined it."""

import inspect

import pytest

import stoker
from stoker import fn, types


def test_signatures_and_docs_come_from_schemas():
    sig = inspect.signature(fn.decoders.image)
    assert list(sig.parameters)[:4] == ["encoded", "output_type", "adjust_orientation",
                                        "max_pixels"]
    assert sig.parameters["output_type"].default == "RGB"
    sig = inspect.signature(fn.random_resized_crop)
    assert sig.parameters["size"].default is inspect.Parameter.empty  # required
    assert "torchvision's algorithm" in fn.random_resized_crop.__doc__
    assert "per-sample tensor allowed" in fn.crop_mirror_normalize.__doc__
    for name in ["readers.file", "decoders.image", "random_resized_crop", "resize", "crop",
                 "flip", "crop_mirror_normalize", "random.coin_flip", "random.uniform"]:
        obj = fn
        for part in name.split("."):
            obj = getattr(obj, part)
        assert obj.__qualname__ == name
        assert obj.__doc__


def _build_error(define):
    pipe = stoker.Pipeline(batch_size=2)
    with pipe:
        outs = define()
        pipe.set_outputs(*outs)
    with pytest.raises(Exception) as e:
        pipe.build()
    return e


def test_unknown_argument_suggests_and_names_the_line():
    def define():
        define.line = inspect.currentframe().f_lineno + 1
        return fn.readers.file(file_rot="/x")
    e = _build_error(define)
    assert e.type is TypeError
    assert (f"readers.file (defined at {__file__}:{define.line}): unknown argument 'file_rot'; "
            f"did you mean 'file_root'?") == str(e.value)


def test_missing_required_argument_and_wrong_device():
    e = _build_error(lambda: [fn.random_resized_crop(fn.random.uniform())])
    assert e.type is TypeError and "missing required argument 'size'" in str(e.value)
    e = _build_error(lambda: [fn.peek_image_shape(fn.random.uniform(), device="gpu")])
    assert e.type is ValueError and "no 'gpu' backend; this operator runs on: cpu" in str(e.value)


def test_constant_only_argument_rejects_a_tensor():
    e = _build_error(lambda: [fn.resize(fn.random.uniform(), mode=fn.random.uniform())])
    assert "argument 'mode' must be a constant" in str(e.value)


def test_call_errors_at_definition_time():
    with pytest.raises(RuntimeError, match="outside a pipeline definition"):
        fn.random.coin_flip()
    with stoker.Pipeline(batch_size=1):
        with pytest.raises(TypeError, match=r"fn.resize expects 1 input\(s\) \(images\), got 0"):
            fn.resize()
        with pytest.raises(TypeError, match="fn.resize: input 0 must be a DataNode .* or a "
                                            "number or numeric array .*, got str"):
            fn.resize("images.jpg")
        node = fn.random.coin_flip()
        with pytest.raises(TypeError, match="no truth value"):
            bool(node)


def test_enum_and_tuple_arguments_convert():
    pipe = stoker.Pipeline(batch_size=2, seed=1)
    with pipe:
        src = fn.external_source(lambda: [__import__("numpy").zeros((4, 6, 3), "uint8")] * 2,
                                 layout="HWC")
        out = fn.crop_mirror_normalize(src, dtype=types.FLOAT16, crop=(2, 3), mean=(1, 2, 3))
        pipe.set_outputs(out)
    (b,) = pipe.run()
    assert b.as_array().shape == (2, 3, 2, 3)
    assert str(b.dtype) == "float16"


def test_dali_constants_work_as_arguments():
    import numpy as np

    img = np.random.default_rng(0).integers(0, 256, (10, 12, 3), dtype=np.uint8)
    pipe = stoker.Pipeline(batch_size=1, seed=1)
    with pipe:
        src = fn.external_source(lambda: [img], layout="HWC")
        a = fn.resize(src, size=5, interp_type=types.INTERP_LINEAR)
        b = fn.crop_mirror_normalize(src, output_layout=types.NHWC, dtype=types.FLOAT)
        pipe.set_outputs(a, b)
    a, b = pipe.run()
    assert a.at(0).shape == (5, 5, 3)
    assert b.at(0).shape == (10, 12, 3) and b.at(0).dtype == np.float32
    np.testing.assert_array_equal(b.at(0), img.astype(np.float32))
    e = _build_error(lambda: [fn.resize(fn.random.uniform(), interp_type="bicubic2")])
    assert ("resize: interp_type 'bicubic2' is not supported (nn, linear, triangular, cubic, "
            "lanczos3, gaussian)") in str(e.value)


def test_dir_lists_the_operators_only():
    names = set(dir(fn))
    assert {"resize", "readers", "decoders", "random", "external_source"} <= names
    assert not {"np", "sys", "inspect", "Enum", "DataNode", "ExternalSource"} & names
    assert {"file", "tfrecord", "video"} <= set(dir(fn.readers))
    assert "choice" in dir(fn.random)


def test_tfrecord_help_shows_what_a_user_passes():
    import os
    doc = fn.readers.tfrecord.__doc__
    assert "`features` maps keys" in doc
    args = doc.split("Keyword arguments:")[1]
    assert "index_path" in args and "feature_names" not in args and "feature_types" not in args
    assert fn.readers.tfrecord.__name__ == "tfrecord"
    import stoker
    assert os.path.exists(os.path.join(os.path.dirname(stoker.__file__), "py.typed"))


def test_gpu_of_a_value_already_there_is_itself():
    """As DALI: .gpu() on a GPU value adds nothing (old scripts call it on GPU outputs)."""
    pipe = stoker.Pipeline(batch_size=1, device_id=0)
    with pipe:
        x = fn.external_source(lambda: [[1]])
        g = x.gpu()
        assert g is not x and g.gpu() is g
        r = fn.resize(g, size=(2, 2))
        assert r.gpu() is r
