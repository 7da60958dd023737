"""The operator reference (docs/operators.md) and the type stubs of stoker.fn and stoker.ops
(fn.pyi, ops.pyi),
generated from the operator registry so that neither is kept by hand.

    python -m stoker.tools.reference --write    regenerates both files in the source tree
    python -m stoker.tools.reference --check    fails when either is out of date

python/tests/test_reference.py runs the check: a new operator, argument or doc string shows up
in both the next time they are generated."""

import argparse
import inspect
import os
import sys

from stoker import _schema, fn, ops

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.realpath(__file__)))))
DOC_PATH = os.path.join(_ROOT, "docs", "operators.md")
STUB_PATH = os.path.join(_ROOT, "python", "stoker", "fn.pyi")

_SEQUENCES = (" Takes sequences (a layout starting with F: FHWC, FCHW) frame by frame, one random "
              "decision per sequence; per_frame arguments vary by frame.")
_STUB_TYPES = {"bool": "bool", "int": "int", "float": "float", "str": "str",
               "list of int": "Sequence[int]", "list of float": "Sequence[float]",
               "list of str": "Sequence[str]", "dtype": "DTypeLike"}


def _public_schemas():
    """The schemas of the operators users call (not `_conditional.*`, which `if` statements on
    pipeline values insert)."""
    return [s for s in _schema.SCHEMAS.values() if _schema.public(s["name"])]


def _schemas():
    return sorted(_public_schemas(), key=lambda s: s["name"])


def _example_call(s):
    ex = s["example"]
    if ex is None:
        return None
    inputs = [s["inputs"][0]] if s["variadic_inputs"] else list(s["inputs"])
    inputs = inputs[:len(inputs) - s["optional_inputs"]] if s["optional_inputs"] else inputs
    args = [f"{k}={repr(v)}" for k, v in sorted(ex["args"].items())]
    return f"fn.{s['name']}({', '.join(inputs + args)})"


def _first_sentence(doc):
    text = " ".join(doc.split())
    end = text.find(". ")
    return text if end < 0 else text[:end + 1]


def _cell(text):
    return " ".join(str(text).split()).replace("|", "\\|")


def markdown():
    """docs/operators.md."""
    schemas = _schemas()
    out = ["# Operator reference", "",
           "Generated from stoker's operator registry (`python -m stoker.tools.reference "
           "--write`); do not edit. In Python each operator is `stoker.fn.<name>`; "
           "`help(fn.<name>)` shows the same text.", "",
           "| operator | backends | what it does |", "|---|---|---|"]
    for s in schemas:
        anchor = s["name"].replace(".", "")
        out.append(f"| [`{s['name']}`](#{anchor}) | {', '.join(s['backends'])} | "
                   f"{_cell(_first_sentence(s['doc']))} |")
    for s in schemas:
        out += ["", f"## {s['name']}", "", " ".join(s["doc"].split()), ""]
        line = ""
        if s["inputs"]:
            more = " (more may follow)" if s["variadic_inputs"] else ""
            if s["optional_inputs"]:
                more = f" (the last {s['optional_inputs']} optional)"
            line = f"Inputs: {', '.join(s['inputs'])}{more}. "
        outputs = ", ".join(s["outputs"]) or "one per entry of the arguments that name them"
        out.append(f"{line}Outputs: {outputs}. Backends: {', '.join(s['backends'])}."
                   + (_SEQUENCES if s["sequences"] else ""))
        call = _example_call(s)
        if call:
            out += ["", f"Smallest use: `{call}`"]
        if s["args"]:
            out += ["", "| argument | type | default | per-sample | meaning |",
                    "|---|---|---|---|---|"]
            for a in s["args"]:
                default = "required" if a["required"] else _cell(repr(a.get("default")))
                out.append(f"| `{a['name']}` | {a['type']} | {default} | "
                           f"{'yes' if a['per_sample'] else ''} | {_cell(a['doc'])} |")
    return "\n".join(out) + "\n"


def _stub_def(name, func, schema, indent):
    """One `def` of the stub: the function's signature, typed from its schema."""
    types = {a["name"]: a for a in schema["args"]} if schema else {}
    params, kinds = [], set()
    sig = inspect.signature(func)
    for p in sig.parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            params.append(f"*{p.name}: DataNode")
            kinds.add(p.kind)
            continue
        if p.kind is p.VAR_KEYWORD:
            params.append(f"**{p.name}: Any")
            continue
        if p.kind is p.KEYWORD_ONLY and p.KEYWORD_ONLY not in kinds and \
                p.VAR_POSITIONAL not in kinds:
            params.append("*")
        kinds.add(p.kind)
        if p.kind is p.POSITIONAL_ONLY:
            annotation = "DataNode"
        elif p.name in types:
            a = types[p.name]
            annotation = _STUB_TYPES.get(a["type"], "Any")
            if a["per_sample"]:
                annotation += " | DataNode"
            if not a["required"] and a.get("default") is None:
                annotation += " | None"
        elif p.name in ("device", "name"):
            annotation = "str | None"
        else:
            annotation = "Any"
        default = "" if p.default is p.empty else " = ..."
        params.append(f"{p.name}: {annotation}{default}")
    if any(p.kind is p.POSITIONAL_ONLY for p in sig.parameters.values()):
        last = max(i for i, p in enumerate(sig.parameters.values())
                   if p.kind is p.POSITIONAL_ONLY)
        params.insert(last + 1, "/")
    if schema is None or schema["outputs_from"] or schema["dynamic_outputs"]:
        result = "Any"
    else:
        result = "DataNode" if len(schema["outputs"]) == 1 else \
            f"tuple[{', '.join(['DataNode'] * len(schema['outputs']))}]"
    decorator = f"{indent}@staticmethod\n" if indent else ""
    return f"{decorator}{indent}def {name}({', '.join(params)}) -> {result}: ..."


