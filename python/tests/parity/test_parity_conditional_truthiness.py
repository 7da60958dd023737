"""Conditions that are not bool, against DALI 2.4 (enable_conditionals=True): DALI takes an int
or float scalar by its truth (non-zero) as the condition of an `if` and the operand of `not`,
and refuses it as a side of `and`/`or` (`_conditional.validate_logical`, at run time); a Python
number beside a pipeline value in `and`/`or` becomes a constant first (`flag and True` runs,
`flag and 1` is refused like an int32 value). stoker does the same in every form; its
`x if c else y` on a pipeline value (a TypeError in DALI: docs/dali_differences.md) takes the
condition as `if` does, so it is compared with DALI's `if` statement."""
import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, run

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

BATCH = 5
VALUES = {"int32": [0, 2, -1, 0, 3], "uint8": [0, 2, 1, 0, 3], "int64": [0, 2, -1, 0, 3],
          "float32": [0.0, 0.5, -1.5, 0.0, 3.0], "float64": [0.0, 0.5, -1.5, 0.0, 3.0],
          "bool": [False, True, True, False, True]}


def condition_source(dtype):
    def source(info):
        return np.array(VALUES[dtype][info.idx_in_batch], dtype)
    return source


def index(info):
    return np.array(info.idx_in_batch, np.int32)


def inputs(fn, dtype):
    return (fn.external_source(source=condition_source(dtype), batch=False),
            fn.external_source(source=index, batch=False))


def if_statement(c, x):
    if c:
        y = x + 10
    else:
        y = x
    return y


def if_expression(c, x):
    return x + 10 if c else x


FORMS = {
    "if": if_statement,
    "not": lambda c, x: not c,
    "and, left": lambda c, x: c and (x > 1),
    "and, right": lambda c, x: (x > 1) and c,
    "or, left": lambda c, x: c or (x > 1),
    "or, right": lambda c, x: (x > 1) or c,
}


def outcome(lib, define):
    """(True, outputs) or (False, the error's text)."""
    try:
        return True, run(lib, define, BATCH, enable_conditionals=True)[0]
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return False, str(e)


def assert_same_outcome(define, refused_side=None, name=None, dtype=None):
    ours, theirs = outcome("stoker", define), outcome("dali", define)
    assert ours[0] == theirs[0], f"stoker: {ours[1]!s:.300}\nDALI: {theirs[1]!s:.300}"
    if ours[0]:
        for k, (a, b) in enumerate(zip(ours[1], theirs[1])):
            assert_same(a, b, what=f"output {k}")
        return
    # Both refuse it: the same expression, side and type, each in its own words.
    assert (f"Logical expression `{name}` is restricted to scalar (0-d tensors) inputs of `bool` "
            f"type" in theirs[1]) and f"as the {refused_side} argument" in theirs[1], theirs[1]
    assert f"the {refused_side} side of `{name}` must be of type bool; got {dtype}" in ours[1], \
        ours[1]
    assert "_conditional.validate_logical" in ours[1]


@pytest.mark.parametrize("dtype", sorted(VALUES))
@pytest.mark.parametrize("form", sorted(FORMS))
def test_each_form_takes_a_condition_of_any_type_as_dali_does(form, dtype):
    def define(fn, types):
        c, x = inputs(fn, dtype)
        return FORMS[form](c, x)
    name, _, side = form.partition(", ")
    refused = side if (name in ("and", "or") and dtype != "bool") else None
    assert_same_outcome(define, refused, name, dtype)
    if refused is None:  # it runs in both: check the truth values themselves
        (out,) = run("stoker", define, BATCH, enable_conditionals=True)[0]
        truth = [bool(v) for v in VALUES[dtype]]
        if form == "if":
            assert [int(v) for v in out] == [i + 10 * t for i, t in enumerate(truth)]
        elif form == "not":
            assert [bool(v) for v in out] == [not t for t in truth]


@pytest.mark.parametrize("dtype", ["int32", "float32", "bool"])
def test_a_conditional_expression_takes_its_condition_as_dalis_if_statement(dtype):
    def ours(fn, types):
        return if_expression(*inputs(fn, dtype))

    def theirs(fn, types):
        return if_statement(*inputs(fn, dtype))
    a = run("stoker", ours, BATCH, enable_conditionals=True)[0]
    b = run("dali", theirs, BATCH, enable_conditionals=True)[0]
    assert_same(a[0], b[0], what="x + 10 if c else x")


PYTHON_SIDES = {  # a pipeline bool `c` beside a Python value; None: refused (the side given)
    "c and True": (lambda c, i: c and True, None),
    "True and c": (lambda c, i: True and c, None),
    "c or False": (lambda c, i: c or False, None),
    "c or np.array(True)": (lambda c, i: c or np.array(True), None),
    "c and np.int32(1)": (lambda c, i: c and np.int32(1), "right"),
    "0 or i": (lambda c, i: 0 or i, None),  # Python's `or`: the int32 value itself
    "c and 1": (lambda c, i: c and 1, "right"),
    "i or 1": (lambda c, i: i or 1, "left"),
}


@pytest.mark.parametrize("expression", sorted(PYTHON_SIDES))
def test_a_python_side_of_and_or_is_taken_as_dali_takes_it(expression):
    form, refused = PYTHON_SIDES[expression]

    def define(fn, types):
        c, i = inputs(fn, "bool")[0], inputs(fn, "int32")[1] * 2
        return form(c, i)
    name = "and" if " and " in expression else "or"
    assert_same_outcome(define, refused, name, "int32")
