"""The PyTorch iterator's epoch loop against DALI 2.4's, the script written once and run with
`nvidia.dali` or `stoker` as its package: a new `for` loop over an iterator that has given
batches starts the next epoch (no reset() needed), with or without auto_reset, with the old
explicit reset() between loops, after a loop that broke off, with fill_last_batch and with
prepare_first_batch=False. The labels each loop sees must be DALI's."""

import importlib
import warnings

import pytest

from parity_util import SKIP_REASON, dali

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)
pytest.importorskip("torch")

FILES = 8  # one file per class: the label says which file a sample is


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    d = tmp_path_factory.mktemp("epochs")
    for k in range(FILES):
        (d / f"c{k}").mkdir()
        (d / f"c{k}" / "x.jpg").write_bytes(bytes([k]) * 4)
    return str(d)


def _loops(package, root, loops, reset_between=False, break_after=None, **it_kwargs):
    lib = importlib.import_module(package)
    fn = importlib.import_module(f"{package}.fn")
    pytorch = importlib.import_module(f"{package}.plugin.pytorch")

    @lib.pipeline_def(batch_size=3, num_threads=1, device_id=None, seed=5)
    def pipe():
        data, labels = fn.readers.file(file_root=root, name="Reader")
        return data, labels

    p = pipe()
    it = pytorch.DALIClassificationIterator(p, reader_name="Reader", **it_kwargs)
    seen = []
    for k in range(loops):
        labels = []
        for i, batch in enumerate(it):
            labels.append(batch[0]["label"].flatten().tolist())
            if break_after is not None and k == 0 and i + 1 == break_after:
                break
        seen.append(labels)
        if reset_between:
            it.reset()
    return seen


CASES = {
    "plain": dict(),
    "auto_reset": dict(auto_reset=True),
    "reset_between": dict(reset_between=True),
    "broken_off": dict(break_after=1),
    "partial": dict(last_batch_policy="PARTIAL"),
    "drop": dict(last_batch_policy="DROP"),
    "fill_last_batch_false": dict(fill_last_batch=False),
    "not_prepared": dict(prepare_first_batch=False),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_epoch_loops_equal_dali(root, case):
    results = {}
    for package in ("stoker", "nvidia.dali"):
        kwargs = dict(CASES[case])
        policy = kwargs.pop("last_batch_policy", None)
        if policy is not None:
            base = importlib.import_module(f"{package}.plugin.base_iterator")
            kwargs["last_batch_policy"] = getattr(base.LastBatchPolicy, policy)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results[package] = _loops(package, root, 4, **kwargs)
    assert results["stoker"] == results["nvidia.dali"]
    assert all(results["stoker"][1:])  # every later loop trained on something

