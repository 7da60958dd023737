"""lookup_table, debayer and clahe against DALI 2.4: lookup_table bit for bit (every input type,
output types, repeated keys, out-of-range values, sequences); debayer's bilinear_ocv and gray_ocv
(OpenCV's demosaicing) bit for bit, for the four patterns and per-sample blue_position; clahe
bit for bit on grayscale and per-channel RGB, within a stated tolerance with luma_only; the GPU
backends against DALI's GPU ones on the GPU machine (skipped here)."""
import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, has_gpu, run, run_both

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {
    "lookup_table": "exact",
    "debayer": "exact: DALI's CPU algorithms default/bilinear_ocv and gray_ocv, uint8 and uint16 "
               "(edgeaware_ocv and vng_ocv are not implemented; DALI's GPU default_npp is "
               "approximated by bilinear_ocv: docs/dali_differences.md)",
    "clahe": "tolerance: exact for grayscale and luma_only=False; RGB with luma_only within 2 "
             "levels, under 10% of the values apart (L*a*b* from RGB is OpenCV's fixed point, exact; "
             "back to RGB in float; docs/dali_differences.md)",
}

_RNG = np.random.default_rng(77)


def _source(fn, data, layout="", device="cpu"):
    return fn.external_source(source=lambda: [np.copy(a) for a in data], batch=True,
                              layout=layout, device=device)


_LUT_TYPES = [(np.uint8, "FLOAT"), (np.int8, "INT16"), (np.uint16, "UINT8"),
              (np.int16, "UINT32"), (np.int32, "INT64"), (np.uint32, "FLOAT16"),
              (np.int64, "BOOL"), (np.uint64, "FLOAT64"), (np.int32, "INT8")]


def _lut_data(in_type, shapes):
    info = np.iinfo(in_type)
    lo, hi = max(int(info.min), -500), min(int(info.max), 70000)
    return [_RNG.integers(lo, hi + 1, s).astype(in_type) for s in shapes]


@pytest.mark.parametrize("in_type,dtype", _LUT_TYPES)
def test_lookup_table_equals_dali(in_type, dtype):
    data = _lut_data(in_type, [(17, 23, 3), (1, 1, 1), (0, 5, 2), (400, 1, 1), (2, 3, 4)])
    keys = [0, 2, 3, 255, 254, 3, 1000, 65535, 7, 128]
    values = [0.5, -2.5, 1e6, 3.25, -7.0, 2.5, 129.5, -0.5, 0.1, 255.5]

    def define(fn, types):
        x = _source(fn, data)
        return (fn.lookup_table(x, keys=keys, values=values, default_value=-1.5,
                                dtype=getattr(types, dtype)),
                fn.lookup_table(x, keys=[5], values=[70000.0], dtype=getattr(types, dtype)))

    out = run_both(define, len(data))
    for k in range(2):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=f"lookup_table {dtype} {k}")


def test_lookup_table_defaults_and_sequences_equal_dali():
    frames = [_RNG.integers(0, 20, (3, 6, 7, 3)).astype(np.uint8) for _ in range(2)]

    def define(fn, types):
        x = _source(fn, frames, "FHWC")
        return (fn.lookup_table(x, keys=list(range(0, 20, 2)), values=list(range(10))),
                fn.lookup_table(x, keys=[1, 2], values=[3, 4], dtype=types.UINT8,
                                default_value=300))

    out = run_both(define, 2)
    for k in range(2):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=f"lookup_table seq {k}")


def test_lookup_table_gpu_equals_dali():
    if not has_gpu():
        pytest.skip("no CUDA device: the GPU backends are compared on the GPU machine")
    data = _lut_data(np.int32, [(17, 23, 3), (1, 1, 1), (0, 5, 2), (4000, 1, 1)])

    def define(fn, types):
        x = _source(fn, data, device="gpu")
        return fn.lookup_table(x, keys=[0, 3, 65535, 3], values=[1.5, 2.5, 3.5, -4.5],
                               default_value=9, dtype=types.INT16)

    out = run_both(define, len(data), device_id=0)
    assert_same(out["stoker"][0][0], out["dali"][0][0], what="lookup_table gpu")


