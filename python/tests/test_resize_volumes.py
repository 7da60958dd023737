"""resize, experimental.resize and resize_crop_mirror on volumes (DHWC, CDHW and their clips,
FDHWC, FCDHW: resize_z, sizes of 3 extents, regions of 3 axes, crop_d/crop_pos_z, the depth's
mirror bit) against a separable numpy reference, and resize's save_attrs output (the spatial
extents before the resize, one per sample, on the operator's device). Errors name the operator;
the GPU backends are held to the CPU ones (skipped without a device).
test_parity_resize_family.py compares the same with DALI."""

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn, types
from op_util import run_op

needs_gpu = pytest.mark.skipif(not _stoker.cuda_available(),
                               reason="no CUDA device: GPU test skipped")


def _volumes(dtype=np.uint8, seed=4):
    rng = np.random.default_rng(seed)
    out = []
    for d, h, w in ((9, 7, 13), (5, 12, 6)):
        v = rng.random((d, h, w, 2)) * 250
        out.append(v.astype(dtype))
    return out


def _run(define, data, layout, device="cpu"):
    """define(x) over `data` (on the GPU with device="gpu"): every output, as numpy samples."""
    pipe = stoker.Pipeline(batch_size=len(data), num_threads=2, seed=1,
                           device_id=0 if device == "gpu" else None)
    with pipe:
        x = fn.external_source(lambda: data, layout=layout)
        out = define(x.gpu() if device == "gpu" else x)
        pipe.set_outputs(*(out if isinstance(out, (list, tuple)) else [out]))
    res = pipe.run()
    return [[np.array(b.as_cpu()[i] if device == "gpu" else b[i]) for i in range(len(data))]
            for b in res]


# -- a separable reference: linear (no antialiasing) and nearest neighbour --------------------
def _resample_axis(a, axis, out, lo, hi, nn):
    n = a.shape[axis]
    centres = lo + (np.arange(out) + 0.5) * (hi - lo) / out  # in input pixels
    if nn:
        idx = np.clip(np.floor(centres).astype(int), 0, n - 1)
        return np.take(a, idx, axis=axis)
    pos = np.clip(centres - 0.5, 0, n - 1)  # taps past the ends dropped: the edge value
    i0 = np.floor(pos).astype(int)
    i1 = np.minimum(i0 + 1, n - 1)
    f = (pos - i0).reshape([-1 if k == axis else 1 for k in range(a.ndim)])
    return np.take(a, i0, axis=axis) * (1 - f) + np.take(a, i1, axis=axis) * f


def _reference(vol, shape, roi=None, nn=False, first=0):
    """vol's spatial axes (3 from `first`) resampled to `shape`, each over [lo, hi) of roi."""
    a = vol.astype(np.float64)
    for k in range(3):
        lo, hi = roi[k] if roi else (0, vol.shape[first + k])
        a = _resample_axis(a, first + k, shape[k], lo, hi, nn)
    return a


def _as(a, dtype):
    if dtype == np.uint8:
        return np.clip(np.floor(a + 0.5), 0, 255).astype(np.uint8)
    return a.astype(dtype)


@pytest.mark.parametrize("op", ["resize", "experimental.resize"])
@pytest.mark.parametrize("size", [[6, 11, 9], [14, 5, 20]])  # depth first / planes first
def test_volume_is_the_separable_resampling(op, size):
    vols = _volumes()
    got = run_op(op, vols, layout="DHWC", size=size, antialias=False)
    for v, g in zip(vols, got):
        assert g.shape == (*size, 2) and g.dtype == np.uint8
        want = _as(_reference(v, size), np.uint8)
        assert np.abs(g.astype(int) - want.astype(int)).max() <= 1
    vols = _volumes(np.float32)
    got = run_op(op, vols, layout="DHWC", size=size, antialias=False)
    for v, g in zip(vols, got):
        np.testing.assert_allclose(g, _reference(v, size), atol=1e-3)


