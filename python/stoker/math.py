"""Element-wise math on pipeline values, fused with the operators of the same expression into
one `arithmetic` operator (e.g. ``stoker.math.sqrt(a * a + b * b)``).

Functions (DALI's 29): abs, fabs, sqrt, rsqrt, cbrt, exp, log, log2, log10, sin, cos, tan, asin,
acos, atan, sinh, cosh, tanh, asinh, acosh, atanh, floor, ceil, atan2, pow, fpow, min, max,
clamp. As in DALI, abs, pow, min, max and clamp keep the (promoted) input type; every other
function gives float32 (float64 for float64 inputs) — floor and ceil included; fpow is pow
computed and returned in floating point."""

from stoker.node import DataNode, _Expr


def _unary(fn):
    def f(x):
        if not isinstance(x, DataNode):
            raise TypeError(f"stoker.math.{fn}: expected a DataNode, got {type(x).__name__}")
        return _Expr(fn, [x])
    f.__name__ = fn
    f.__doc__ = f"Element-wise {fn} of a pipeline value."
    return f


abs = _unary("abs")  # noqa: A001 (mirrors numpy's names)
sqrt = _unary("sqrt")
rsqrt = _unary("rsqrt")
exp = _unary("exp")
log = _unary("log")
log2 = _unary("log2")
log10 = _unary("log10")
sin = _unary("sin")
cos = _unary("cos")
tan = _unary("tan")
floor = _unary("floor")
ceil = _unary("ceil")
fabs = _unary("fabs")
cbrt = _unary("cbrt")
asin = _unary("asin")
acos = _unary("acos")
atan = _unary("atan")
sinh = _unary("sinh")
cosh = _unary("cosh")
tanh = _unary("tanh")
asinh = _unary("asinh")
acosh = _unary("acosh")
atanh = _unary("atanh")


def pow(x, y):  # noqa: A001
    """x ** y, element-wise."""
    return _Expr("pow", [x, y])


def fpow(x, y):
    """x ** y computed in floating point (float32, float64 for float64 inputs), element-wise."""
    return _Expr("fpow", [x, y])


def atan2(y, x):
    """The angle of (x, y), element-wise."""
    return _Expr("atan2", [y, x])


def min(x, y):  # noqa: A001
    """The smaller of x and y, element-wise."""
    return _Expr("min", [x, y])


def max(x, y):  # noqa: A001
    """The larger of x and y, element-wise."""
    return _Expr("max", [x, y])


def clamp(x, lo, hi):
    """x limited to [lo, hi], element-wise."""
    return _Expr("clamp", [x, lo, hi])
