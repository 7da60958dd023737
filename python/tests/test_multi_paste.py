"""multi_paste against a numpy reference: regions pasted in order onto zeroed canvases, from
several inputs or from samples chosen by in_ids, absolute and relative coordinates, dtype
conversion; the GPU backend equals the CPU one; bad regions are refused by sample and region."""
import numpy as np
import pytest

import stoker
from stoker import fn, types


def _run(inputs, device="cpu", **kw):
    """inputs: list of batches (lists of HWC arrays); per-sample arguments given as lists of
    arrays are fed through external_source."""
    n = len(inputs[0])
    pipe = stoker.Pipeline(batch_size=n, num_threads=2, seed=1,
                           device_id=0 if device == "gpu" else None)
    with pipe:
        ins = [fn.external_source(source=(lambda b: lambda: list(b))(b), batch=True, layout="HWC")
               for b in inputs]
        if device == "gpu":
            ins = [x.gpu() for x in ins]
        args = {k: (fn.external_source(source=(lambda v: lambda: list(v))(v), batch=True)
                    if isinstance(v, list) and isinstance(v[0], np.ndarray) else v)
                for k, v in kw.items()}
        pipe.set_outputs(fn.multi_paste(*ins, **args))
    (out,) = pipe.run()
    if device == "gpu":
        out = out.as_cpu()
    return [np.asarray(out[i]) for i in range(n)]


def _reference(canvas, regions, dtype):
    """canvas: (H, W, C); regions: [(image, (iy, ix), (h, w), (oy, ox))] in order."""
    out = np.zeros(canvas, np.float64)
    for img, (iy, ix), (h, w), (oy, ox) in regions:
        out[oy:oy + h, ox:ox + w] = img[iy:iy + h, ix:ix + w]
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        out = np.clip(np.where(out >= 0, np.floor(out + 0.5), np.ceil(out - 0.5)), info.min,
                      info.max)
    return out.astype(dtype)


def _images(rng, n, shape=(8, 10, 3), dtype=np.uint8):
    return [rng.integers(1, 250, shape).astype(dtype) for _ in range(n)]


def test_in_ids_overlapping_regions_later_on_top():
    rng = np.random.default_rng(0)
    imgs = _images(rng, 3)
    ids = [np.array([0, 1], np.int32), np.array([2], np.int32), np.array([1, 2, 0], np.int32)]
    ia = [np.array([[0, 0], [2, 3]], np.int32), np.array([[1, 1]], np.int32),
          np.array([[0, 0], [4, 5], [1, 2]], np.int32)]
    sh = [np.array([[5, 6], [4, 4]], np.int32), np.array([[7, 9]], np.int32),
          np.array([[3, 3], [4, 5], [6, 6]], np.int32)]
    oa = [np.array([[0, 0], [3, 4]], np.int32), np.array([[2, 1]], np.int32),
          np.array([[0, 0], [1, 1], [2, 2]], np.int32)]
    out = _run([imgs], in_ids=ids, in_anchors=ia, shapes=sh, out_anchors=oa, output_size=[9, 11])
    for i in range(3):
        regions = [(imgs[j], tuple(a), tuple(s), tuple(o))
                   for j, a, s, o in zip(ids[i], ia[i], sh[i], oa[i])]
        np.testing.assert_array_equal(out[i], _reference((9, 11, 3), regions, np.uint8))


def test_several_inputs_relative_coordinates_and_defaults():
    rng = np.random.default_rng(1)
    a, b = _images(rng, 2), _images(rng, 2)
    iar = [np.array([[0.5, 0.5], [0.0, 0.1]], np.float32)] * 2
    shr = [np.array([[0.5, 0.5], [0.25, 0.5]], np.float32)] * 2
    oar = [np.array([[0.0, 0.0], [0.5, 0.5]], np.float32)] * 2
    out = _run([a, b], in_anchors_rel=iar, shapes_rel=shr, out_anchors_rel=oar)
    for i in range(2):
        # 8x10 images: anchors floor(8*0.5)=4, floor(10*0.5)=5; shapes ceil: 4x5 and 2x5;
        # anchor (0, floor(10*0.1)=1); on the canvas (0, 0) and (4, 5).
        regions = [(a[i], (4, 5), (4, 5), (0, 0)), (b[i], (0, 1), (2, 5), (4, 5))]
        np.testing.assert_array_equal(out[i], _reference((8, 10, 3), regions, np.uint8))
    # No coordinates at all: every input whole at (0, 0), the last on top.
    out = _run([a, b])
    for i in range(2):
        np.testing.assert_array_equal(out[i], b[i])


@pytest.mark.parametrize("src, dst", [(np.float32, np.uint8), (np.int32, np.int16),
                                      (np.uint8, np.float32), (np.int16, np.uint16)])
