"""box_encoder against DALI 2.4: SSD-like anchors, samples with several, one and no boxes, with
and without offsets (means, stds, scale)."""
import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, run

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {"box_encoder": "exact"}


def _anchors():
    rows = []
    for f, s in ((8, 0.2), (4, 0.45), (2, 0.8)):
        for y in range(f):
            for x in range(f):
                cx, cy = (x + 0.5) / f, (y + 0.5) / f
                rows.append([cx - s / 2, cy - s / 2, cx + s / 2, cy + s / 2])
    return np.clip(np.float32(rows), 0, 1).ravel().tolist()


_RNG = np.random.default_rng(6)
_BOXES, _LABELS = [], []
for _n in (5, 0, 1, 12):
    _lo = _RNG.uniform(0, 0.6, (_n, 2))
    _BOXES.append(np.float32(np.concatenate([_lo, _lo + _RNG.uniform(0.05, 0.4, (_n, 2))], 1)))
    _LABELS.append(np.int32(_RNG.integers(1, 80, _n)))


@pytest.mark.parametrize("kwargs", [
    {},
    {"criteria": 0.3},
    {"offset": True},
    {"offset": True, "scale": 300.0, "means": [0.0, 0.1, 0.0, 0.2], "stds": [0.1, 0.1, 0.2, 0.2]},
], ids=lambda k: ",".join(k) or "defaults")
def test_box_encoder_equals_dali(kwargs):
    def define(fn, types):
        b = fn.external_source(source=lambda: _BOXES, batch=True)
        l = fn.external_source(source=lambda: _LABELS, batch=True)
        return tuple(fn.box_encoder(b, l, anchors=_anchors(), **kwargs))
    ours, theirs = (run(lib, define, 4)[0] for lib in ("stoker", "dali"))
    for k in range(2):
        assert_same(ours[k], theirs[k], what=f"output {k}")
