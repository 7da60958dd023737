"""Random operators against DALI 2.4: the two libraries draw from different generators (stoker's
counter-based streams make results independent of threads and scheduling), so they are
compared by distribution over many draws, and random_resized_crop also in its deterministic
corner (the whole image)."""

import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, run, run_both

from stoker import _stoker

run_lib = run

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {
    "random.uniform": "distribution",
    "random.normal": "distribution",
    "random.coin_flip": "distribution",
    "random.choice": "distribution",
    "random_resized_crop": "tolerance: whole-image case 1 level on 1% of values; windows by "
                           "distribution",
    "jitter": "distribution: on the GPU machine (DALI's jitter has no CPU backend): the moves, "
              "per component, clamped at the edges",
}


def _values(out):
    return {lib: np.concatenate([s.ravel() for it in runs for s in it[0]]).astype(np.float64)
            for lib, runs in out.items()}


def test_uniform_normal_coin_flip_and_choice_draw_alike():
    def define(fn, types):
        return (fn.random.uniform(range=[-2.0, 3.0], shape=[500]),
                fn.random.normal(mean=1.0, stddev=2.0, shape=[500]),
                fn.random.coin_flip(probability=0.3, shape=[500]),
                fn.random.choice(4, p=[0.1, 0.2, 0.3, 0.4], shape=[500]))
    out = run_both(define, 4, iterations=2)
    per_output = [{lib: np.concatenate([s.ravel() for it in runs for s in it[k]])
                   for lib, runs in out.items()} for k in range(4)]
    uni, nor, coin, choice = per_output
    for lib in ("stoker", "dali"):
        u = uni[lib]
        assert u.min() >= -2 and u.max() < 3 and abs(u.mean() - 0.5) < 0.1, lib
        assert abs(u.std() - 5 / np.sqrt(12)) < 0.08, lib
        n = nor[lib]
        assert abs(n.mean() - 1) < 0.1 and abs(n.std() - 2) < 0.1, lib
        assert abs(coin[lib].mean() - 0.3) < 0.03, lib
        freq = np.bincount(choice[lib].astype(int), minlength=4) / choice[lib].size
        np.testing.assert_allclose(freq, [0.1, 0.2, 0.3, 0.4], atol=0.03, err_msg=lib)
    for k, name in enumerate(("uniform", "normal", "coin_flip", "choice")):
        a, b = (per_output[k][lib] for lib in ("stoker", "dali"))
        assert a.dtype == b.dtype, f"{name}: dtype {a.dtype} vs DALI {b.dtype}"


def test_uniform_and_normal_dtypes_draw_alike():
    """dtype= (as DALI 2.4): integer draws of `range` are the continuous ones rounded half away
    from zero (range [0, 3]: 0 and 3 half as often as 1 and 2), saturated to the type; `values`
    are float32 numbers converted the same way, so their choice sets are equal exactly. (Range
    bounds outside the type are left out: DALI wraps them, stoker saturates the draws —
    docs/dali_differences.md.)"""
    values = [1.7, 2.5, -3.5, 300.0, 0.5, -0.5, 1.5]

    def define(fn, types):
        return (fn.random.uniform(range=[0, 3], shape=[4000], dtype=types.INT32),
                fn.random.uniform(range=[0, 10], shape=[4000], dtype=types.UINT8),
                fn.random.uniform(values=values, shape=[4000], dtype=types.INT32),
                fn.random.uniform(values=values, shape=[4000], dtype=types.UINT8),
                fn.random.uniform(values=[0.1, 0.2], shape=[100], dtype=types.FLOAT64),
                fn.random.uniform(range=[0, 1], shape=[4000], dtype=types.FLOAT64),
                fn.random.normal(mean=1.0, stddev=2.0, shape=[4000], dtype=types.INT16),
                fn.random.normal(mean=0.5, stddev=0.1, shape=[4000], dtype=types.FLOAT64))
    out = run_both(define, 4)
    per_output = [{lib: np.concatenate([s.ravel() for s in runs[0][k]])
                   for lib, runs in out.items()} for k in range(8)]
    for k, got in enumerate(per_output):
        assert got["stoker"].dtype == got["dali"].dtype, f"output {k}"
    ints, u8, vals_i32, vals_u8, vals_f64, f64, nor_i16, nor_f64 = per_output
    for lib in ("stoker", "dali"):
        freq = np.bincount(ints[lib], minlength=4) / ints[lib].size
        np.testing.assert_allclose(freq, [1 / 6, 1 / 3, 1 / 3, 1 / 6], atol=0.02, err_msg=lib)
        freq = np.bincount(u8[lib], minlength=11) / u8[lib].size
        np.testing.assert_allclose(freq, [0.05] + [0.1] * 9 + [0.05], atol=0.02, err_msg=lib)
        assert abs(f64[lib].mean() - 0.5) < 0.02 and np.unique(f64[lib]).size == f64[lib].size
        assert abs(nor_i16[lib].mean() - 1) < 0.15 and abs(nor_i16[lib].std() - 2.02) < 0.15
        assert abs(nor_f64[lib].mean() - 0.5) < 0.01 and abs(nor_f64[lib].std() - 0.1) < 0.01
    for name, got in (("int32", vals_i32), ("uint8", vals_u8), ("float64", vals_f64)):
        sets = {lib: sorted(set(got[lib].tolist())) for lib in got}
        assert sets["stoker"] == sets["dali"], f"values as {name}: {sets}"
    assert sorted(set(vals_u8["stoker"].tolist())) == [0, 1, 2, 3, 255]