def test_volume_nearest_neighbour_and_region():
    vols = _volumes()
    # (sizes with more factors of 2 than the extents: no sample position on a pixel boundary,
    # where float32 rounding, DALI's, decides)
    got = run_op("resize", vols, layout="DHWC", size=[6, 8, 4], interp_type=types.INTERP_NN)
    for v, g in zip(vols, got):
        np.testing.assert_array_equal(g, _reference(v, [6, 8, 4], nn=True).astype(np.uint8))
    # a region of 3 axes, the depth flipped (start > end); pixels, then fractions
    roi = [(4.0, 1.0), (1.5, 5.5), (2.0, 6.0)]
    got = run_op("resize", vols, layout="DHWC", size=[6, 8, 8], roi_start=[r[0] for r in roi],
                 roi_end=[r[1] for r in roi], interp_type=types.INTERP_NN)
    for v, g in zip(vols, got):
        np.testing.assert_array_equal(g, _reference(v, [6, 8, 8], roi, nn=True).astype(np.uint8))
    got = run_op("resize", vols, layout="DHWC", size=[6, 8, 8], roi_start=[0.25],
                 roi_end=[0.75], roi_relative=True, antialias=False)
    for v, g in zip(vols, got):
        rel = [(0.25 * e, 0.75 * e) for e in v.shape[:3]]
        want = _as(_reference(v, [6, 8, 8], rel), np.uint8)
        assert np.abs(g.astype(int) - want.astype(int)).max() <= 1


def test_volume_size_rules():
    vol = [np.zeros((4, 5, 7, 2), np.uint8)]

    def shape(**kw):
        return run_op("resize", vol, layout="DHWC", **kw)[0].shape

    # DALI's: one extent scales the others alike; resize_z is the depth's
    assert shape(resize_z=8) == (8, 10, 14, 2)
    assert shape(resize_x=14) == (8, 10, 14, 2)
    assert shape(resize_z=8, mode="stretch") == (8, 5, 7, 2)
    assert shape(size=[6]) == (6, 6, 6, 2)
    assert shape(size=[0, 10, 0]) == (8, 10, 14, 2)
    assert shape(resize_shorter=8) == (8, 10, 14, 2)
    assert shape(resize_longer=14) == (8, 10, 14, 2)
    assert shape(resize_longer=8, max_size=[3, 100, 100]) == (3, 4, 5, 2)
    assert shape(size=[8, 8, 8], mode="not_larger") == (5, 6, 8, 2)
    assert shape(size=[6.5, 11.3, 7.7]) == (7, 11, 8, 2)  # rounded half up
    # images ignore resize_z, as DALI's do
    img = [np.zeros((5, 7, 3), np.uint8)]
    assert run_op("resize", img, resize_z=8)[0].shape == (5, 7, 3)
    assert run_op("resize", img, resize_z=8, resize_x=14)[0].shape == (10, 14, 3)


def test_volume_layouts_and_clips():
    vols = _volumes()
    kw = dict(size=[6, 11, 9], interp_type=types.INTERP_CUBIC)
    dhwc = run_op("resize", vols, layout="DHWC", **kw)
    cdhw = run_op("resize", [np.ascontiguousarray(v.transpose(3, 0, 1, 2)) for v in vols],
                  layout="CDHW", **kw)
    for a, b in zip(dhwc, cdhw):
        np.testing.assert_array_equal(a, b.transpose(1, 2, 3, 0))
    clip = np.stack(vols[:1] * 3)
    (a,) = run_op("resize", [clip], layout="FDHWC", **kw)
    assert a.shape == (3, 6, 11, 9, 2)
    for f in range(3):
        np.testing.assert_array_equal(a[f], dhwc[0])
    (a,) = run_op("resize", [np.ascontiguousarray(clip.transpose(0, 4, 1, 2, 3))],
                  layout="FCDHW", **kw)
    np.testing.assert_array_equal(a[1], dhwc[0].transpose(3, 0, 1, 2))


def test_volume_per_sample_sizes():
    vols = _volumes()

    def define(x):
        depth = fn.external_source(lambda: [np.float32(3), np.float32(10)])
        size = fn.external_source(lambda: [np.float32([2, 3, 4]), np.float32([5, 6, 7])])
        return fn.resize(x, resize_z=depth), fn.resize(x, size=size)

    (a, b) = _run(define, vols, "DHWC")
    assert [x.shape for x in a] == [(3, 2, 4, 2), (10, 24, 12, 2)]
    assert [x.shape for x in b] == [(2, 3, 4, 2), (5, 6, 7, 2)]