# The first lines of both stubs.
_STUB_HEADER = ('"""Generated from the operator registry (python -m stoker.tools.reference '
                '--write); do not edit."""', "", "from typing import Any, Sequence", "",
                "from stoker.node import DataNode", "", "DTypeLike = Any", "")


def stub():
    """python/stoker/fn.pyi: every fn operator (nested namespaces as classes), and the Python
    functions stoker._schema.WRAPPERS declares (typed from the schema they stand on)."""
    schemas = {s["name"]: s for s in _public_schemas()}
    typed_by = {name: schemas.get(name) for name in schemas}
    typed_by.update({name: schemas.get(w.schema) for name, w in _schema.WRAPPERS.items()})
    lines = list(_STUB_HEADER)

    def emit(prefix, names, indent):
        # Functions of this namespace first, then its nested namespaces as classes
        # (io.file.read: class io, class file inside it).
        depth = len(prefix)
        nested = {}
        for name in names:
            parts = name.split(".")
            if len(parts) == depth + 1:
                func = fn
                for part in parts:
                    func = getattr(func, part)
                lines.append(_stub_def(parts[-1], func, typed_by[name], indent))
            else:
                nested.setdefault(parts[depth], []).append(name)
        for space, inner in sorted(nested.items()):
            lines.extend(["", "", f"class {space}:"] if not indent else
                         ["", f"{indent}class {space}:"])
            emit(prefix + [space], inner, indent + "    ")

    emit([], sorted(typed_by), "")
    return "\n".join(lines) + "\n"


def _ops_class(name, cls, schemas, indent):
    """One class of the ops stub: made with the operator's arguments, called with inputs."""
    schema = schemas.get(cls._op)
    args = [] if schema is None else schema["args"]
    params = ["self", "*", "device: str | None = ..."]
    for a in args:
        annotation = _STUB_TYPES.get(a["type"], "Any")
        if a["per_sample"]:
            annotation += " | DataNode"
        params.append(f"{a['name']}: {annotation} = ...")
    params.append("**kwargs: Any")
    doc = f"fn.{cls._op} as a class" + (" (DALI's old name)" if cls._new_name else "")
    return [f"{indent}class {name}:",
            f'{indent}    """{doc}."""',
            f"{indent}    def __init__({', '.join(params)}) -> None: ...",
            f"{indent}    def __call__(self, *inputs: DataNode, name: str | None = ..., "
            f"**kwargs: Any) -> Any: ..."]


def ops_stub():
    """python/stoker/ops.pyi: every class of stoker.ops (DALI's names and the old ones)."""
    schemas = dict(_schema.SCHEMAS)
    lines = list(_STUB_HEADER)
    # ops.Compose chains operators (DALI's meta-operator; no schema behind it).
    lines += ["def Compose(op_list: Sequence[Any]) -> Any: ..."]
    spaces = {}
    for name in sorted(dir(ops)):
        obj = getattr(ops, name)
        if isinstance(obj, type) and issubclass(obj, ops._Operator) and obj is not ops._Operator:
            lines += _ops_class(name, obj, schemas, "")
        elif type(obj).__name__ == "module" and obj.__name__.startswith("stoker.ops."):
            spaces[name] = obj
    def emit(space, module, indent):
        # A namespace's classes, then its nested namespaces (ops.io.file.Read).
        lines.extend(["", f"{indent}class {space}:"])
        inner = indent + "    "
        for name in sorted(vars(module)):
            obj = getattr(module, name)
            if isinstance(obj, type) and issubclass(obj, ops._Operator):
                lines.extend(_ops_class(name, obj, schemas, inner))
        for name in sorted(vars(module)):
            obj = getattr(module, name)
            if type(obj).__name__ == "module" and obj.__name__.startswith(module.__name__ + "."):
                emit(name, obj, inner)

    for space, module in sorted(spaces.items()):
        emit(space, module, "")
    return "\n".join(lines) + "\n"


OPS_STUB_PATH = os.path.join(_ROOT, "python", "stoker", "ops.pyi")


def _outputs():
    return {DOC_PATH: markdown(), STUB_PATH: stub(), OPS_STUB_PATH: ops_stub()}


def stale():
    """The generated files that differ from what the registry gives now."""
    out = []
    for path, text in _outputs().items():
        current = open(path).read() if os.path.exists(path) else None
        if current != text:
            out.append(path)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", action="store_true", help="regenerate the files")
    group.add_argument("--check", action="store_true", help="fail when they are out of date")
    args = parser.parse_args(argv)
    if args.write:
        for path, text in _outputs().items():
            with open(path, "w") as f:
                f.write(text)
            print(f"wrote {path}")
        return 0
    old = stale()
    for path in old:
        print(f"out of date: {path} (python -m stoker.tools.reference --write)", file=sys.stderr)
    return 1 if old else 0


if __name__ == "__main__":
    sys.exit(main())
