"""tensor_resize, resize_crop_mirror (and DALI's deprecated fast_resize_crop_mirror) and
experimental.resize: their relation to resize (the same resampling), the size rules, frames,
channels and volumes, errors naming the operator, and the GPU backends against their CPU twins
(skipped without a device). test_parity_resize_family.py compares them with DALI."""

import warnings

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn, ops, types
from op_util import run_op

needs_gpu = pytest.mark.skipif(not _stoker.cuda_available(),
                               reason="no CUDA device: GPU test skipped")


def _images(seed=3):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, (h, w, 3)).astype(np.uint8) for h, w in ((37, 53), (20, 31))]


def _run(define, images, layout="HWC", device="cpu"):
    """define(x) over `images` (moved to the GPU first with device="gpu"): every output."""
    pipe = stoker.Pipeline(batch_size=len(images), num_threads=2, seed=1,
                           device_id=0 if device == "gpu" else None)
    with pipe:
        x = fn.external_source(lambda: images, layout=layout)
        out = define(x.gpu() if device == "gpu" else x)
        pipe.set_outputs(*(out if isinstance(out, (list, tuple)) else [out]))
    res = pipe.run()
    return [[np.array(b.as_cpu()[i] if device == "gpu" else b[i]) for i in range(len(images))]
            for b in res]


def _near(a, b, atol=1, share=0.0):
    for x, y in zip(a, b):
        assert x.shape == y.shape and x.dtype == y.dtype, (x.shape, y.shape, x.dtype, y.dtype)
        diff = np.abs(x.astype(np.float64) - y.astype(np.float64))
        assert np.mean(diff > atol) <= share, (diff.max(), np.mean(diff > atol))


# -- experimental.resize ---------------------------------------------------------------------
def test_experimental_resize_is_resize():
    kw = dict(size=[30, 41], interp_type=types.INTERP_CUBIC, mode="not_larger")
    (a, b) = _run(lambda x: (fn.experimental.resize(x, **kw), fn.resize(x, **kw)), _images())
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert ops.experimental.Resize is not ops.Resize


# -- resize_crop_mirror ------------------------------------------------------------------------
@pytest.mark.parametrize("mirror", [0, 1, 2, 3])
def test_resize_crop_mirror_is_resize_crop_flip_within_a_level(mirror):
    # The same sampling grid restricted to the window: within float rounding of the chain.
    (a, b) = _run(lambda x: (
        fn.resize_crop_mirror(x, size=[30, 40], crop=[20, 24], crop_pos_x=0.3, crop_pos_y=0.6,
                              mirror=mirror),
        fn.flip(fn.crop(fn.resize(x, size=[30, 40]), crop=[20, 24], crop_pos_x=0.3,
                        crop_pos_y=0.6), horizontal=mirror & 1, vertical=mirror >> 1)),
        _images())
    _near(a, b, atol=1)


def test_resize_crop_mirror_without_crop_is_resize():
    # The region is kept in float32 (as DALI keeps it): a level apart on a few values.
    (a, b) = _run(lambda x: (fn.resize_crop_mirror(x, resize_shorter=25),
                             fn.resize(x, resize_shorter=25)), _images())
    _near(a, b, atol=1)
    (a, b) = _run(lambda x: (fn.resize_crop_mirror(x, size=[30, 40]), fn.resize(x, size=[30, 40])),
                  _images())
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_resize_crop_mirror_window_rules():
    img = [np.arange(20 * 20 * 1, dtype=np.uint8).reshape(20, 20, 1)]
    # crop extents truncate; crop_h/crop_w of 0 keep the resized extent; a window larger than
    # the image repeats its edges
    (a,) = run_op("resize_crop_mirror", img, size=[20, 20], crop=[10.9, 5.2])
    assert a.shape == (10, 5, 1)
    (a,) = run_op("resize_crop_mirror", img, size=[20, 20], crop_h=0, crop_w=7)
    assert a.shape == (20, 7, 1)
    (a,) = run_op("resize_crop_mirror", img, size=[20, 20], crop=[24, 24],
                  interp_type=types.INTERP_NN)
    np.testing.assert_array_equal(a[2:22, 2:22], img[0])
    np.testing.assert_array_equal(a[0, 2:22], img[0][0])
    # the anchor: pos * (extent - crop) from the float32 position, rounded (0.9 * 5 -> 4) or
    # truncated
    for rounding, want in (("round", 4), ("truncate", 4)):
        (a,) = run_op("resize_crop_mirror", img, size=[20, 20], crop=[15, 15], crop_pos_y=0.9,
                      crop_pos_x=0.3, rounding=rounding, interp_type=types.INTERP_NN)
        np.testing.assert_array_equal(a, img[0][want:want + 15, 2 if rounding == "round"
                                                 else 1:][:, :15])


