"""crop and flip on volumes and CHW images (ops/geometry/crop_nd.cpp): the layouts they keep,
their errors, and the GPU backends against the CPU twins (the values against DALI 2.4:
parity/test_parity_crop_volumes.py)."""

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn

needs_gpu = pytest.mark.skipif(not _stoker.cuda_available(),
                               reason="needs a CUDA device (the GPU backends)")

VOL = [np.arange(4 * 5 * 6 * 2, dtype=np.uint8).reshape(4, 5, 6, 2),
       np.arange(3 * 7 * 4 * 2, dtype=np.uint8).reshape(3, 7, 4, 2)]


def _run(make, data=VOL, layout="DHWC", device="cpu"):
    pipe = stoker.Pipeline(batch_size=len(data), num_threads=2,
                           device_id=0 if device == "gpu" else None)
    with pipe:
        kw = {"layout": layout} if layout else {}
        x = fn.external_source(source=lambda: [a.copy() for a in data], batch=True, **kw)
        pipe.set_outputs(make(x.gpu() if device == "gpu" else x))
    out, = pipe.run()
    if device == "gpu":
        out = out.as_cpu()
    return [np.array(out.at(i)) for i in range(len(data))], out.layout()


def test_a_volume_keeps_its_layout_and_is_cut_in_depth():
    got, layout = _run(lambda x: fn.crop(x, crop=(2, 3, 4), crop_pos_z=1.0, crop_pos_y=0.0))
    assert layout == "DHWC"
    np.testing.assert_array_equal(got[0], VOL[0][2:4, 0:3, 1:5])
    got, layout = _run(lambda x: fn.crop(x, crop=(2, 3, 4)), layout="")  # 4-D: DHWC
    assert layout == "DHWC" and got[1].shape == (2, 3, 4, 2)
    cdhw = [np.ascontiguousarray(v.transpose(3, 0, 1, 2)) for v in VOL]
    got, layout = _run(lambda x: fn.crop(x, crop=(3, 4)), data=cdhw, layout="CDHW")
    assert layout == "CDHW"
    np.testing.assert_array_equal(got[0], cdhw[0][:, :, 1:4, 1:5])


def test_flip_depthwise_reverses_the_planes():
    got, _ = _run(lambda x: fn.flip(x, horizontal=0, depthwise=1))
    np.testing.assert_array_equal(got[0], VOL[0][::-1])
    got, _ = _run(lambda x: fn.flip(x, vertical=1, depthwise=1))  # horizontal=1 by default
    np.testing.assert_array_equal(got[1], VOL[1][::-1, ::-1, ::-1])
    # Without a layout 4-D samples are sequences of HWC frames: no depth to flip (DALI's).
    got, _ = _run(lambda x: fn.flip(x, horizontal=0, depthwise=1), layout="")
    np.testing.assert_array_equal(got[0], VOL[0])


@pytest.mark.parametrize("kw, message", [
    (dict(crop_d=2), "crop_d must be given with crop_h and crop_w"),
    (dict(crop=(1, 2, 3, 4)), "crop must be \\[height, width\\] or \\[depth, height, width\\]"),
    (dict(crop=(2, 2, 2), crop_d=1, crop_h=1, crop_w=1), "give either `crop` or"),
    (dict(crop=(9, 2, 2)), "sample 0: crop: the window \\[-3, 6\\) on axis D leaves the input's "
                           "extent 4 \\(out_of_bounds_policy='error'"),
    (dict(crop=(2, 2, 2), crop_pos_z=1.5), "crop_pos_z must be in \\[0, 1\\], got 1.5"),
    (dict(crop=(9, 2, 2), out_of_bounds_policy="pad", fill_values=(1, 2, 3)),
     "fill_values needs 1 or 2 values \\(one per channel\\), got 3"),
    (dict(out_of_bounds_policy="mirror"), "out_of_bounds_policy must be 'error', 'pad'"),
])
def test_bad_arguments_are_named(kw, message):
    with pytest.raises(ValueError, match=message):
        _run(lambda x: fn.crop(x, **kw))


