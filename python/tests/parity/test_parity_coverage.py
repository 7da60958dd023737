"""Every operator stoker shares with DALI 2.4 is compared with DALI by some test of this suite
(declared in a module's PARITY), and every declaration names an operator both have."""

import pytest

from parity_util import SKIP_REASON, dali, parity_declarations, shared_operators

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

def test_every_shared_operator_is_compared():
    shared = shared_operators()
    declared = parity_declarations()
    assert len(shared) >= 40
    missing = sorted(shared - set(declared))
    assert not missing, f"operators both libraries have, not compared with DALI: {missing}"
    unknown = sorted(set(declared) - shared)
    assert not unknown, f"PARITY names operators not shared with DALI: {unknown}"
    kinds = {how.split(":")[0] for how, _ in declared.values()}
    assert kinds <= {"exact", "tolerance", "distribution", "documented"}, kinds
