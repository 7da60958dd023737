"""The generated operator reference (docs/operators.md) and fn.pyi stubs match the registry."""
import ast
import os

import pytest

from stoker import _stoker, fn
from stoker.tools import reference


def test_generated_files_are_up_to_date():
    if not os.path.exists(reference.DOC_PATH):
        pytest.skip(f"no source tree beside this stoker ({reference.DOC_PATH})")
    if not _stoker.built_with_cuda:  # the reference lists each operator's GPU backends too
        pytest.skip("docs/operators.md is generated from a build with CUDA; this one has none")
    assert reference.stale() == [], "run: python -m stoker.tools.reference --write"


def test_every_operator_is_in_the_reference_and_the_stub():
    doc, stub = reference.markdown(), reference.stub()
    tree = ast.parse(stub)  # valid Python
    defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    for s in _stoker.schemas():
        if s["name"].startswith("_"):  # _conditional.*, inserted by `if` statements: internal
            assert f"\n## {s['name']}\n" not in doc and "_conditional" not in dir(fn)
            continue
        assert f"\n## {s['name']}\n" in doc, s["name"]
        assert s["name"].split(".")[-1] in defined, s["name"]
        func = fn
        for part in s["name"].split("."):
            func = getattr(func, part)
        assert callable(func), s["name"]


def test_stub_types_follow_the_schema():
    stub = reference.stub()
    line = next(x for x in stub.splitlines() if x.startswith("def flip("))
    assert "horizontal: int | DataNode = ..." in line  # a per-sample argument
    assert line.startswith("def flip(images: DataNode, /, *,") and line.endswith("-> DataNode: ...")
    assert "class readers:" in stub and "def file(" in stub
    line = next(x for x in stub.splitlines() if "def file(" in x)
    assert line.endswith("-> tuple[DataNode, DataNode]: ...")  # files and labels