def test_bad_layouts_are_named():
    with pytest.raises(ValueError,
                       match="crop: expected a layout among HWC, CHW, DHWC, CDHW, CFHW \\(or F"):
        _run(lambda x: fn.crop(x, crop=(2, 2)), data=[v[..., 0] for v in VOL], layout="DHW")
    with pytest.raises(ValueError, match="flip: expected layout HWC, CHW, DHWC or CDHW"):
        _run(lambda x: fn.flip(x), data=[v[..., 0] for v in VOL], layout="DHW")


@needs_gpu
@pytest.mark.parametrize("layout", ["DHWC", "CDHW", "CHW"])
@pytest.mark.parametrize("make", [
    lambda x: fn.crop(x, crop=(3, 4), crop_pos_x=0.2),
    lambda x: fn.crop(x, crop=(6, 9, 3), out_of_bounds_policy="pad", fill_values=(5, 250)),
    lambda x: fn.crop(x, crop=(6, 9, 9), crop_pos_y=0.3, out_of_bounds_policy="reflect_101"),
    lambda x: fn.crop(x, crop=(6, 2, 9), out_of_bounds_policy="trim_to_shape"),
    lambda x: fn.flip(x, vertical=1, depthwise=1),
], ids=["crop", "pad", "reflect_101", "trim", "flip"])
def test_the_gpu_backends_equal_the_cpu(layout, make):
    data = {"DHWC": VOL, "CDHW": [np.ascontiguousarray(v.transpose(3, 0, 1, 2)) for v in VOL],
            "CHW": [np.ascontiguousarray(v[1].transpose(2, 0, 1)) for v in VOL]}[layout]
    cpu, cpu_layout = _run(make, data, layout)
    gpu, gpu_layout = _run(make, data, layout, device="gpu")
    assert cpu_layout == gpu_layout == layout
    for a, b in zip(cpu, gpu):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=needs_gpu)])
def test_cmn_of_chw_equals_cmn_of_hwc_and_keeps_the_layout_asked(device):
    hwc = [v[1] for v in VOL]
    chw = [np.ascontiguousarray(v.transpose(2, 0, 1)) for v in hwc]
    for layout in ("CHW", "HWC", ""):
        def make(x):
            return fn.crop_mirror_normalize(x, crop=(3, 4), mirror=1, mean=(3.0, 4.0),
                                            output_layout=layout)
        a, la = _run(make, hwc, "HWC", device)
        b, lb = _run(make, chw, "CHW", device)
        assert (la, lb) == ((layout, layout) if layout else ("HWC", "CHW"))
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y if layout else y.transpose(1, 2, 0))


def test_a_chw_sample_too_small_is_skipped_under_on_error_skip(tmp_path):
    for i, size in enumerate([6, 6, 2, 6, 6, 6]):  # the third is smaller than the crop
        np.save(tmp_path / f"s{i}.npy", np.full((2, size, size), i, np.uint8))
    pipe = stoker.Pipeline(batch_size=3, num_threads=2, on_error="skip")
    with pipe:
        x = fn.readers.numpy(file_root=str(tmp_path))
        pipe.set_outputs(fn.crop(fn.reshape(x, layout="CHW"), crop=(4, 4)))
    with pytest.warns(RuntimeWarning, match="s2.npy"):
        (out,) = pipe.run()
    assert out.layout() == "CHW"
    got = [int(np.array(out.at(i))[0, 0, 0]) for i in range(3)]
    assert 2 not in got and all(np.array(out.at(i)).shape == (2, 4, 4) for i in range(3))