def test_resize_crop_mirror_per_sample_arguments():
    imgs = _images()

    def define(x):
        mirror = fn.external_source(lambda: [np.int32(1), np.int32(2)])
        crop = fn.external_source(lambda: [np.float32([10, 12]), np.float32([8, 9])])
        return fn.resize_crop_mirror(x, size=[20, 20], crop=crop, mirror=mirror,
                                     interp_type=types.INTERP_NN)

    (a,) = _run(define, imgs)
    (r,) = _run(lambda x: fn.resize(x, size=[20, 20], interp_type=types.INTERP_NN), imgs)
    np.testing.assert_array_equal(a[0], r[0][5:15, 4:16][:, ::-1])
    np.testing.assert_array_equal(a[1], r[1][6:14, 6:15][::-1])


def test_fast_resize_crop_mirror_is_deprecated_without_antialias():
    kw = dict(size=[15, 20], crop=[10, 10], mirror=1)
    with pytest.warns(DeprecationWarning, match="fast_resize_crop_mirror` is now deprecated"):
        (a, b, c) = _run(lambda x: (
            fn.fast_resize_crop_mirror(x, **kw),
            fn.resize_crop_mirror(x, antialias=False, **kw),
            fn.fast_resize_crop_mirror(x, antialias=True, **kw)), _images())
    (d,) = _run(lambda x: fn.resize_crop_mirror(x, **kw), _images())
    for x, y, z, w in zip(a, b, c, d):
        np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(z, w)
    with pytest.warns(DeprecationWarning):
        ops.FastResizeCropMirror(**kw)


def test_resize_crop_mirror_sequences_share_the_window():
    clip = np.random.default_rng(5).integers(0, 256, (3, 12, 16, 3)).astype(np.uint8)
    (a,) = run_op("resize_crop_mirror", [clip], layout="FHWC", size=[6, 8], crop=[4, 4],
                  mirror=1)
    for f in range(3):
        (b,) = run_op("resize_crop_mirror", [clip[f]], size=[6, 8], crop=[4, 4], mirror=1)
        np.testing.assert_array_equal(a[f], b)


def _expect(op, match, images=None, layout="HWC", **kwargs):
    images = images or [np.zeros((4, 5, 3), np.uint8)]
    with pytest.raises(Exception, match=match):
        run_op(op, images, layout=layout, **kwargs)


def test_resize_crop_mirror_errors_name_the_operator():
    op = "resize_crop_mirror"
    _expect(op, r"resize_crop_mirror: rounding must be 'round' or 'truncate', got 'floor'",
            size=[4, 4], rounding="floor")
    _expect(op, r"resize_crop_mirror: crop_w and crop_h must be given together", size=[4, 4],
            crop_h=2)
    _expect(op, r"resize_crop_mirror: crop cannot be given with crop_h and crop_w", size=[4, 4],
            crop=[2, 2], crop_h=2, crop_w=2)
    _expect(op, r"resize_crop_mirror: crop must be \[height, width\] for an image \(\[depth, "
                r"height, width\] for a volume\), got 3 values \(sample 0\)",
            size=[4, 4], crop=[2, 2, 2])
    _expect(op, r"resize_crop_mirror: crop_pos_x must be in \[0, 1\], got 1.5 \(sample 0\)",
            size=[4, 4], crop=[2, 2], crop_pos_x=1.5)
    _expect(op, r"resize_crop_mirror: unknown mode 'fit'", size=[4, 4], mode="fit")
    _expect(op, r"resize_crop_mirror: size must be \[height, width\]", size=[4, 4, 4])
    _expect(op, r"resize_crop_mirror: expected images in HWC layout, got layout 'HCW'",
            size=[4, 4], layout="HCW")
    _expect("experimental.resize", r"experimental.resize: roi_start and roi_end need 2 values",
            size=[4, 4], roi_start=[0, 0, 0], roi_end=[1, 1, 1])