# ---------------------------------------------------------------- debayer

_PATTERNS = {"BG": [0, 0], "GB": [0, 1], "GR": [1, 0], "RG": [1, 1]}


@pytest.mark.parametrize("pattern", sorted(_PATTERNS))
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_debayer_bilinear_equals_dali(pattern, dtype):
    hi = 256 if dtype == np.uint8 else 65536
    data = [_RNG.integers(0, hi, s).astype(dtype) for s in [(10, 14), (64, 48), (4, 4), (6, 38)]]

    def define(fn, types):
        x = _source(fn, data, "HW")
        return (fn.debayer(x, blue_position=_PATTERNS[pattern]),
                fn.debayer(x, blue_position=_PATTERNS[pattern], algorithm="bilinear_ocv"))

    out = run_both(define, len(data))
    for k in range(2):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=f"debayer {pattern} {k}")


def test_debayer_per_sample_positions_hwc_and_old_name_equal_dali():
    import warnings
    data = [_RNG.integers(0, 256, s).astype(np.uint8)
            for s in [(10, 14, 1), (16, 8, 1), (6, 6, 1), (8, 12, 1)]]
    positions = [np.array(p, np.int32) for p in ([0, 0], [0, 1], [1, 0], [1, 1])]

    def define(fn, types):
        x = _source(fn, data, "HWC")
        pos = _source(fn, positions)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn.debayer(x, blue_position=pos), fn.experimental.debayer(x, blue_position=1)

    out = run_both(define, len(data))
    for k in range(2):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=f"debayer per-sample {k}")


def test_debayer_sequences_equal_dali():
    clips = [_RNG.integers(0, 256, (3, 8, 10)).astype(np.uint8) for _ in range(2)]

    def define(fn, types):
        return fn.debayer(_source(fn, clips, "FHW"), blue_position=[1, 0])

    out = run_both(define, 2)
    assert_same(out["stoker"][0][0], out["dali"][0][0], what="debayer FHW")


def test_debayer_per_frame_positions_equal_dali():
    clips = [_RNG.integers(0, 256, (3, 8, 10, 1)).astype(np.uint8),
             _RNG.integers(0, 256, (2, 6, 6, 1)).astype(np.uint8)]
    positions = [np.array([[0, 0], [1, 1], [0, 1]], np.int32), np.array([[1, 0], [0, 0]], np.int32)]

    def define(fn, types):
        pos = fn.per_frame(_source(fn, positions))
        return fn.debayer(_source(fn, clips, "FHWC"), blue_position=pos)

    out = run_both(define, 2)
    assert_same(out["stoker"][0][0], out["dali"][0][0], what="debayer per-frame")


def test_debayer_gray_equals_dali():
    data = [_RNG.integers(0, 256, s).astype(np.uint8) for s in [(10, 14), (64, 48), (6, 38)]]

    def define(fn, types):
        x = _source(fn, data, "HW")
        return tuple(fn.debayer(x, blue_position=p, algorithm="gray_ocv")
                     for p in _PATTERNS.values())

    out = run_both(define, len(data))
    for k in range(4):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=f"debayer gray {k}")


def test_debayer_gpu_near_dali_npp():
    """DALI's GPU debayer is NPP's interpolation; stoker's GPU backend computes OpenCV's bilinear
    one (its CPU twin): on smooth sensor data they agree within a few levels away from the
    borders."""
    if not has_gpu():
        pytest.skip("no CUDA device: the GPU backends are compared on the GPU machine")
    y, x = np.mgrid[0:64, 0:96]
    base = (120 + 50 * np.sin(x / 9.0) + 40 * np.cos(y / 7.0)).clip(0, 255).astype(np.uint8)
    data = [base, np.ascontiguousarray(base[::-1])]

    def define(fn, types):
        return fn.debayer(_source(fn, data, "HW", device="gpu"), blue_position=[0, 1])

    out = run_both(define, 2, device_id=0)
    inner = lambda batch: [a[2:-2, 2:-2] for a in batch]
    assert_same(inner(out["stoker"][0][0]), inner(out["dali"][0][0]), atol=8,
                what="debayer gpu (NPP)", max_mismatch=0.02)


