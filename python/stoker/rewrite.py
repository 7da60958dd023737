"""The source rewrite behind ``pipeline_def(enable_conditionals=True)``: a pipeline function's
``if``/``elif``/``else`` statements, ``and``/``or``/``not`` and ``x if c else y`` are rewritten
into calls to stoker.conditionals, which run plain Python when the condition is a Python value
and build graph branches when it is a pipeline value (DALI does this with a fork of
TensorFlow's AutoGraph; this is a small ``ast`` rewrite of those constructs only).

A lambda is found in its file's syntax tree (by its line and the columns its code covers) and
converted as a function returning its body.

An ``if`` statement becomes two nested functions (the branches), given the variables the
statement assigns and returning their values (or the return value, when every path of the
statement returns), and one call to ``conditionals.if_stmt``. Calls to other user functions go
through ``conditionals.call``, which converts them the same way the first time (helpers with
their own ``if``s on pipeline values work); stoker, the standard library and the big numeric
libraries are called as they are, and so is anything marked ``@do_not_convert``.

An ``if`` with a ``break``, ``continue`` or ``yield`` in it, or a ``return`` in only some of its
paths (after the code following an ``if`` that always returns is moved into its other
branch), stays as it was: with a pipeline value as its condition it raises a clear error.
The rewritten function keeps the original's file, line numbers, globals and closure cells."""

import ast
import copy
import functools
import inspect
import linecache
import os
import sys
import sysconfig
import textwrap
import types

RUNTIME = "_stoker_cond"  # the runtime module, a closure cell of every converted function
_PREFIX = "_stoker_"
# Calls that read their caller's frame: not routed through conditionals.call.
_FRAME_CALLS = {"super", "locals", "globals", "vars", "eval", "exec", "dir", "breakpoint"}
# Packages whose functions are called as they are (their code takes no pipeline values).
_SKIP_PACKAGES = {"stoker", "numpy", "torch", "jax", "jaxlib", "cupy", "tensorflow", "keras",
                  "PIL", "scipy", "pandas", "nvidia", "cv2", "builtins"}
_STDLIB = os.path.normcase(sysconfig.get_paths()["stdlib"])
# Installed packages (user code among them) live under the standard library's folder too.
_SITE = {os.path.normcase(sysconfig.get_paths()[k]) for k in ("purelib", "platlib")}
# code object -> the converted code, None (nothing to convert) or why it cannot be converted
_cache = {}


def do_not_convert(func):
    """Marks `func` so that pipelines with enable_conditionals=True call it unconverted (e.g. a
    function that makes a parallel external source's callback, which must stay picklable)."""
    func._stoker_do_not_convert = True
    return func


def convertible(func):
    """Whether `func` (a plain function) is user code that conversion applies to."""
    if not isinstance(func, types.FunctionType):
        return False
    if getattr(func, "_stoker_do_not_convert", False) or getattr(func, "_stoker_converted", False):
        return False
    code = func.__code__
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
        return False
    module = (func.__module__ or "").split(".")[0]
    if module in _SKIP_PACKAGES:
        return False
    path = os.path.normcase(code.co_filename)
    return not path.startswith(_STDLIB + os.sep) or any(path.startswith(p + os.sep)
                                                         for p in _SITE)


def convert(func, strict=False):
    """The converted twin of `func`, or `func` itself when nothing in it needs converting (or,
    unless `strict`, when its source cannot be read)."""
    if not convertible(func):
        if strict and getattr(func, "_stoker_do_not_convert", False):
            raise ValueError(f"{func.__name__}: a pipeline definition cannot be @do_not_convert")
        return func
    code = func.__code__
    if code not in _cache:
        try:
            _cache[code] = _convert_code(func)
        except (OSError, TypeError, SyntaxError) as e:
            _cache[code] = str(e)  # why it is called as it is
    new_code = _cache[code]
    if isinstance(new_code, str) and strict:
        raise ValueError(f"enable_conditionals=True rewrites the pipeline function's `if` "
                         f"statements from its source, and the source of {func.__qualname__} "
                         f"cannot be read ({new_code}); define it in a file")
    if not isinstance(new_code, types.CodeType):
        return func
    cells = dict(zip(code.co_freevars, func.__closure__ or ()))
    cells[RUNTIME] = types.CellType(sys.modules["stoker.conditionals"])
    closure = tuple(cells[name] for name in new_code.co_freevars)
    new = types.FunctionType(new_code, func.__globals__, func.__name__, func.__defaults__,
                             closure)
    new.__kwdefaults__ = func.__kwdefaults__
    functools.update_wrapper(new, func)
    new._stoker_converted = True
    return new