def test_resize_crop_mirror_volume_is_resize_crop_flip():
    vols = _volumes()
    (r,) = _run(lambda x: fn.resize(x, size=[10, 12, 14], interp_type=types.INTERP_NN), vols,
                "DHWC")
    for mirror in (0, 4, 5, 7):
        (a,) = _run(lambda x: fn.resize_crop_mirror(
            x, size=[10, 12, 14], crop=[4, 6, 8], crop_pos_z=0.25, crop_pos_y=1.0,
            crop_pos_x=0.0, mirror=mirror, interp_type=types.INTERP_NN), vols, "DHWC")
        for got, full in zip(a, r):
            # anchors: round(0.25 * 6) = 2 (half away from zero), 12 - 6 = 6, 0
            want = full[2:6, 6:12, 0:8]
            if mirror & 4:
                want = want[::-1]
            if mirror & 2:
                want = want[:, ::-1]
            if mirror & 1:
                want = want[:, :, ::-1]
            np.testing.assert_array_equal(got, want)
    # crop_d/crop_h/crop_w; a crop of [h, w] keeps the depth; no crop: the whole resized volume
    (a, b, c) = _run(lambda x: (
        fn.resize_crop_mirror(x, size=[10, 12, 14], crop_d=4, crop_h=6, crop_w=8),
        fn.resize_crop_mirror(x, size=[10, 12, 14], crop=[6, 8]),
        fn.resize_crop_mirror(x, size=[10, 12, 14])), vols, "DHWC")
    assert a[0].shape == (4, 6, 8, 2) and b[0].shape == (10, 6, 8, 2)
    (full,) = _run(lambda x: fn.resize(x, size=[10, 12, 14]), vols, "DHWC")
    for x, y in zip(c, full):
        assert np.abs(x.astype(int) - y.astype(int)).max() <= 1


# -- save_attrs --------------------------------------------------------------------------------
@pytest.mark.parametrize("layout,shapes,want", [
    ("HWC", [(5, 7, 3), (9, 4, 3)], [[5, 7], [9, 4]]),
    ("FHWC", [(2, 5, 7, 3), (3, 6, 4, 3)], [[5, 7], [6, 4]]),
    ("DHWC", [(4, 5, 7, 2)], [[4, 5, 7]]),
    ("CDHW", [(2, 4, 5, 7)], [[4, 5, 7]]),
    ("FDHWC", [(2, 3, 4, 5, 1)], [[3, 4, 5]]),
])
@pytest.mark.parametrize("op", ["resize", "experimental.resize"])
def test_save_attrs_gives_the_input_extents(op, layout, shapes, want):
    data = [np.zeros(s, np.uint8) for s in shapes]
    target = fn.experimental.resize if op == "experimental.resize" else fn.resize
    (resized, attrs) = _run(lambda x: target(x, resize_x=6, save_attrs=True), data, layout)
    for a, w in zip(attrs, want):
        assert a.dtype == np.int32 and a.tolist() == w
    (plain,) = _run(lambda x: target(x, resize_x=6), data, layout)
    for a, b in zip(resized, plain):
        np.testing.assert_array_equal(a, b)


def test_save_attrs_outputs_and_layout():
    img = [np.zeros((5, 7, 3), np.uint8)]
    pipe = stoker.Pipeline(batch_size=1, num_threads=1)
    with pipe:
        x = fn.external_source(lambda: img, layout="HWC")
        out = fn.resize(x, size=[3, 3], save_attrs=True)
        assert len(out) == 2
        single = fn.resize(x, size=[3, 3], save_attrs=False)  # DALI's fails at run time there
        pipe.set_outputs(*out, single)
    resized, attrs, plain = pipe.run()
    assert attrs.layout() == "" and resized.layout() == "HWC"
    assert np.array(attrs[0]).tolist() == [5, 7] and np.array(plain[0]).shape == (3, 3, 3)


# -- errors ------------------------------------------------------------------------------------
def _expect(op, match, data, layout, **kwargs):
    with pytest.raises(Exception, match=match):
        run_op(op, data, layout=layout, **kwargs)


def test_volume_errors_name_the_operator():
    vol = [np.zeros((4, 5, 7, 2), np.uint8)]
    _expect("resize", r"resize: size needs one value per axis of a volume \(depth, height, "
                      r"width\) or one for all, got 2 values", vol, "DHWC", size=[4, 4])
    _expect("experimental.resize", r"experimental.resize: max_size needs one value per axis of "
                                   r"a volume \(depth, height, width\) or one for all, got 2 "
                                   r"values", vol, "DHWC", size=[4], max_size=[4, 4])
    _expect("resize", r"resize: roi_start and roi_end must be given together", vol, "DHWC",
            size=[4], roi_start=[1, 1, 1])
    _expect("resize", r"resize: takes and gives uint8, uint16, int16 or float32 data, got "
                      r"int32 to int32", [np.zeros((4, 5, 7, 2), np.int32)], "DHWC", size=[4])
    _expect("resize", r"resize: sample 0: axis 0 has a size that is not a number", vol, "DHWC",
            resize_z=float("nan"))
    op = "resize_crop_mirror"
    _expect(op, r"resize_crop_mirror: crop_d must be given with crop_h and crop_w", vol, "DHWC",
            size=[4], crop_d=2)
    _expect(op, r"resize_crop_mirror: crop must be \[depth, height, width\] or \[height, "
                r"width\] for a volume, got 4 values \(sample 0\)", vol, "DHWC", size=[4],
            crop=[2, 2, 2, 2])
    _expect(op, r"resize_crop_mirror: crop_pos_z must be in \[0, 1\], got 1.5 \(sample 0\)", vol,
            "DHWC", size=[4], crop=[2, 2, 2], crop_pos_z=1.5)
    _expect(op, r"resize_crop_mirror: crop \(crop_d, crop_h, crop_w\) would make an output of "
                r"2000x2000x2000", vol, "DHWC", size=[4], crop=[2000, 2000, 2000])
    _expect("resize", r"resize: resize_x, resize_y, resize_z, size, resize_shorter and "
                      r"resize_longer would make an output of 2000x2500x3500", vol, "DHWC",
            resize_z=2000)