# -- tensor_resize -----------------------------------------------------------------------------
def test_tensor_resize_of_image_axes_is_resize():
    imgs = _images()
    for kw, rkw in [(dict(sizes=[30, 40], axes=[0, 1]), dict(size=[30, 40])),
                    (dict(sizes=[30, 40], axis_names="HW", antialias=False,
                          interp_type=types.INTERP_CUBIC),
                     dict(size=[30, 40], antialias=False, interp_type=types.INTERP_CUBIC)),
                    (dict(sizes=[-20, 40, 3]), dict(size=[20, 40], roi_start=[37, 0],
                                                    roi_end=[0, 53]))]:
        (a, b) = _run(lambda x: (fn.tensor_resize(x, **kw), fn.resize(x, **rkw)), imgs[:1])
        assert a[0].shape == b[0].shape
        _near(a, b, atol=1)


def test_tensor_resize_sizes_and_scales():
    img = [np.zeros((10, 20, 3), np.uint8)]

    def shape(**kw):
        return run_op("tensor_resize", img, **kw)[0].shape

    assert shape(sizes=[5], axes=[1]) == (10, 5, 3)  # the other axes keep their extents
    # 0: the geometric mean of the other axes' scales (the channels' 1 among them: DALI's)
    assert shape(sizes=[5, 0], axes=[0, 1]) == (5, 14, 3)
    assert shape(sizes=[5, 0], axes=[0, 1], mode="stretch") == (5, 20, 3)
    assert shape(sizes=[5, 5], axes=[0, 1], mode="not_larger") == (3, 5, 1)  # every axis
    assert shape(scales=[0.25], axes=[0]) == (3, 20, 3)  # 2.5 rounds half away from zero
    assert shape(scales=[0.25], axes=[0], size_rounding="truncate") == (2, 20, 3)
    assert shape(scales=[0.21], axes=[0], size_rounding="ceil") == (3, 20, 3)
    assert shape(sizes=[100], axes=[-2], max_size=[30]) == (10, 30, 3)
    assert shape(scales=[2], axis_names="W") == (10, 40, 3)
    assert shape(sizes=[3]) == (3, 3, 3)  # one value for every axis


def test_tensor_resize_subpixel_scale_and_alignment():
    # 10 -> 12.5 rounds to 13; the region grows about the aligned point, keeping the scale.
    row = np.arange(10, dtype=np.float32).reshape(1, 10)

    def resize(**kw):
        return run_op("tensor_resize", [row], layout="", scales=[1.25], axes=[1],
                      interp_type=types.INTERP_LINEAR, antialias=False, **kw)[0][0]

    step = 0.8  # input pixels per output pixel, kept
    for alignment, start in ((0.0, 0.0), (0.5, -0.2), (1.0, -0.4)):
        centres = start + (np.arange(13) + 0.5) * step - 0.5
        np.testing.assert_allclose(resize(alignment=[alignment]),
                                   np.interp(centres, np.arange(10), row[0]), atol=1e-5)
    centres = (np.arange(13) + 0.5) * 10 / 13 - 0.5  # without subpixel_scale: 10 -> 13
    np.testing.assert_allclose(resize(subpixel_scale=False),
                               np.interp(centres, np.arange(10), row[0]), atol=1e-5)


def test_tensor_resize_frames_channels_and_1d():
    rng = np.random.default_rng(7)
    clip = rng.integers(0, 256, (3, 12, 16, 5)).astype(np.uint8)
    (a,) = run_op("tensor_resize", [clip], layout="FHWC", sizes=[6, 9], axes=[1, 2])
    assert a.shape == (3, 6, 9, 5)
    for f in range(3):  # frames resized independently, the 5 channels together
        (b,) = run_op("tensor_resize", [clip[f]], sizes=[6, 9], axes=[0, 1])
        np.testing.assert_array_equal(a[f], b)
    row = np.arange(8, dtype=np.float32)
    (a,) = run_op("tensor_resize", [row], layout="", sizes=[4], antialias=False)
    np.testing.assert_allclose(a, [0.5, 2.5, 4.5, 6.5])
    (a,) = run_op("tensor_resize", [np.zeros((0, 5), np.float32)], layout="", sizes=[3, 3])
    assert a.shape == (0, 3)
    # A region float32 cannot widen samples its point (beyond the image: the edge), as DALI.
    img = np.arange(20, dtype=np.float32).reshape(4, 5)
    (a,) = run_op("tensor_resize", [img], layout="", sizes=[3], axes=[0], roi_start=[1e9],
                  roi_end=[1e9])
    np.testing.assert_array_equal(a, img[3:])


