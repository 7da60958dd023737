"""The parity suite: the same pipeline definition runs on stoker and on NVIDIA DALI 2.4 (CPU
operators, no GPU needed) and the outputs are compared. Skipped when DALI is not installed
(scripts/setup installs it). Each test module declares PARITY = {operator: how it is compared}
("exact", "tolerance", "distribution", "documented"); test_parity_coverage.py checks that every
operator both libraries have is declared, and the run's summary lists them. Helpers are in
parity_util.py."""

from parity_util import dali, parity_declarations


def pytest_terminal_summary(terminalreporter):
    if dali is None:  # the modules skip themselves at import
        return
    try:
        decl = parity_declarations()
    except Exception:  # noqa: BLE001 - a summary must not fail the run
        return
    if not decl:
        return
    kinds = {}
    for op, (how, _) in decl.items():
        kinds.setdefault(how.split(":")[0], []).append(op)
    terminalreporter.write_sep("-", f"parity with DALI {dali.__version__}: {len(decl)} operators")
    for how in sorted(kinds):
        terminalreporter.write_line(f"{how} ({len(kinds[how])}): {', '.join(sorted(kinds[how]))}")
