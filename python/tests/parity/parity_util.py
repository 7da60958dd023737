"""Helpers of the parity suite (see conftest.py): run one pipeline definition on stoker or on
DALI and compare the outputs."""

import ast
import glob
import importlib
import os

import numpy as np
import pytest

import stoker

try:
    import nvidia.dali as dali
except ImportError:  # each test module skips, saying why
    dali = None

SKIP_REASON = "NVIDIA DALI 2.4 is not installed (scripts/setup installs it)"


def has_gpu():
    return stoker._stoker.cuda_available()


def dali_operator(name):
    """DALI's fn function of operator `name` ("readers.coco"), or None where DALI has none."""
    node = dali.fn
    for part in name.split("."):
        node = getattr(node, part, None)
        if node is None:
            return None
    return node


def shared_operators():
    """The operators both libraries have: stoker's native ones and those Python composes of
    them (stoker._schema.WRAPPERS), where DALI's fn has the name."""
    ours = set(stoker._schema.SCHEMAS)
    ours |= {name for name, w in stoker._schema.WRAPPERS.items() if w.schema is None}
    return {name for name in ours if dali_operator(name) is not None}


DIFFERENCES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs",
                           "dali_differences.md")


def differences_rows(title):
    """The table rows (lists of cells) of docs/dali_differences.md's section `title`."""
    text = open(DIFFERENCES, encoding="utf-8").read()
    assert title in text, f"docs/dali_differences.md has no section '{title}'"
    section = text.split(title, 1)[1].split("\n## ", 1)[0]
    return [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in section.splitlines() if line.startswith("| `")]


def run_both_or_skip(define, batch_size, **kwargs):
    """run_both, skipping the test when either library has no backend for an operator on the
    device asked for (DALI's jitter has no CPU backend; some operators no GPU one)."""
    try:
        return run_both(define, batch_size, **kwargs)
    except (RuntimeError, ValueError) as e:
        text = str(e)
        if "not registered for" in text or "backend" in text:
            pytest.skip(f"no such backend in one of the libraries: {text.splitlines()[-1][:160]}")
        raise

LIBS = ("stoker", "dali")


def _lib(name):
    if name == "stoker":
        return stoker.pipeline_def, stoker.fn, stoker.types, {}
    return dali.pipeline_def, dali.fn, dali.types, {"device_id": None}


def samples(batch):
    """A batch of either library (CPU or GPU) as a list of numpy arrays."""
    if type(batch).__name__ == "TensorListGPU" or getattr(batch, "device", "cpu") == "gpu":
        batch = batch.as_cpu()
    return [np.array(batch.at(i)) for i in range(len(batch))]


def run(lib, define, batch_size, iterations=1, seed=12, num_threads=2, **pipe_kwargs):
    """Builds `define(fn, types)` with library `lib` ("stoker" or "dali") and runs it:
    [iteration][output] -> list of numpy samples."""
    pipeline_def, fn, types, extra = _lib(lib)
    extra = {**extra, **pipe_kwargs}

    @pipeline_def(batch_size=batch_size, num_threads=num_threads, seed=seed, **extra)
    def pipe_def():
        return define(fn, types)

    pipe = pipe_def()
    pipe.build()
    out = []
    for _ in range(iterations):
        res = pipe.run()
        res = res if isinstance(res, (list, tuple)) else [res]
        out.append([samples(b) for b in res])
    return out


def run_both(define, batch_size, **kwargs):
    """{"stoker": ..., "dali": ...} of run()."""
    return {lib: run(lib, define, batch_size, **kwargs) for lib in LIBS}


def assert_same(a, b, atol=0, what="", max_mismatch=0.0):
    """Every sample equal in shape and dtype, and in value within `atol` (on all but a
    fraction `max_mismatch` of the elements)."""
    assert len(a) == len(b), what
    for i, (x, y) in enumerate(zip(a, b)):
        assert x.shape == y.shape, f"{what} sample {i}: shape {x.shape} vs DALI {y.shape}"
        assert x.dtype == y.dtype, f"{what} sample {i}: dtype {x.dtype} vs DALI {y.dtype}"
        if x.size == 0:
            continue
        diff = np.abs(x.astype(np.float64) - y.astype(np.float64))
        bad = np.mean(diff > atol)
        assert bad <= max_mismatch, (f"{what} sample {i}: {bad:.4%} of values differ by more "
                                     f"than {atol} (max {diff.max()})")


def parity_declarations():
    """{operator: (how, module)} from every test module's PARITY."""
    out = {}
    here = os.path.dirname(__file__)
    for path in sorted(glob.glob(os.path.join(here, "test_*.py"))):
        name = os.path.splitext(os.path.basename(path))[0]
        try:
            module = importlib.import_module(f"{__package__ + '.' if __package__ else ''}{name}")
            parity = getattr(module, "PARITY", {})
        except pytest.skip.Exception:  # a module that needs what this machine lacks (Paddle)
            parity = _literal_parity(path)  # its comparisons exist, they run elsewhere
        for op, how in parity.items():
            out[op] = (how, name)
    return out


def _literal_parity(path):
    """A module's PARITY read from its source (a literal dict), {} where it is computed."""
    with open(path) as f:
        for node in ast.parse(f.read()).body:
            if (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and getattr(node.targets[0], "id", None) == "PARITY"):
                try:
                    return ast.literal_eval(node.value)
                except ValueError:
                    return {}
    return {}




def assert_like_dali(define, batch_size, device, atol, share, what, place):
    """An operator table's case (test_parity_image_ops.py, test_parity_sequences.py): `define`
    run by both libraries on `device`'s backends, compared within `atol` on all but a fraction
    `share` of the elements. `place(on_gpu)` puts the case's inputs on the GPU or back. On the
    GPU float tolerances grow x10, and where DALI's GPU backend differs from its CPU one
    (brightness rounding, nearest-neighbour ties), stoker's GPU backend, which equals its CPU
    twin, is held to DALI's CPU backend."""
    kwargs = {}
    gpu_atol = atol
    if device == "gpu":
        if not has_gpu():
            pytest.skip("no CUDA device: the GPU backends are compared on the GPU machine")
        kwargs["device_id"] = 0
        gpu_atol = atol * 10 if atol < 1 else atol
    place(device == "gpu")
    try:
        out = run_both_or_skip(define, batch_size, **kwargs)
    finally:
        place(False)
    ours = out["stoker"][0][0]
    try:
        assert_same(ours, out["dali"][0][0], atol=gpu_atol, max_mismatch=share,
                    what=f"{what} ({device})")
    except AssertionError:
        if device != "gpu":
            raise
        cpu = run_both_or_skip(define, batch_size)["dali"][0][0]
        assert_same(ours, cpu, atol=atol, max_mismatch=share,
                    what=f"{what} (gpu, against DALI's CPU backend)")
