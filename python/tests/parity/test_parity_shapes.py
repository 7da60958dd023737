"""fn.shapes and DataNode.shape() against DALI 2.4: each sample's extents, for ragged batches,
sequences and scalars, in every output type DALI offers."""

import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, run_both

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {"shapes": "exact: ragged 3-D, 1-D and 0-D samples, FHWC clips, int32/int64/uint64/"
                    "float32 outputs, DataNode.shape()"}

_BATCHES = [
    [np.zeros((2, 3, 3), np.uint8), np.zeros((5, 1, 3), np.uint8), np.zeros((0, 4, 3), np.uint8)],
    [np.zeros(7, np.float32), np.zeros(0, np.float32), np.zeros(2, np.float32)],
    [np.float32(1), np.float32(2), np.float32(3)],
    [np.zeros((4, 2, 3, 3), np.uint8)] * 3,
]


@pytest.mark.parametrize("k", range(len(_BATCHES)))
def test_shapes_equal_dali(k):
    data = _BATCHES[k]
    layout = "FHWC" if data[0].ndim == 4 else ""

    def define(fn, types):
        x = fn.external_source(source=lambda: data, batch=True, layout=layout)
        return (fn.shapes(x), fn.shapes(x, dtype=types.INT32), fn.shapes(x, dtype=types.UINT64),
                fn.shapes(x, dtype=types.FLOAT), x.shape(), x.shape(dtype=types.INT32))

    out = run_both(define, 3)
    for j, (a, b) in enumerate(zip(out["stoker"][0], out["dali"][0])):
        assert_same(a, b, what=f"output {j}")