def test_shape_like_input_gives_each_sample_its_shape():
    """The shape_like input (DALI's `__shape_like`): each sample drawn in its input's shape, with
    the operator's dtype; `shape` beside it is refused by both."""
    def like(info):
        return np.zeros((info.idx_in_batch + 1, 3), np.uint8)

    def define(fn, types):
        x = fn.external_source(source=like, batch=False)
        return (fn.random.uniform(x, range=[2.0, 3.0]), fn.random.normal(x, dtype=types.FLOAT64),
                fn.random.coin_flip(x, probability=1.0, dtype=types.BOOL), fn.random.beta(x),
                fn.random.choice(5, x), fn.random.choice([0.5, 1.5], x, p=[0.25, 0.75]))
    out = run_both(define, 3)
    for k in range(6):
        a, b = out["stoker"][0][k], out["dali"][0][k]
        assert [(s.shape, s.dtype) for s in a] == [(s.shape, s.dtype) for s in b], f"output {k}"
        assert [s.shape for s in a] == [(1, 3), (2, 3), (3, 3)]
    assert all(((s >= 2) & (s < 3)).all() for s in out["stoker"][0][0])
    assert all(s.all() for s in out["stoker"][0][2])  # probability 1

    def both_given(fn, types):
        return fn.random.uniform(fn.external_source(source=like, batch=False), shape=[2])
    for lib in ("stoker", "dali"):
        with pytest.raises(Exception, match="shape"):
            run_lib(lib, both_given, 3)


def test_choice_from_a_per_sample_input_keeps_its_type():
    """`a` given as a per-sample input: each sample drawn from its own values, in their type."""
    def define(fn, types):
        a = fn.external_source(source=lambda: [np.array([5, 6, 7], np.int16),
                                               np.array([9], np.int16)], batch=True)
        b = fn.external_source(source=lambda: [np.array([0.5, 1.5])] * 2, batch=True)
        return fn.random.choice(a, shape=[50]), fn.random.choice(b)
    out = run_both(define, 2)
    for k in range(2):
        a, b = out["stoker"][0][k], out["dali"][0][k]
        assert [(s.shape, s.dtype) for s in a] == [(s.shape, s.dtype) for s in b], f"output {k}"
    first, second = out["stoker"][0][0]
    assert set(first.tolist()) <= {5, 6, 7} and len(set(first.tolist())) > 1
    assert (second == 9).all()


def test_uniform_dtypes_dali_refuses_are_refused():
    for lib in ("stoker", "dali"):
        with pytest.raises(Exception, match="bool"):
            run_lib(lib, lambda fn, types: fn.random.uniform(dtype=types.BOOL), 1)