def _convert_code(func):
    if func.__name__ == "<lambda>":
        fdef = _lambda_def(func)
    else:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
        fdef = tree.body[0]
        if not isinstance(fdef, ast.FunctionDef) or fdef.name != func.__name__:
            raise TypeError("its source is not a plain function definition")
        ast.increment_lineno(tree, func.__code__.co_firstlineno - 1)
    # Defaults and annotations were evaluated where the function was defined: the function is
    # given its own defaults afterwards, and evaluating them again here could fail.
    fdef.decorator_list, fdef.returns = [], None
    fdef.args.defaults = []
    fdef.args.kw_defaults = [None] * len(fdef.args.kwonlyargs)
    for a in fdef.args.posonlyargs + fdef.args.args + fdef.args.kwonlyargs + [
            fdef.args.vararg, fdef.args.kwarg]:
        if a is not None:
            a.annotation = None
    rewriter = _Rewriter(fdef.body)
    fdef.body = rewriter.block(fdef.body)
    if not rewriter.changed:
        return None
    # The factory's parameters stand for the closure cells the function is given afterwards.
    params = [RUNTIME] + [v for v in func.__code__.co_freevars if v != "__class__"]
    inner = fdef
    parts = func.__qualname__.split(".")
    owner = parts[-2] if len(parts) > 1 and parts[-2] != "<locals>" else None
    if owner:  # a method: compiled in a class of its name (private names, super()'s cell)
        inner = ast.ClassDef(name=owner, bases=[], keywords=[], body=[fdef], decorator_list=[])
        result = ast.Subscript(
            value=ast.Attribute(value=ast.Name(owner, ast.Load()), attr="__dict__",
                                ctx=ast.Load()),
            slice=ast.Constant(fdef.name), ctx=ast.Load())
    else:
        result = ast.Name(fdef.name, ast.Load())
    factory = ast.FunctionDef(
        name=_PREFIX + "factory",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params], kwonlyargs=[],
                           kw_defaults=[], defaults=[]),
        body=[inner, ast.Return(result)], decorator_list=[], returns=None, type_params=[])
    module = ast.Module(body=[factory], type_ignores=[])
    ast.copy_location(factory, fdef)
    ast.fix_missing_locations(module)
    namespace = {}
    exec(compile(module, func.__code__.co_filename, "exec"), func.__globals__, namespace)
    made = namespace[factory.name](*([None] * len(params))).__code__
    names = {"co_name": func.__code__.co_name}
    if hasattr(made, "co_qualname"):
        names["co_qualname"] = func.__code__.co_qualname
    return made.replace(**names)


_modules = {}  # file name -> (its lines, its parsed tree)


def _lambda_def(func):
    """A lambda as `def _stoker_lambda(<its arguments>): return <its body>`: its node is found
    in its file's syntax tree by its line and by the columns its code covers."""
    code = func.__code__
    lines = linecache.getlines(code.co_filename)
    if not lines:
        raise OSError("its file cannot be read")
    cached = _modules.get(code.co_filename)
    if cached is None or cached[0] != lines:
        cached = (lines, ast.parse("".join(lines)))
        _modules[code.co_filename] = cached
    spans = [(p[0], p[2], p[1], p[3]) for p in code.co_positions()  # zero-width: RESUME
             if None not in p and p[0] >= code.co_firstlineno and (p[0], p[2]) != (p[1], p[3])]
    if not spans:
        raise OSError("its code has no source positions")
    first, last = min(spans)[:2], max((s[2], s[3]) for s in spans)
    names = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    found = []
    for node in ast.walk(cached[1]):
        if not isinstance(node, ast.Lambda) or node.lineno != code.co_firstlineno:
            continue
        body = node.body
        args = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
        if args == names and (body.lineno, body.col_offset) <= first and \
                (body.end_lineno, body.end_col_offset) >= last:
            found.append(node)
    if not found:
        raise OSError("its source was not found")
    node = copy.deepcopy(min(found, key=lambda n: (n.body.end_lineno - n.body.lineno,
                                     n.body.end_col_offset - n.body.col_offset)))
    fdef = ast.FunctionDef(name=_PREFIX + "lambda", args=node.args,
                           body=[ast.copy_location(ast.Return(node.body), node.body)],
                           decorator_list=[], returns=None, type_params=[])
    return ast.copy_location(fdef, node)


