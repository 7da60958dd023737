"""Every operator stoker shares with DALI 2.4 is compared with DALI by some test of this suite
(declared in a module's PARITY), and every declaration names an operator both have."""

import pytest

from parity_util import SKIP_REASON, dali, parity_declarations

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

import stoker  # noqa: E402
from nvidia.dali import fn as dali_fn  # noqa: E402


def _dali_has(name):
    node = dali_fn
    for part in name.split("."):
        if not hasattr(node, part):
            return False
        node = getattr(node, part)
    return True


def test_every_shared_operator_is_compared():
    # The native operators, and those Python composes of them (stoker._schema.WRAPPERS).
    ours = {s["name"] for s in stoker._stoker.schemas()}
    ours |= {name for name, w in stoker._schema.WRAPPERS.items() if w.schema is None}
    shared = {name for name in ours if _dali_has(name)}
    declared = parity_declarations()
    assert len(shared) >= 40
    missing = sorted(shared - set(declared))
    assert not missing, f"operators both libraries have, not compared with DALI: {missing}"
    unknown = sorted(set(declared) - shared)
    assert not unknown, f"PARITY names operators not shared with DALI: {unknown}"
    kinds = {how.split(":")[0] for how, _ in declared.values()}
    assert kinds <= {"exact", "tolerance", "distribution", "documented"}, kinds