def _square_images():
    rng = np.random.default_rng(5)
    out = []
    for n in (40, 64, 33):
        y, x = np.mgrid[0:n, 0:n]
        img = np.stack([x * 255 // n, y * 255 // n, (x + y) * 127 // n], -1)
        out.append(np.clip(img + rng.integers(-10, 11, img.shape), 0, 255).astype(np.uint8))
    return out


SQUARES = _square_images()


def _feed(fn, types):
    return fn.external_source(source=lambda: [a.copy() for a in SQUARES], batch=True,
                              layout="HWC")


def test_random_resized_crop_of_the_whole_image_is_a_resize():
    out = run_both(lambda fn, types: fn.random_resized_crop(
        _feed(fn, types), size=(24, 24), random_area=[1.0, 1.0],
        random_aspect_ratio=[1.0, 1.0]), len(SQUARES))
    assert_same(out["stoker"][0][0], out["dali"][0][0], atol=1, max_mismatch=0.01,
                what="random_resized_crop")


def test_random_resized_crop_windows_spread_alike():
    """How far the output is from the whole image resized: both libraries' windows cover the
    same range of areas and aspect ratios, so the spread of that distance is alike."""
    def define(fn, types):
        images = _feed(fn, types)
        return (fn.random_resized_crop(images, size=(24, 24), random_area=[0.2, 1.0]),
                fn.resize(images, size=(24, 24)))
    out = run_both(define, len(SQUARES), iterations=12)
    spread = {}
    for lib, runs in out.items():
        d = [np.abs(c.astype(float) - w.astype(float)).mean()
             for crops, whole in runs for c, w in zip(crops, whole)]
        spread[lib] = np.mean(d)
    assert abs(spread["stoker"] - spread["dali"]) < 0.35 * spread["dali"], spread


def _coordinates_image(side=15):
    """Every channel of pixel (y, x) holds y * side + x: an output value names its source."""
    y, x = np.mgrid[0:side, 0:side]
    return np.repeat((y * side + x)[..., None], 3, axis=2).astype(np.uint8)


def _jitter_moves(outs, side=15):
    """Moves seen in the interior (dy, dx: value -> share), the share of pixels whose channels
    came from different places, the share of the left column's components that stayed (moves
    to the left clamp), and whether any value is not a coordinate (a fill)."""
    outs = np.stack(outs).astype(int)
    y, x = np.mgrid[0:side, 0:side]
    inner = outs[:, 3:-3, 3:-3]
    moves = []
    for d in (inner // side - y[3:-3, 3:-3, None], inner % side - x[3:-3, 3:-3, None]):
        values, counts = np.unique(d, return_counts=True)
        moves.append(dict(zip(values.tolist(), (counts / d.size).tolist())))
    return {"moves": moves,
            "channels_apart": float(np.mean(np.any(inner != inner[..., :1], axis=-1))),
            "left_stays": float(np.mean(outs[:, 3:-3, 0] % side == 0)),
            "filled": bool(outs.max() >= side * side)}


@pytest.mark.parametrize("degree", [2, 3, 5])
def test_jitter_moves_components_alike(degree):
    """DALI's jitter runs only on the GPU: compared where a GPU is present. Each component
    draws its own move, from the same nDegree values, clamped to the image, on both."""
    if not _stoker.built_with_cuda:
        pytest.skip("this stoker was built without CUDA: jitter (GPU only) is not there")
    from parity_util import run
    img = _coordinates_image()

    def define(fn, types):
        data = fn.external_source(source=lambda: [img.copy() for _ in range(16)], batch=True,
                                  layout="HWC", device="gpu")
        return fn.jitter(data, nDegree=degree, fill_value=255)
    try:
        out = {lib: run(lib, define, 16, iterations=2, device_id=0) for lib in ("stoker", "dali")}
    except RuntimeError as e:
        if "CUDA" in str(e) or "device" in str(e).lower() or "GPU" in str(e):
            pytest.skip(f"DALI's jitter needs a GPU: {str(e)[:120]}")
        raise
    seen = {lib: _jitter_moves([s for it in runs for s in it[0]]) for lib, runs in out.items()}
    expected = list(range(-(degree // 2), degree - degree // 2))
    for lib, m in seen.items():
        assert not m["filled"], lib
        for axis in m["moves"]:
            assert sorted(axis) == expected, (lib, axis)
            assert max(abs(share - 1 / degree) for share in axis.values()) < 0.04, (lib, axis)
    a, b = seen["stoker"], seen["dali"]
    assert abs(a["channels_apart"] - b["channels_apart"]) < 0.03, seen
    assert abs(a["left_stays"] - b["left_stays"]) < 0.08, seen
