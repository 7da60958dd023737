"""Operators, generated at import from the native schemas: ``fn.decoders.image``,
``fn.resize``, ``fn.random.coin_flip``… Each function's signature and docstring come from its
schema (stoker._op); calling one inside a pipeline definition adds a node and returns its
output(s). The functions written in Python (external_source, readers.tfrecord, random.choice,
python_function and its forms, ssd_random_crop) and DALI's deprecated names are declared in
stoker._schema; this module only installs what is declared there."""

import inspect
import sys
import types as _pytypes
import warnings

from stoker import _op, _schema
from stoker._schema import DALI_TUNING_ARGS  # noqa: F401 (documented as fn.DALI_TUNING_ARGS)

_PUBLIC = []  # what dir(fn) lists: the operators and their namespaces
FUNCTIONS = {}  # fn name -> its function, deprecated names left out (stoker.ops calls these)


def namespace(module, path, doc):
    """The nested module `module`.path[0].path[1]... (made on first use, registered in
    sys.modules), documented as doc.format(name) (fn's and ops's namespaces)."""
    target = module
    for p in path:
        if not hasattr(target, p):
            ns = _pytypes.ModuleType(f"{target.__name__}.{p}")
            ns.__doc__ = doc.format(p)
            setattr(target, p, ns)
            sys.modules[ns.__name__] = ns
        target = getattr(target, p)
    return target


def _deprecated(old, new, op):
    """fn.<old>: a name DALI deprecated in favour of fn.<new>, which warns as DALI does and
    runs `op`."""

    def alias(*args, **kwargs):
        warnings.warn(f"WARNING: `stoker.fn.{old}` is now deprecated. Use `stoker.fn.{new}` "
                      f"instead.", DeprecationWarning, stacklevel=2)
        return op(*args, **kwargs)

    alias.__name__, alias.__qualname__ = old.rsplit(".", 1)[-1], old
    alias.__doc__ = f"Deprecated: DALI's older name of fn.{new}.\n\n{op.__doc__ or ''}"
    if op is not FUNCTIONS.get(new):  # not an alias: a function of its own
        alias.__doc__ = f"Deprecated (DALI): use fn.{new} instead.\n\n{op.__doc__ or ''}"
    alias.__signature__ = inspect.signature(op)
    return alias


def _wrapper(w):
    """The Python function of declaration `w`; one that passes **kwargs to its schema shows
    the schema's arguments (those users give) in its help."""
    func = w.function()
    params = inspect.signature(func).parameters.values()
    if w.schema is not None and any(p.kind is p.VAR_KEYWORD for p in params) and \
            "Keyword arguments:" not in (func.__doc__ or ""):
        schema = dict(_schema.SCHEMAS[w.schema])
        schema["args"] = [a for a in schema["args"] if a["name"] not in w.filled]
        func.__doc__ = (func.__doc__ or "") + "\n\n" + _op.docstring(schema)
    return func


def _put(module, name, func):
    *path, short = name.split(".")
    setattr(namespace(module, path, "stoker.fn.{} operators"), short, func)


def __dir__():
    return sorted(_PUBLIC)


def _install():
    module = sys.modules[__name__]
    for name, schema in _schema.SCHEMAS.items():
        if name not in _schema.WRAPPERS:
            FUNCTIONS[name] = _op.make(schema)
            FUNCTIONS[name].__module__ = __name__
    for name, w in _schema.WRAPPERS.items():
        if not w.deprecated:
            FUNCTIONS[name] = _wrapper(w)
    for name, func in FUNCTIONS.items():
        _put(module, name, func)
    aliases = _schema.deprecated_names()
    for old, new in aliases.items():
        _put(module, old, _deprecated(old, new, FUNCTIONS[new]))
    for name, w in _schema.WRAPPERS.items():
        if w.deprecated:  # a deprecated function of its own (ops calls it without the warning)
            _put(module, name, _deprecated(name, w.deprecated, _wrapper(w)))
            aliases[name] = w.deprecated
    _PUBLIC.extend(sorted({name.split(".")[0] for name in list(FUNCTIONS) + list(aliases)
                           if _schema.public(name)}))
    for space in {name.split(".")[0] for name in FUNCTIONS if "." in name}:
        ns = getattr(module, space)
        ns.__dir__ = (lambda ns=ns: sorted(k for k in vars(ns) if not k.startswith("_")))


_install()
