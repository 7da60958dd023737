"""DALI's arguments under stoker: every argument DALI 2.4's schema gives an operator both libraries
have is taken by stoker's (its schema, its Python wrapper, a deprecated spelling stoker rewrites,
or a DALI tuning argument stoker accepts and ignores), or docs/dali_differences.md lists it, with
a reason, under "DALI arguments stoker does not take". The list stays honest: a listed argument
that stoker takes is an error too."""

import re

import pytest

from parity_util import SKIP_REASON, dali, dali_operator, differences_rows, shared_operators

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

from nvidia.dali import backend as dali_backend  # noqa: E402
from stoker import _schema  # noqa: E402

SECTION = "## DALI arguments stoker does not take"


def _shared():
    """{operator: (DALI's arguments, stoker's accepted arguments)} for the operators both have
    (DALI's internal ones, named with "_", aside)."""
    out = {}
    for name in sorted(shared_operators()):
        schema_name = getattr(dali_operator(name), "_schema_name", None)
        if name.startswith("_") or not schema_name:
            continue
        out[name] = (set(dali_backend.GetSchema(schema_name).GetArgumentNames()),
                     _schema.accepted_args(name))
    return out


def _listed():
    """{(operator, argument): reason} from the differences page's section."""
    rows = {}
    for cells in differences_rows(SECTION):
        if len(cells) != 3:
            continue
        for op in re.findall(r"`([\w.]+)`", cells[0]):
            for arg in re.findall(r"`(\w+)`", cells[1]):
                rows[(op, arg)] = cells[2]
    return rows


def test_every_dali_argument_is_taken_or_listed_with_a_reason():
    listed = _listed()
    shared = _shared()
    assert len(shared) > 80
    missing = sorted(f"{op}: {arg}" for op, (theirs, ours) in shared.items()
                     for arg in theirs - ours if (op, arg) not in listed)
    assert not missing, (f"{len(missing)} DALI arguments that stoker does not take and "
                         f"docs/dali_differences.md does not list: {missing}")


def test_listed_arguments_are_really_missing_and_have_reasons():
    listed = _listed()
    assert listed
    shared = _shared()
    unknown = sorted(f"{op}: {arg}" for op, arg in listed
                     if op not in shared or arg not in shared[op][0])
    assert not unknown, f"listed arguments DALI 2.4's operators do not have: {unknown}"
    stale = sorted(f"{op}: {arg}" for op, arg in listed if arg in shared[op][1])
    assert not stale, f"listed as not taken but stoker takes them (remove them): {stale}"
    assert all(len(r) > 10 for r in listed.values())


def test_deprecated_spellings_are_rewritten_with_dalis_warning():
    # A deprecated argument DALI 2.4 still takes (crop_mirror_normalize's output_dtype) runs in
    # fn as in ops: rewritten to today's name, with a DeprecationWarning naming both.
    from stoker import fn, types

    import stoker

    @stoker.pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(source=lambda: [stoker_np.full((2, 3, 3), 7, stoker_np.uint8)],
                               batch=True, layout="HWC")
        return fn.crop_mirror_normalize(x, output_dtype=types.FLOAT, mean=[1.0], std=[2.0])

    import numpy as stoker_np
    with pytest.warns(DeprecationWarning, match="output_dtype.*dtype"):
        p = pipe()
    p.build()
    (out,) = p.run()
    assert out.dtype == stoker_np.float32
    assert stoker_np.array(out.at(0)).flat[0] == 3.0
