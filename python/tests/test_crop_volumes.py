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
    (dict(crop=(9, 2, 2)), "crop: sample 0: the window \\[-3, 6\\) on axis D leaves the input's "
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