# ---------------------------------------------------------------- clahe

def _smooth(h, w, c):
    y, x = np.mgrid[0:h, 0:w]
    base = 100 + 60 * np.sin(x / 7.0) + 40 * np.cos(y / 5.0)
    return (base[..., None] + _RNG.normal(0, 12, (h, w, c))).clip(0, 255).astype(np.uint8)


@pytest.mark.parametrize("tx,ty,clip", [(4, 4, 2.0), (3, 5, 1.5), (8, 8, 0.0), (2, 1, 40.0),
                                        (1, 1, 1000.0)])
def test_clahe_gray_and_per_channel_equal_dali(tx, ty, clip):
    gray = [_smooth(64, 48, 1), _smooth(37, 53, 1), _smooth(8, 8, 1)]
    rgb = [_smooth(30, 40, 3), _smooth(17, 23, 3), _smooth(64, 64, 3)]

    def define(fn, types):
        kw = dict(tiles_x=tx, tiles_y=ty, clip_limit=clip)
        return (fn.clahe(_source(fn, gray, "HWC"), **kw),
                fn.clahe(_source(fn, rgb, "HWC"), luma_only=False, **kw))

    out = run_both(define, 3)
    for k in range(2):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=f"clahe {tx}x{ty} {k}")


@pytest.mark.parametrize("tx,ty,clip", [(4, 4, 2.0), (3, 5, 1.5), (8, 8, 3.0), (2, 2, 0.0)])
def test_clahe_luma_near_dali(tx, ty, clip):
    rgb = [_smooth(64, 48, 3), _smooth(37, 53, 3), _smooth(120, 90, 3)]
    rgb.append(_RNG.integers(0, 256, (40, 40, 3)).astype(np.uint8))

    def define(fn, types):
        return fn.clahe(_source(fn, rgb, "HWC"), tiles_x=tx, tiles_y=ty, clip_limit=clip)

    out = run_both(define, len(rgb))
    assert_same(out["stoker"][0][0], out["dali"][0][0], atol=2, what="clahe luma")
    for a, b in zip(out["stoker"][0][0], out["dali"][0][0]):
        assert np.mean(a != b) < 0.1


def test_clahe_gpu_near_dali():
    """DALI's GPU clahe has its own luminance (and only luma for RGB) and, on images the tiles
    do not divide, its own tiles (the last ones smaller, no mirrored border; measured on the
    H200: 56% of a 120x90 image's values apart, up to 31 levels); stoker's GPU backend is its
    CPU twin, OpenCV's algorithm as DALI's CPU backend. Grayscale images the tiles divide: the
    same in both GPU backends; the others: stoker's GPU equals DALI's CPU."""
    if not has_gpu():
        pytest.skip("no CUDA device: the GPU backends are compared on the GPU machine")
    gray = [_smooth(64, 48, 1), _smooth(120, 90, 1)]

    def define(device):
        def build(fn, types):
            return fn.clahe(_source(fn, gray, "HWC", device=device), tiles_x=4, tiles_y=4,
                            clip_limit=2.0)
        return build

    gpu = run_both(define("gpu"), 2, device_id=0)
    assert_same(gpu["stoker"][0][0][:1], gpu["dali"][0][0][:1], atol=2,
                what="clahe gpu gray (64x48)", max_mismatch=0.01)
    dali_cpu = run("dali", define("cpu"), 2)[0][0]
    assert_same(gpu["stoker"][0][0][1:], dali_cpu[1:], atol=1, max_mismatch=0.01,
                what="clahe gpu gray (120x90) against DALI's cpu backend")
