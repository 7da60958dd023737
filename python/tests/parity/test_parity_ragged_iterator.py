"""RaggedIterator against DALI 2.4's DALIRaggedIterator (CPU pipelines): the same ragged batches
give the same per-sample lists, sparse COO tensors and dense tensors."""

import numpy as np
import pytest

from parity_util import SKIP_REASON, dali

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)
torch = pytest.importorskip("torch")

import stoker  # noqa: E402

RAGGED = [np.arange(2, dtype=np.float32), np.arange(3, dtype=np.float32) + 10,
          np.arange(1, dtype=np.float32) + 20]
DENSE = [np.full(2, k, np.int32) for k in range(3)]


def _steps(lib):
    if lib == "stoker":
        from stoker.plugins.torch import RaggedIterator as It
        pipe, fn = stoker.Pipeline(batch_size=3), stoker.fn
    else:
        from nvidia.dali.plugin.pytorch import DALIRaggedIterator as It
        pipe, fn = dali.Pipeline(batch_size=3, num_threads=1, device_id=None), dali.fn
    with pipe:
        pipe.set_outputs(fn.external_source(lambda: RAGGED, batch=True),
                         fn.external_source(lambda: RAGGED, batch=True),
                         fn.external_source(lambda: DENSE, batch=True))
    pipe.build()
    it = It(pipe, ["list", "coo", "dense"], size=6,
            output_types=[It.SPARSE_LIST_TAG, It.SPARSE_COO_TAG, It.DENSE_TAG])
    return [s[0] for s in it]


def test_ragged_iterator_equals_dali():
    ours, theirs = _steps("stoker"), _steps("dali")
    assert len(ours) == len(theirs) == 2
    for a, b in zip(ours, theirs):
        assert [t.tolist() for t in a["list"]] == [t.tolist() for t in b["list"]]
        assert torch.equal(a["coo"].to_dense(), b["coo"].to_dense())
        assert torch.equal(a["dense"], b["dense"])
