"""multi_paste against DALI 2.4, exactly: in_ids with absolute regions overlapping (the later on
top), several inputs with relative coordinates (DALI's rounding), and a dtype conversion."""
import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, run_both

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {"multi_paste": "exact"}

RNG = np.random.default_rng(7)
IMGS = [RNG.integers(0, 255, (9 + i, 12 - i, 3)).astype(np.uint8) for i in range(4)]


def _src(fn, values):
    return fn.external_source(source=lambda: list(values), batch=True)


def test_in_ids_absolute_regions():
    ids = [np.array(x, np.int32) for x in ([0, 1], [3], [2, 0, 1], [1, 1])]
    k = [len(x) for x in ids]
    ia = [RNG.integers(0, 4, (n, 2)).astype(np.int32) for n in k]
    sh = [RNG.integers(1, 5, (n, 2)).astype(np.int32) for n in k]
    oa = [RNG.integers(0, 6, (n, 2)).astype(np.int32) for n in k]

    def define(fn, types):
        images = fn.external_source(source=lambda: IMGS, batch=True, layout="HWC")
        return fn.multi_paste(images, in_ids=_src(fn, ids), in_anchors=_src(fn, ia),
                              shapes=_src(fn, sh), out_anchors=_src(fn, oa), output_size=[10, 12])

    out = run_both(define, 4)
    assert_same(out["stoker"][0][0], out["dali"][0][0], what="multi_paste in_ids")


def test_two_inputs_relative_regions_and_dtype():
    a = [RNG.integers(0, 255, (13, 17, 3)).astype(np.uint8) for _ in range(3)]
    b = [RNG.integers(0, 255, (13, 17, 3)).astype(np.uint8) for _ in range(3)]
    iar = [RNG.uniform(0, 0.5, (2, 2)).astype(np.float32) for _ in range(3)]
    shr = [RNG.uniform(0.1, 0.5, (2, 2)).astype(np.float32) for _ in range(3)]
    oar = [RNG.uniform(0, 0.5, (2, 2)).astype(np.float32) for _ in range(3)]

    def define(fn, types):
        x = fn.external_source(source=lambda: a, batch=True, layout="HWC")
        y = fn.external_source(source=lambda: b, batch=True, layout="HWC")
        return fn.multi_paste(x, y, in_anchors_rel=_src(fn, iar), shapes_rel=_src(fn, shr),
                              out_anchors_rel=_src(fn, oar), dtype=types.FLOAT)

    out = run_both(define, 3)
    assert_same(out["stoker"][0][0], out["dali"][0][0], what="multi_paste relative")


def test_numpy_arrays_as_region_arguments():
    """A 2-D numpy array given for a per-sample argument is one constant tensor for every sample
    (DALI makes numpy arrays constant argument inputs): the 2x2 mosaic of its examples."""
    tiles = [RNG.integers(0, 255, (4, 5, 3)).astype(np.uint8) for _ in range(4)]

    def define(fn, types):
        x = fn.external_source(source=lambda: tiles, batch=True, layout="HWC")
        return fn.multi_paste(x, in_ids=np.int32([0, 1, 2, 3]), output_size=[8, 10],
                              out_anchors=np.int32([[0, 0], [0, 5], [4, 0], [4, 5]]),
                              shapes=np.int32([[4, 5]] * 4))

    out = run_both(define, 4)
    assert_same(out["stoker"][0][0], out["dali"][0][0], what="multi_paste numpy regions")
    top = np.concatenate([tiles[0], tiles[1]], 1)
    bottom = np.concatenate([tiles[2], tiles[3]], 1)
    np.testing.assert_array_equal(out["dali"][0][0][0], np.concatenate([top, bottom], 0))