@pytest.mark.parametrize("sizes", [[4, 6, 20], [14, 5, 9]])  # depth first / planes first
@pytest.mark.parametrize("interp", [types.INTERP_LINEAR, types.INTERP_CUBIC, types.INTERP_NN])
def test_tensor_resize_volume_is_separable(sizes, interp):
    vol = np.random.default_rng(2).random((9, 11, 13)).astype(np.float32) * 100
    (a,) = run_op("tensor_resize", [vol], layout="DHW", sizes=sizes, interp_type=interp)
    (plane,) = run_op("tensor_resize", [vol], layout="DHW", sizes=sizes[1:], axes=[1, 2],
                      interp_type=interp)
    (b,) = run_op("tensor_resize", [plane], layout="DHW", sizes=sizes[:1], axes=[0],
                  interp_type=interp)
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-3)


def test_tensor_resize_per_sample_sizes_and_layout():
    imgs = _images()

    def define(x):
        sizes = fn.external_source(lambda: [np.float32([9, 11]), np.float32([4, 5])])
        return fn.tensor_resize(x, sizes=sizes, axes=[0, 1])

    (a,) = _run(define, imgs)
    assert [x.shape for x in a] == [(9, 11, 3), (4, 5, 3)]
    pipe = stoker.Pipeline(batch_size=1, num_threads=1)
    with pipe:
        pipe.set_outputs(fn.tensor_resize(fn.external_source(lambda: imgs[:1], layout="HWC"),
                                          sizes=[5], axes=[0]))
    assert pipe.run()[0].layout() == "HWC"


def test_tensor_resize_deprecated_name():
    with pytest.warns(DeprecationWarning, match="experimental.tensor_resize` is now deprecated"):
        (a, b) = _run(lambda x: (fn.experimental.tensor_resize(x, sizes=[5, 6], axes=[0, 1]),
                                 fn.tensor_resize(x, sizes=[5, 6], axes=[0, 1])), _images())
    np.testing.assert_array_equal(a[0], b[0])


def test_tensor_resize_errors_name_the_operator():
    op = "tensor_resize"
    _expect(op, r"tensor_resize: give one of sizes and scales")
    _expect(op, r"tensor_resize: give one of sizes and scales", sizes=[2], scales=[2])
    _expect(op, r"tensor_resize: roi_start and roi_end must be given together", sizes=[2],
            roi_start=[1])
    _expect(op, r"tensor_resize: axes and axis_names cannot be given together", sizes=[2],
            axes=[0], axis_names="H")
    _expect(op, r"tensor_resize: unknown mode 'fit'", sizes=[2], mode="fit")
    _expect(op, r"tensor_resize: scales cannot be given with mode 'not_smaller'", scales=[2],
            mode="not_smaller")
    _expect(op, r"tensor_resize: size_rounding must be 'round', 'truncate' or 'ceil', got "
                r"'floor'", scales=[2], size_rounding="floor")
    _expect(op, r"tensor_resize: takes and gives uint8, uint16, int16 or float32 data, got "
                r"int32 to int32", [np.zeros((4, 5), np.int32)], layout="", sizes=[2])
    _expect(op, r"tensor_resize: takes and gives uint8, uint16, int16 or float32 data, got "
                r"uint8 to float16", sizes=[2], dtype=types.FLOAT16)
    _expect(op, r"tensor_resize: the input must have at least 1 axis",
            [np.array(5, np.uint8)], layout="", sizes=[2])
    _expect(op, r"tensor_resize: axis 'D' of axis_names 'D' is not in the input's layout 'HWC'",
            sizes=[2], axis_names="D")
    _expect(op, r"tensor_resize: axis 3 is out of range for 3-D input \(axes go from -3 to 2\)",
            sizes=[2], axes=[3])
    _expect(op, r"tensor_resize: an axis is named twice in axes/axis_names", sizes=[2],
            axes=[0, -3])
    _expect(op, r"tensor_resize: sizes needs one value or one per resized axis \(2\), got 3 "
                r"\(sample 0\)", sizes=[2, 3, 4], axes=[0, 1])
    _expect(op, r"tensor_resize: at most 3 adjacent axes can be resized; the resized axes span "
                r"4 axes from axis 0", [np.zeros((2, 3, 4, 5), np.uint8)], layout="",
            sizes=[4, 2], axes=[0, 3])
    _expect(op, r"tensor_resize: sample 0: axis 0 has a size that is not a number",
            sizes=[float("nan")], axes=[0])
    _expect(op, r"tensor_resize: sample 0: axis 0 has a region of interest \(or alignment\) "
                r"that is not a finite number", scales=[1.3], axes=[0],
            alignment=[float("nan")])


