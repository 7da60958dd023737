"""The drop-in rule, tested as a user meets it: DALI's own documentation examples
(python/tests/dropin/*.py, written for `nvidia.dali` with only their data paths and device
taken from the environment) run once as they are, on DALI 2.4, and once with every `nvidia.dali`
replaced by `stoker` — nothing else changed. Each script leaves its observations in RESULTS and
says in COMPARE how each is compared: "exact" (default), ("tolerance", atol) (every element),
("mean_abs", limit) (the mean absolute difference: resampling's tabulated filters), ("moments",
rtol) (same dtype and shape, mean and standard deviation within rtol of DALI's, relative to
DALI's standard deviation: many values drawn from one distribution), "shape" (same type, dtype and
shape) or "kind" (same type, dtype and number of dimensions): the last three for values drawn at
random, whose random streams differ by design (docs/dali_differences.md). Scripts find the shared
test data in DROPIN_DATA, the test videos (python/tests/video_fixtures.py) in DROPIN_VIDEOS and
the GPU to use in DROPIN_DEVICE_ID (empty: CPU only).

Every operator both libraries have appears in some script (test_every_shared_operator_has_an_
example), except those in NO_EXAMPLE, each with its reason."""

import glob
import os
import pickle
import re
import subprocess
import sys

import numpy as np
import pytest

from parity_util import SKIP_REASON, dali, has_gpu, shared_operators
from video_fixtures import videos_or_skip

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = sorted(glob.glob(os.path.join(HERE, "..", "dropin", "*.py")))
FRAMEWORKS = ("torch", "jax", "paddle", "tensorflow", "astropy")  # scripts' own imports
# (maybe absent)
RUNNER = ("import pickle, runpy, sys\n"
          "ns = runpy.run_path(sys.argv[1], run_name='__main__')\n"
          "pickle.dump((ns['RESULTS'], ns.get('COMPARE', {})), open(sys.argv[2], 'wb'))\n")


def _run(script, package, tmp_path, env):
    text = open(script, encoding="utf-8").read()
    if package == "stoker":
        text = text.replace("nvidia.dali", "stoker")
    path = tmp_path / f"{package}_{os.path.basename(script)}"
    path.write_text(text)
    out = tmp_path / f"{package}.pkl"
    r = subprocess.run([sys.executable, "-c", RUNNER, str(path), str(out)], env=env,
                       capture_output=True, text=True, timeout=600)
    missing = re.search(r"ModuleNotFoundError: No module named '([\w.]+)'", r.stderr)
    if r.returncode and missing and missing.group(1) in FRAMEWORKS:
        pytest.skip(f"{missing.group(1)} is not installed here")
    if r.returncode and missing and missing.group(1) == "nvidia.dali_tf_plugin":
        pytest.skip("DALI's TensorFlow plugin is not installed here (scripts/setup installs it)")
    lacking = re.search(r"stoker was built without [^:\n]*", r.stderr)
    if r.returncode and package == "stoker" and lacking:
        pytest.skip(f"{lacking.group(0)} (the library this example reads with)")
    assert r.returncode == 0, f"{package} run of {os.path.basename(script)}:\n{r.stderr[-3000:]}"
    return pickle.loads(out.read_bytes())


def _compare(key, ours, theirs, how):
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and sorted(ours) == sorted(theirs), key
        for k in theirs:
            _compare(f"{key}.{k}", ours[k], theirs[k], how)
        return
    if isinstance(theirs, (list, tuple)):
        assert isinstance(ours, (list, tuple)) and len(ours) == len(theirs), \
            f"{key}: {len(ours)} items, DALI {len(theirs)}"
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _compare(f"{key}[{i}]", a, b, how)
        return
    if isinstance(theirs, np.ndarray) or isinstance(ours, np.ndarray):
        a, b = np.asarray(ours), np.asarray(theirs)
        if how == "kind":
            assert a.dtype == b.dtype and a.ndim == b.ndim, \
                f"{key}: {a.dtype}{a.shape}, DALI {b.dtype}{b.shape}"
            return
        assert a.dtype == b.dtype and a.shape == b.shape, \
            f"{key}: {a.dtype}{a.shape}, DALI {b.dtype}{b.shape}"
        if how == "shape":
            return
        if isinstance(how, tuple) and how[0] == "moments":
            a, b = a.astype(np.float64), b.astype(np.float64)
            scale = max(b.std(), 1e-12)
            assert abs(a.mean() - b.mean()) <= how[1] * scale, \
                f"{key}: mean {a.mean()}, DALI {b.mean()} (std {b.std()})"
            assert abs(a.std() - b.std()) <= how[1] * scale, \
                f"{key}: standard deviation {a.std()}, DALI {b.std()}"
            return
        if isinstance(how, tuple) and how[0] == "mean_abs":
            diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
            assert diff.mean() <= how[1], f"{key}: differs by {diff.mean()} on average"
            return
        if isinstance(how, tuple) and how[0] == "tolerance":
            diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
            assert diff.max(initial=0) <= how[1], f"{key}: differs by {diff.max()} > {how[1]}"
            return
        np.testing.assert_array_equal(a, b, err_msg=key)
        return
    if how in ("shape", "kind"):
        assert type(ours) is type(theirs), f"{key}: {type(ours)} vs DALI {type(theirs)}"
        return
    assert ours == theirs, f"{key}: {ours!r}, DALI {theirs!r}"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: os.path.basename(p)[:-3])
def test_dali_example_runs_unchanged_with_dalis_results(script, tmp_path, shared_data):
    env = dict(os.environ, DROPIN_DATA=shared_data, PYTHONWARNINGS="ignore")
    if "DROPIN_VIDEOS" in open(script, encoding="utf-8").read():
        videos = videos_or_skip(tmp_path / "videos")
        env["DROPIN_VIDEOS"] = os.path.dirname(next(iter(videos.values())))
    env["DROPIN_DEVICE_ID"] = "0" if has_gpu() else ""
    theirs, compare = _run(script, "nvidia.dali", tmp_path, env)
    ours, _ = _run(script, "stoker", tmp_path, env)
    assert sorted(ours) == sorted(theirs)
    for key in theirs:
        _compare(key, ours[key], theirs[key], compare.get(key, "exact"))


# Operators both libraries have that no script shows, and why.
NO_EXAMPLE = {
}


def test_every_shared_operator_has_an_example():
    shared = {n for n in shared_operators() if not n.startswith("_")}
    text = "".join(open(p, encoding="utf-8").read() for p in SCRIPTS)
    used = set(re.findall(r"\bfn\.([\w.]+)\(", text))
    missing = sorted(shared - used - set(NO_EXAMPLE))
    assert not missing, f"operators both libraries have, shown by no drop-in script: {missing}"
    stale = sorted(set(NO_EXAMPLE) & used)
    assert not stale, f"NO_EXAMPLE lists operators a script shows: {stale}"