# -- GPU twins ---------------------------------------------------------------------------------
GPU_CASES = [
    ("resize_depth_first", "DHWC", lambda x: fn.resize(x, size=[6, 11, 9])),
    ("resize_planes_first_cubic", "DHWC", lambda x: fn.resize(
        x, size=[14, 5, 20], interp_type=types.INTERP_CUBIC)),
    ("resize_cdhw_roi", "CDHW", lambda x: fn.experimental.resize(
        x, size=[6, 8, 8], roi_start=[4, 1.5, 2], roi_end=[1, 5.5, 6])),
    ("resize_crop_mirror", "DHWC", lambda x: fn.resize_crop_mirror(
        x, size=[10, 12, 14], crop=[4, 6, 8], crop_pos_z=0.25, mirror=5)),
]


@needs_gpu
@pytest.mark.parametrize("case", GPU_CASES, ids=[c[0] for c in GPU_CASES])
def test_gpu_volume_matches_cpu(case):
    _, layout, define = case
    vols = _volumes()
    if layout == "CDHW":
        vols = [np.ascontiguousarray(v.transpose(3, 0, 1, 2)) for v in vols]
    (cpu,) = _run(define, vols, layout)
    (gpu,) = _run(define, vols, layout, device="gpu")
    for a, b in zip(gpu, cpu):
        assert a.shape == b.shape and a.dtype == b.dtype
        assert np.mean(np.abs(a.astype(int) - b.astype(int)) > 1) == 0


@needs_gpu
@pytest.mark.parametrize("layout,shapes", [("HWC", [(5, 7, 3), (9, 4, 3)]),
                                           ("FHWC", [(2, 5, 7, 3)]), ("DHWC", [(4, 5, 7, 2)])])
def test_gpu_save_attrs_on_the_device(layout, shapes):
    data = [np.random.default_rng(1).integers(0, 256, s).astype(np.uint8) for s in shapes]
    define = (lambda x: fn.resize(x, resize_x=6, save_attrs=True))
    (cpu_out, cpu_attrs) = _run(define, data, layout)
    pipe = stoker.Pipeline(batch_size=len(data), num_threads=1, device_id=0)
    with pipe:
        out, attrs = fn.resize(fn.external_source(lambda: data, layout=layout).gpu(),
                               resize_x=6, save_attrs=True)
        pipe.set_outputs(out, attrs)
    (gpu_out, gpu_attrs) = pipe.run()
    assert type(gpu_attrs).__name__ == "TensorListGPU"
    for i, (a, b) in enumerate(zip(cpu_attrs, cpu_out)):
        np.testing.assert_array_equal(np.array(gpu_attrs.as_cpu()[i]), a)
        assert np.abs(np.array(gpu_out.as_cpu()[i]).astype(int) - b.astype(int)).max() <= 1


@needs_gpu
def test_gpu_save_attrs_is_not_fused_away():
    # resize then crop_mirror_normalize fuse into one pass; with save_attrs they must not.
    imgs = [np.random.default_rng(2).integers(0, 256, (37, 53, 3)).astype(np.uint8)]
    define = (lambda x: (lambda r: (fn.crop_mirror_normalize(r[0], crop=[16, 16], mean=[100.0],
                                                            std=[50.0]), r[1]))(
        fn.resize(x, size=[30, 40], save_attrs=True)))
    (cpu, cpu_attrs) = _run(define, imgs, "HWC")
    (gpu, gpu_attrs) = _run(define, imgs, "HWC", device="gpu")
    np.testing.assert_allclose(gpu[0], cpu[0], atol=1e-3)
    assert gpu_attrs[0].tolist() == cpu_attrs[0].tolist() == [37, 53]
