"""The calling thread's scheduling counters (Linux /proc/thread-self): how long it ran, how long
it waited runnable for a core, and how often it blocked (voluntary switches: a lock, a condition
variable, a blocking call) or was preempted. `stoker diagnose` and bench/fed_gap.py read them for
the training thread: fed by a loader it should block about as often as on synthetic data."""


def thread_sched():
    """{"run_ns", "wait_ns", "voluntary", "involuntary"} of the calling thread, or None where
    /proc/thread-self is not there (not Linux)."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            run, wait = (int(v) for v in f.read().split()[:2])
        with open("/proc/thread-self/status") as f:
            status = dict(line.split(":", 1) for line in f if ":" in line)
    except (OSError, ValueError):
        return None
    return {"run_ns": run, "wait_ns": wait,
            "voluntary": int(status["voluntary_ctxt_switches"]),
            "involuntary": int(status["nonvoluntary_ctxt_switches"])}


def per_step(before, after, steps):
    """What changed between two thread_sched() readings, per step: run and run-queue wait in
    ms, voluntary and involuntary switches. None when either reading is."""
    if before is None or after is None or steps <= 0:
        return None
    return {"run_ms": (after["run_ns"] - before["run_ns"]) / 1e6 / steps,
            "runq_wait_ms": (after["wait_ns"] - before["wait_ns"]) / 1e6 / steps,
            "voluntary": (after["voluntary"] - before["voluntary"]) / steps,
            "involuntary": (after["involuntary"] - before["involuntary"]) / steps}


def voluntary_switches():
    """The calling thread's voluntary switches so far (one small read: cheap enough around a
    single call on the training thread), 0 where /proc/thread-self is not there."""
    try:
        with open("/proc/thread-self/status") as f:
            for line in f:
                if line.startswith("voluntary_ctxt_switches:"):
                    return int(line.split(":")[1])
    except OSError:
        pass
    return 0