# -- the rewrite ---------------------------------------------------------------------------------

def _rt(attr):
    return ast.Attribute(value=ast.Name(RUNTIME, ast.Load()), attr=attr, ctx=ast.Load())


def _call(attr, *args):
    return ast.Call(func=_rt(attr), args=list(args), keywords=[])


def _thunk(expr):
    return ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[],
                                         defaults=[]), body=expr)


def _scoped(node):
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef))


def _walk_scope(nodes):
    """The nodes of `nodes` in this function's scope (not inside nested functions/classes)."""
    todo = list(nodes)
    while todo:
        node = todo.pop()
        yield node
        if _scoped(node):
            continue
        todo.extend(ast.iter_child_nodes(node))


def _assigned(stmts):
    """Names the statements assign or delete in this scope."""
    names = set()
    for node in _walk_scope(stmts):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
    return {n for n in names if not n.startswith(_PREFIX)}


def _declared(stmts, kind):
    """Names declared `kind` (ast.Global or ast.Nonlocal) in this scope."""
    return {n for node in _walk_scope(stmts) if isinstance(node, kind) for n in node.names}


def _has(stmts, kinds, loops_hide=False):
    """Whether the statements hold a node of `kinds` in this scope (with loops_hide, not
    counting those inside loops of their own: break/continue)."""
    todo = list(stmts)
    while todo:
        node = todo.pop()
        if isinstance(node, kinds):
            return True
        if _scoped(node) or (loops_hide and isinstance(node, (ast.For, ast.AsyncFor, ast.While))):
            continue
        todo.extend(ast.iter_child_nodes(node))
    return False