def test_dtype_conversion_rounds_and_saturates(src, dst):
    vals = np.array([-70000.4, -3.5, -0.5, 0.49, 2.5, 254.6, 300.0, 70000.2])
    img = np.resize(vals, (2, 4, 1)).astype(src)
    out = _run([[img]], dtype=getattr(types, np.dtype(dst).name.upper()), output_size=[3, 4])
    regions = [(img.astype(np.float64), (0, 0), (2, 4), (0, 0))]
    np.testing.assert_array_equal(out[0], _reference((3, 4, 1), regions, dst))


def test_gpu_equals_cpu():
    if not stoker._stoker.cuda_available():
        pytest.skip("no CUDA device: the GPU backend is checked on the GPU machine")
    rng = np.random.default_rng(2)
    imgs = _images(rng, 4, (16, 20, 3))
    ids = [rng.integers(0, 4, k).astype(np.int32) for k in (1, 3, 4, 2)]
    ia = [rng.integers(0, 6, (len(x), 2)).astype(np.int32) for x in ids]
    sh = [rng.integers(1, 10, (len(x), 2)).astype(np.int32) for x in ids]
    oa = [rng.integers(0, 10, (len(x), 2)).astype(np.int32) for x in ids]
    for kw in ({}, {"dtype": types.FLOAT}, {"dtype": types.INT16}):
        c = _run([imgs], in_ids=ids, in_anchors=ia, shapes=sh, out_anchors=oa,
                 output_size=[20, 24], **kw)
        g = _run([imgs], "gpu", in_ids=ids, in_anchors=ia, shapes=sh, out_anchors=oa,
                 output_size=[20, 24], **kw)
        for x, y in zip(c, g):
            assert x.dtype == y.dtype
            np.testing.assert_array_equal(x, y)


def test_errors_name_the_sample_and_region():
    rng = np.random.default_rng(3)
    imgs = _images(rng, 2)
    ids = [np.array([0], np.int32), np.array([1, 0], np.int32)]
    with pytest.raises((ValueError, RuntimeError), match=r"sample 1, region 1: .* inside its input"):
        _run([imgs], in_ids=ids, in_anchors=[np.array([[0, 0]], np.int32),
                                             np.array([[0, 0], [5, 0]], np.int32)],
             shapes=[np.array([[2, 2]], np.int32), np.array([[2, 2], [4, 4]], np.int32)])
    with pytest.raises((ValueError, RuntimeError), match=r"sample 0, region 0: .* inside the output"):
        _run([imgs], in_ids=ids, out_anchors=[np.array([[1, 0]], np.int32),
                                              np.array([[0, 0], [0, 0]], np.int32)])
    with pytest.raises((ValueError, RuntimeError), match="in_ids 5 is not a sample"):
        _run([imgs], in_ids=[np.array([5], np.int32), np.array([0], np.int32)])
    with pytest.raises((ValueError, RuntimeError), match="needs 2 values .* 2 regions, got 2"):
        _run([imgs], in_ids=ids, shapes=[np.array([[1, 1]], np.int32),
                                         np.array([[1, 1]], np.int32)])
    with pytest.raises((ValueError, RuntimeError), match="give shapes or shapes_rel, not both"):
        _run([imgs], shapes=[np.array([[1, 1]], np.int32)] * 2,
             shapes_rel=[np.array([[1, 1]], np.float32)] * 2)
    with pytest.raises((ValueError, RuntimeError), match="must be in \\[0, 1\\]"):
        _run([imgs], out_anchors_rel=[np.array([[1.5, 0]], np.float32)] * 2)
    with pytest.raises((ValueError, RuntimeError), match="same size"):
        _run([[imgs[0], imgs[1][:4]]])
    with pytest.raises((TypeError, RuntimeError), match="unsupported dtype int8"):
        _run([[x.astype(np.int8) for x in imgs]])


def test_source_info_joins_the_regions_sources(tmp_path):
    from PIL import Image
    for name in ("a", "b"):
        (tmp_path / "c").mkdir(exist_ok=True)
        Image.fromarray(np.full((6, 6, 3), 9, np.uint8)).save(tmp_path / "c" / f"{name}.png")
    pipe = stoker.Pipeline(batch_size=2, num_threads=1, seed=1)
    with pipe:
        data, _ = fn.readers.file(file_root=str(tmp_path))
        img = fn.decoders.image(data)
        ids = fn.external_source(source=lambda: [np.array([1, 0], np.int32),
                                                 np.array([1], np.int32)], batch=True)
        pipe.set_outputs(fn.multi_paste(img, in_ids=ids))
    (out,) = pipe.run()
    a, b = str(tmp_path / "c" / "a.png"), str(tmp_path / "c" / "b.png")
    assert out.source_info(0) == f"{b};{a}" and out.source_info(1) == b
