"""optical_flow against DALI 2.4's optical_flow: both drive the GPU's optical-flow engine with
the same frames (RGB packed as ABGR8) and settings, so the vectors are compared exactly. Runs
where there is a GPU with the engine and DALI (the GPU machine)."""

import numpy as np
import pytest

from parity_util import SKIP_REASON, dali, has_gpu, run_both

PARITY = {"optical_flow": "exact: the same engine, frames and settings (GPU machine)"}

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)


def _clips():
    rng = np.random.default_rng(3)
    out = []
    for frames, h, w, vx, vy in ((4, 96, 128, 3, -2), (3, 120, 160, -1, 2), (5, 96, 128, 0, 4)):
        big = rng.integers(0, 255, (h // 8 + 8, w // 8 + 8, 3)).astype(np.float32)
        big = np.kron(big, np.ones((8, 8, 1)))
        for axis in (0, 1):  # smooth the blocks
            big = (np.roll(big, 2, axis) + np.roll(big, 1, axis) + big + np.roll(big, -1, axis)
                   + np.roll(big, -2, axis)) / 5
        big = big.astype(np.uint8)
        m = 24
        out.append(np.stack([big[m - vy * f:m - vy * f + h, m - vx * f:m - vx * f + w]
                             for f in range(frames)]))
    return out


CLIPS = _clips()


@pytest.mark.parametrize("kw", [dict(), dict(preset=0.5), dict(preset=1.0),
                                dict(enable_temporal_hints=True)],
                         ids=["slow", "medium", "fast", "temporal_hints"])
def test_optical_flow_equals_dali(kw):
    if not has_gpu():  # (not at module level: the coverage test imports this module)
        pytest.skip("optical_flow runs on the GPU's optical-flow engine: no GPU here")
    def define(fn, types):
        x = fn.external_source(source=lambda: CLIPS, batch=True, layout="FHWC")
        return fn.optical_flow(x.gpu(), **kw)

    out = run_both(define, batch_size=len(CLIPS), device_id=0)
    ours, theirs = out["stoker"][0][0], out["dali"][0][0]
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a.shape == b.shape and a.dtype == b.dtype, (i, a.shape, b.shape)
        assert np.array_equal(a, b), (i, np.abs(a - b).max(), np.mean(a != b))