def test_cmn_fill_values_saturate_and_per_sample_means_may_differ_in_count():
    # DALI wraps a fill value out of the output type's range (300.7 as uint8 is 44): stoker
    # saturates (and truncates toward zero inside it, as DALI).
    got, _ = _run(lambda x: fn.crop_mirror_normalize(
        x, crop=(9, 9), output_layout="", out_of_bounds_policy="pad", fill_values=(300.7, -4.9),
        dtype=stoker.types.UINT8), layout="DHWC")
    assert got[0][0, 0, 0].tolist() == [255, 0]
    means = [np.array([1.0], np.float32), np.array([2.0, 3.0], np.float32)]
    got, _ = _run(lambda x: fn.crop_mirror_normalize(
        x, output_layout="", mean=fn.external_source(source=lambda: means, batch=True)))
    np.testing.assert_array_equal(got[0], VOL[0].astype(np.float32) - 1)
    np.testing.assert_array_equal(got[1], VOL[1].astype(np.float32) - [2, 3])


CMN_GPU = [
    ("DHWC", dict(output_layout="CDHW", crop=(2, 3, 4), mirror=1, mean=(1.0, 2.0))),
    ("CDHW", dict(output_layout="", crop=(6, 9, 3), out_of_bounds_policy="pad",
                  fill_values=(5, 250), dtype=stoker.types.UINT8)),
    ("CHW", dict(crop=(9, 3), out_of_bounds_policy="pad", fill_values=7, pad_output=True)),
    ("HWC", dict(crop=(9, 3), out_of_bounds_policy="pad", fill_values=(1, 2), mirror=1,
                 pad_output=True, output_layout="HWC")),
    ("HWC", dict(crop=(2, 30), out_of_bounds_policy="trim_to_shape", dtype=stoker.types.FLOAT16)),
]


@needs_gpu
@pytest.mark.parametrize("layout,kw", CMN_GPU, ids=[str(c) for c in CMN_GPU])
def test_cmn_gpu_equals_the_cpu(layout, kw):
    data = {"DHWC": VOL, "CDHW": [np.ascontiguousarray(v.transpose(3, 0, 1, 2)) for v in VOL],
            "CHW": [np.ascontiguousarray(v[1].transpose(2, 0, 1)) for v in VOL],
            "HWC": [v[1] for v in VOL]}[layout]
    for dtype in (np.uint8, np.int32):
        typed = [a.astype(dtype) for a in data]
        cpu, cpu_layout = _run(lambda x: fn.crop_mirror_normalize(x, **kw), typed, layout)
        gpu, gpu_layout = _run(lambda x: fn.crop_mirror_normalize(x, **kw), typed, layout, "gpu")
        assert cpu_layout == gpu_layout
        for a, b in zip(cpu, gpu):
            np.testing.assert_allclose(a.astype(np.float32), b.astype(np.float32), atol=1e-5)


@needs_gpu
def test_a_fused_gpu_chain_takes_chw_images_unfused():
    chw = [np.ascontiguousarray(v[1].transpose(2, 0, 1)) for v in VOL]

    def make(x):
        return fn.crop_mirror_normalize(fn.resize(x, size=(6, 8)), crop=(4, 4), mirror=1)
    cpu, _ = _run(make, chw, "CHW")
    gpu, layout = _run(make, chw, "CHW", "gpu")
    assert layout == "CHW"
    for a, b in zip(cpu, gpu):
        np.testing.assert_allclose(a, b, atol=1e-3)


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=needs_gpu)])
def test_crop_and_slice_dtype_saturate_also_when_padding(device):
    # DALI wraps out-of-range values in its padding kernel (1501.9 -> 221); one rule here.
    data = [np.array([[[1501.9], [-3.7], [2.9], [70000.5]]], np.float32)]
    got, _ = _run(lambda x: fn.crop(x, crop=(1, 6), out_of_bounds_policy="pad", fill_values=9.9,
                                    dtype=stoker.types.UINT8), data, "HWC", device)
    assert got[0].ravel().tolist() == [9, 255, 0, 2, 255, 9]
    got, _ = _run(lambda x: fn.slice(x, 0, 4, axes=[1], dtype=stoker.types.FLOAT16), data, "HWC",
                  device)
    assert got[0].dtype == np.float16
    assert got[0].ravel().tolist() == [np.float16(1501.9), np.float16(-3.7), np.float16(2.9),
                                       65504.0]