# -- GPU twins ---------------------------------------------------------------------------------
GPU_CASES = [
    ("tensor_resize_2d", lambda x: fn.tensor_resize(x, sizes=[30, 41], axes=[0, 1])),
    ("tensor_resize_3d", lambda x: fn.tensor_resize(x, sizes=[20, 25, 6])),
    ("tensor_resize_3d_depth_first", lambda x: fn.tensor_resize(
        fn.cast(x, dtype=types.FLOAT), sizes=[9, 70, 2], interp_type=types.INTERP_CUBIC)),
    ("tensor_resize_flip_roi", lambda x: fn.tensor_resize(
        x, sizes=[15, 20], axes=[0, 1], roi_start=[3, 30], roi_end=[15, 5])),
    ("resize_crop_mirror", lambda x: fn.resize_crop_mirror(
        x, resize_shorter=25, crop=[20, 20], crop_pos_x=0.2, crop_pos_y=0.9, mirror=3)),
    ("experimental_resize", lambda x: fn.experimental.resize(x, size=[30, 40],
                                                            interp_type=types.INTERP_LANCZOS3)),
]


@needs_gpu
@pytest.mark.parametrize("case", GPU_CASES, ids=[c[0] for c in GPU_CASES])
def test_gpu_backend_matches_cpu(case):
    _, define = case
    imgs = _images()
    (cpu,) = _run(define, imgs)
    (gpu,) = _run(define, imgs, device="gpu")
    float_out = cpu[0].dtype == np.float32
    _near(gpu, cpu, atol=1e-3 if float_out else 1, share=0.0 if float_out else 0.001)


@needs_gpu
def test_gpu_fused_resize_crop_mirror_chain_matches_cpu():
    define = (lambda x: fn.crop_mirror_normalize(
        fn.resize_crop_mirror(x, size=[30, 40], crop=[24, 24], mirror=1), crop=[16, 16],
        mean=[100.0], std=[50.0]))
    (cpu,) = _run(define, _images())
    (gpu,) = _run(define, _images(), device="gpu")
    _near(gpu, cpu, atol=1e-3)


def test_no_warnings_from_the_current_names():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _run(lambda x: (fn.tensor_resize(x, sizes=[5], axes=[0]),
                        fn.resize_crop_mirror(x, size=[8, 8]),
                        fn.experimental.resize(x, size=[8, 8])), _images())


@needs_gpu
def test_channel_first_images_through_a_fused_chain_match_the_cpu():
    # A resize -> crop_mirror_normalize chain that would fuse on the GPU runs its steps one by
    # one on CHW images (the fused kernel reads HWC): same values as the CPU chain.
    rng = np.random.default_rng(3)
    img = rng.integers(0, 256, (3, 10, 12), np.uint8)

    def chain(device):
        @stoker.pipeline_def(batch_size=1, num_threads=1, device_id=0)
        def p():
            x = fn.external_source(source=lambda: [img], batch=True, layout="CHW")
            x = x.gpu() if device == "gpu" else x
            return fn.crop_mirror_normalize(fn.resize(x, size=[8, 8]), crop=[4, 4],
                                            mean=[10.0], std=[2.0])
        pipe = p()
        pipe.build()
        (out,) = pipe.run()
        return out

    gpu, cpu = chain("gpu"), chain("cpu")
    assert gpu.layout() == cpu.layout() == "CHW"
    got = np.asarray(gpu.as_cpu()[0])
    assert got.shape == (3, 4, 4)
    _near(got, np.asarray(cpu[0]), atol=1e-3)