def _returns(stmts):
    """Whether every path through the statements ends in return (or raise)."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    return isinstance(last, ast.If) and _returns(last.body) and _returns(last.orelse)


class _Rewriter(ast.NodeTransformer):
    def __init__(self, function_body):
        self.changed = False
        self.count = 0
        # The function's global/nonlocal names: the branches declare them too, not take them.
        self.globals = _declared(function_body, ast.Global)
        self.nonlocals = _declared(function_body, ast.Nonlocal)

    def block(self, stmts):
        """A statement list rewritten; the code after an `if` that returns on one side only is
        moved into its other side first, so that both sides return."""
        out = []
        stmts = list(stmts)
        for k, stmt in enumerate(stmts):
            rest = stmts[k + 1:]
            if isinstance(stmt, ast.If) and rest and _has([stmt], ast.Return):
                if _returns(stmt.body) and not _returns(stmt.orelse):
                    stmt.orelse = stmt.orelse + rest
                    rest = []
                elif _returns(stmt.orelse) and not _returns(stmt.body):
                    stmt.body = stmt.body + rest
                    rest = []
                elif _returns(stmt.body) and _returns(stmt.orelse):
                    rest = []  # unreachable
                if not rest:
                    out.extend(self._statement(stmt))
                    break
            out.extend(self._statement(stmt))
        return out

    def _statement(self, stmt):
        if isinstance(stmt, ast.If):
            return self._if(stmt)
        if _scoped(stmt):
            return [stmt]  # nested functions and classes: converted when called
        for field in ("body", "orelse", "finalbody"):
            if isinstance(getattr(stmt, field, None), list):
                setattr(stmt, field, self.block(getattr(stmt, field)))
        if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            for handler in stmt.handlers:
                handler.body = self.block(handler.body)
        if isinstance(stmt, ast.Match):
            for case in stmt.cases:
                case.body = self.block(case.body)
        for field, value in ast.iter_fields(stmt):
            if field in ("body", "orelse", "finalbody", "handlers", "cases"):
                continue
            if isinstance(value, ast.AST):
                setattr(stmt, field, self.visit(value))
            elif isinstance(value, list):
                setattr(stmt, field, [self.visit(v) if isinstance(v, ast.AST) else v
                                      for v in value])
        return [stmt]

    # -- expressions ---------------------------------------------------------------------------
    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        if any(_has([v], (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom))
               for v in node.values[1:]):
            return node  # a lambda would change what these mean
        self.changed = True
        attr = "and_" if isinstance(node.op, ast.And) else "or_"
        result = node.values[-1]
        for value in reversed(node.values[:-1]):
            result = _call(attr, value, _thunk(result))
        return ast.copy_location(result, node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, ast.Not):
            return node
        self.changed = True
        return ast.copy_location(_call("not_", node.operand), node)

    def visit_IfExp(self, node):
        self.generic_visit(node)
        if _has([node.body, node.orelse], (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)):
            return node
        self.changed = True
        return ast.copy_location(
            _call("if_exp", node.test, _thunk(node.body), _thunk(node.orelse)), node)

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in _FRAME_CALLS:
            return node
        self.changed = True
        return ast.copy_location(
            ast.Call(func=_rt("call"), args=[node.func] + node.args, keywords=node.keywords),
            node)

    # -- if statements ---------------------------------------------------------------------------
    def _if(self, node):
        flow = _has(node.body + node.orelse, (ast.Break, ast.Continue), loops_hide=True) or \
            _has(node.body + node.orelse, (ast.Yield, ast.YieldFrom, ast.Await))
        returns = _has(node.body + node.orelse, ast.Return)
        whole = returns and _returns(node.body) and _returns(node.orelse)
        self.changed = True
        if flow or (returns and not whole):
            # Left as it is; a pipeline value as its condition is refused with the reason.
            why = ("break/continue/yield" if flow else "a return in only some of its paths")
            node.test = _call("python_test", self.visit(node.test), ast.Constant(why))
            node.body = self.block(node.body)
            node.orelse = self.block(node.orelse)
            return [node]
        assigned = _assigned(node.body + node.orelse)
        declared = assigned & (self.globals | self.nonlocals)
        names = sorted(assigned - declared)
        test = self.visit(node.test)
        self.count += 1
        true_name, false_name = f"{_PREFIX}if_{self.count}", f"{_PREFIX}else_{self.count}"
        names_ast = ast.Tuple([ast.Constant(n) for n in names], ast.Load())
        state = _call("state", ast.Call(ast.Name("locals", ast.Load()), [], []), names_ast)
        branches = [self._branch(true_name, node.body, names, declared, whole, node),
                    self._branch(false_name, node.orelse, names, declared, whole, node)]
        call = _call("if_stmt", test, ast.Name(true_name, ast.Load()),
                     ast.Name(false_name, ast.Load()), state, names_ast,
                     ast.Constant(whole))
        if whole:
            tail = [ast.Return(call)]
        elif names:
            target = ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())
            tail = [ast.Assign([target], call)] + self._forget_undefined(names)
        else:
            tail = [ast.Expr(call)]
        out = branches + tail
        for stmt in out:
            ast.copy_location(stmt, node)
        return out

    def _branch(self, name, stmts, names, declared, whole, where):
        body = []
        if declared & self.globals:
            body.append(ast.Global(sorted(declared & self.globals)))
        if declared & self.nonlocals:
            body.append(ast.Nonlocal(sorted(declared & self.nonlocals)))
        body += self._forget_undefined(names)  # an unset variable stays unset inside
        body += self.block(stmts) or [ast.Pass()]
        if not whole:
            names_ast = ast.Tuple([ast.Constant(n) for n in names], ast.Load())
            body.append(ast.Return(_call("state", ast.Call(ast.Name("locals", ast.Load()), [], []),
                                         names_ast)))
        fdef = ast.FunctionDef(
            name=name, args=ast.arguments(posonlyargs=[], args=[ast.arg(n) for n in names],
                                          kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=body, decorator_list=[], returns=None, type_params=[])
        return ast.copy_location(fdef, where)

    @staticmethod
    def _forget_undefined(names):
        return [ast.If(test=ast.Compare(ast.Name(n, ast.Load()), [ast.Is()], [_rt("UNDEFINED")]),
                       body=[ast.Delete([ast.Name(n, ast.Del())])], orelse=[])
                for n in names]
