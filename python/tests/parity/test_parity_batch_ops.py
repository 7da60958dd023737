"""get_property, permute_batch, batch_permutation and random.beta against DALI 2.4: the
properties and permuted batches exactly (source_info following its sample), the random ones as
distributions (the libraries draw from different generators)."""
import math
import os

import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, run

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {
    "get_property": "exact: source_info of a reader's samples, layouts (empty ones too)",
    "permute_batch": "exact: constant and per-sample indices, source_info moved along",
    "batch_permutation": "distribution: permutations, single cycles (no_fixed_points), draws "
                         "with repetition",
    "random.beta": "distribution: moments and CDF for parameters above and below 1; shapes and "
                   "dtypes exactly",
}

_DATA = [np.full((2, i + 1), i, np.int16) for i in range(4)]


def _files(ten_files):
    return sorted(os.path.join(ten_files, d, "x.jpg") for d in os.listdir(ten_files))[:4]


def test_get_property_and_permute_batch_equal_dali(ten_files):
    files = _files(ten_files)
    order = [np.int32(v) for v in (2, 0, 0, 3)]

    def define(fn, types):
        data, _ = fn.readers.file(files=files)
        x = fn.external_source(source=lambda: _DATA, batch=True, layout="AB")
        plain = fn.external_source(source=lambda: _DATA, batch=True)
        moved = fn.permute_batch(data, indices=[3, 3, 0, 1])
        by_node = fn.permute_batch(x, indices=fn.external_source(source=lambda: order,
                                                                 batch=True))
        return (fn.get_property(data, key="source_info"), fn.get_property(moved, key="source_info"),
                fn.get_property(x, key="layout"), fn.get_property(plain, key="layout"),
                fn.get_property(x, key="source_info"), fn.permute_batch(x, indices=[1, 1, 3, 0]),
                by_node, fn.get_property(by_node, key="layout"))
    out = {lib: run(lib, define, 4)[0] for lib in ("stoker", "dali")}
    for k, (a, b) in enumerate(zip(out["stoker"], out["dali"])):
        assert_same(a, b, what=f"output {k}")


def _permutations(lib, batch_size, iterations, **kwargs):
    runs = run(lib, lambda fn, types: fn.batch_permutation(**kwargs), batch_size, iterations)
    return [tuple(int(v) for v in it[0]) for it in runs]


@pytest.mark.parametrize("kwargs", [{}, {"no_fixed_points": True}], ids=["plain", "no_fixed"])
def test_batch_permutations_spread_alike(kwargs):
    """The same set of permutations of 4, each about equally often (24 plain ones; the 6
    single cycles without fixed points, in both)."""
    seen = {}
    for lib in ("stoker", "dali"):
        draws = _permutations(lib, 4, 600, **kwargs)
        seen[lib] = {p: draws.count(p) for p in set(draws)}
        expected = 600 / len(seen[lib])
        assert all(abs(c - expected) < 5 * math.sqrt(expected) for c in seen[lib].values()), lib
    assert set(seen["stoker"]) == set(seen["dali"])


@pytest.mark.parametrize("no_fixed", [False, True])
def test_batch_permutations_with_repetition_alike(no_fixed):
    freq = {}
    for lib in ("stoker", "dali"):
        draws = np.array(_permutations(lib, 5, 600, allow_repetitions=True,
                                       no_fixed_points=no_fixed))
        freq[lib] = np.array([np.bincount(draws[:, i], minlength=5) for i in range(5)]) / 600
    np.testing.assert_allclose(freq["stoker"], freq["dali"], atol=0.08)
    if no_fixed:
        assert np.all(np.diag(freq["stoker"]) == 0) and np.all(np.diag(freq["dali"]) == 0)


@pytest.mark.parametrize("a,b", [(1.0, 1.0), (2.0, 5.0), (0.5, 3.0), (0.2, 0.3)])
def test_beta_draws_alike(a, b):
    out = {}
    for lib in ("stoker", "dali"):
        runs = run(lib, lambda fn, types: fn.random.beta(alpha=a, beta=b, shape=[5000]), 4,
                   iterations=2)
        out[lib] = np.concatenate([s for it in runs for s in it[0]]).astype(np.float64)
    x, y = out["stoker"], out["dali"]
    std = math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    assert abs(x.mean() - y.mean()) < 6 * std / math.sqrt(x.size)
    assert abs(x.std() - y.std()) < 0.03 * std
    for q in (0.05, 0.25, 0.5, 0.75, 0.95):  # two-sample comparison of the CDFs
        assert abs(np.mean(x < q) - np.mean(y < q)) < 3 / math.sqrt(x.size)


def test_beta_shapes_and_dtypes_equal_dali():
    alphas = [np.float32(v) for v in (0.5, 2.0, 8.0, 1.0)]

    def define(fn, types):
        x = fn.external_source(source=lambda: _DATA, batch=True)
        a = fn.external_source(source=lambda: alphas, batch=True)
        return (fn.random.beta(), fn.random.beta(x, alpha=a), fn.random.beta(shape=3),
                fn.random.beta(shape=[2, 3], dtype=types.FLOAT64))
    out = {lib: run(lib, define, 4)[0] for lib in ("stoker", "dali")}
    for k, (mine, theirs) in enumerate(zip(out["stoker"], out["dali"])):
        assert [(s.shape, s.dtype) for s in mine] == [(s.shape, s.dtype) for s in theirs], k
        for s in mine:
            assert np.all((s >= 0) & (s <= 1))
