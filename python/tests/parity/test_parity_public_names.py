"""DALI's Python surface under stoker's name: every public name of DALI 2.4's modules (the package,
`types`, `tensors`, `backend`, `pipeline`, `math`, the plugins, `auto_aug`, and every operator of
`fn` and `ops`) exists in stoker at the same path with `nvidia.dali` replaced by `stoker`, or
docs/dali_differences.md lists it, with a reason, under "DALI names stoker does not have". The
list stays honest: a listed name that stoker has is an error too."""

import importlib
import inspect
import re
import types as pytypes

import pytest

from parity_util import SKIP_REASON, dali, differences_rows

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

import stoker  # noqa: E402,F401

SECTION = "## DALI names stoker does not have"

# DALI's modules a script imports from (plugin.tf needs DALI's TensorFlow plugin, plugin.paddle
# and plugin.numba their frameworks: walked where they import). plugin.paddle comes before
# plugin.tf: DALI's plugin imports Paddle plainly, which crashes after TensorFlow is loaded.
MODULES = ["", "types", "tensors", "backend", "pipeline", "data_node", "math", "tfrecord",
           "external_source", "plugin", "plugin.base_iterator", "plugin.pytorch",
           "plugin.pytorch.fn", "plugin.pytorch.experimental",
           "plugin.pytorch.experimental.proxy", "plugin.jax", "plugin.jax.fn", "plugin.paddle",
           "plugin.tf", "plugin_manager", "sysconfig", "auto_aug", "auto_aug.auto_augment",
           "auto_aug.rand_augment", "auto_aug.trivial_augment", "auto_aug.augmentations",
           "auto_aug.core"]


def _public(module):
    """The names a script may use: not private, not imported from other libraries (numpy as np,
    typing's names), not another DALI module imported under a local name."""
    names = {}
    for name in dir(module):
        if name.startswith("_"):
            continue
        obj = getattr(module, name)
        if isinstance(obj, pytypes.ModuleType):
            if obj.__name__ != f"{module.__name__}.{name}":  # `from nvidia.dali import types`
                continue
        else:
            owner = getattr(obj, "__module__", None) or ""
            if owner in ("typing", "__future__") or (
                    owner and not owner.startswith("nvidia.dali") and
                    (inspect.isclass(obj) or callable(obj))):
                continue
        names[name] = obj
    return names


def _dali_names():
    """Every public name, as 'nvidia.dali.x.y'."""
    found = set()
    for path in MODULES:
        full = "nvidia.dali" + ("." + path if path else "")
        try:
            module = importlib.import_module(full)
        except ImportError:  # a framework (or DALI's TF plugin) that is not installed here
            continue
        found.update(f"{full}.{n}" for n in _public(module))
    for space in ("fn", "ops"):
        stack = [importlib.import_module(f"nvidia.dali.{space}")]
        while stack:
            module = stack.pop()
            for name, obj in _public(module).items():
                if name == "hidden":  # DALI's namespace of undocumented duplicates
                    continue
                found.add(f"{module.__name__}.{name}")
                if isinstance(obj, pytypes.ModuleType):
                    stack.append(obj)
    return found


def _unimportable():
    """DALI's modules of MODULES that cannot be imported here (their framework is missing)."""
    missing = []
    for path in MODULES:
        full = "nvidia.dali" + ("." + path if path else "")
        try:
            importlib.import_module(full)
        except ImportError:
            missing.append(full)
    return missing


def _stoker_has(dali_name):
    path = dali_name.split(".")[2:]  # drop nvidia.dali
    for k in range(len(path), 0, -1):  # the longest importable module, then attributes
        try:
            obj = importlib.import_module(".".join(["stoker"] + path[:k]))
        except ImportError:
            continue
        for part in path[k:]:
            if not hasattr(obj, part):
                return False
            obj = getattr(obj, part)
        return True
    obj = importlib.import_module("stoker")
    for part in path:
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def _listed():
    """{name or prefix.*: reason} from the differences page's section."""
    rows = {}
    for cells in differences_rows(SECTION):
        if len(cells) == 2:
            for name in re.findall(r"`(nvidia\.dali[^`]*)`", cells[0]):
                rows[name] = cells[1]
    return rows


def _listed_reason(name, listed):
    if name in listed:
        return listed[name]
    return next((r for k, r in listed.items() if k.endswith(".*") and
                 name.startswith(k[:-1])), None)


def test_every_dali_name_is_in_stoker_or_listed_with_a_reason():
    listed = _listed()
    missing = sorted(n for n in _dali_names()
                     if not _stoker_has(n) and not _listed_reason(n, listed))
    assert not missing, (f"{len(missing)} DALI names that stoker lacks and "
                         f"docs/dali_differences.md does not list: {missing}")


def test_listed_names_are_really_missing_and_have_reasons():
    listed = _listed()
    assert len(listed) > 10
    dali_names = _dali_names()
    stale = sorted(n for n in listed if not n.endswith(".*") and _stoker_has(n))
    assert not stale, f"listed as missing but stoker has them (remove the rows): {stale}"
    unwalked = tuple(m + "." for m in _unimportable())  # DALI's TF plugin without TensorFlow
    unknown = sorted(n for n in listed if not n.endswith(".*") and n not in dali_names
                     and not n.startswith(unwalked))
    assert not unknown, f"listed names DALI 2.4 does not have: {unknown}"
    assert all(len(r) > 10 for r in listed.values())


def test_the_walk_sees_what_scripts_use():
    names = _dali_names()
    for name in ("nvidia.dali.fn.readers.file", "nvidia.dali.ops.readers.File",
                 "nvidia.dali.plugin.pytorch.DALIGenericIterator", "nvidia.dali.types.FLOAT",
                 "nvidia.dali.tensors.TensorListCPU", "nvidia.dali.math.sqrt",
                 "nvidia.dali.fn.file_reader", "nvidia.dali.pipeline_def"):
        assert name in names and _stoker_has(name), name
    assert not _stoker_has("nvidia.dali.fn.no_such_operator")
