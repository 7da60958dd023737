"""element_extract and sequence_rearrange against DALI 2.4 (CPU): exactly equal outputs and
layouts, on sequences of several sizes."""

import numpy as np
import pytest

from parity_util import SKIP_REASON, dali, run_both

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {"element_extract": "exact", "sequence_rearrange": "exact"}


def data():
    rng = np.random.default_rng(11)
    return [rng.integers(0, 255, (f, 4, 5, 3), dtype=np.uint8) for f in (6, 4, 9)]


def test_element_extract_and_sequence_rearrange_equal_dali():
    seqs = data()

    def define(fn, types):
        x = fn.external_source(source=lambda: seqs, batch=True, layout="FHWC")
        a, b = fn.element_extract(x, element_map=[3, 1])
        return a, b, fn.sequence_rearrange(x, new_order=[3, 0, 0, 2, 1])

    out = run_both(define, batch_size=3)
    for ours, theirs in zip(out["stoker"][0], out["dali"][0]):
        assert len(ours) == len(theirs)
        for x, y in zip(ours, theirs):
            assert x.shape == y.shape and np.array_equal(x, y)
