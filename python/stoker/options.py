"""Pipeline's thread and queue options: checked and resolved for the native pipeline."""
import os


def check_threads(num_threads, cpu_budget):
    """num_threads is a count or "auto"; cpu_budget (cores) only goes with "auto"."""
    if num_threads == "auto":
        if cpu_budget is not None and (not isinstance(cpu_budget, int) or cpu_budget < 1):
            raise ValueError(f"cpu_budget must be a whole number of cores >= 1, got "
                             f"{cpu_budget!r}")
    elif not isinstance(num_threads, int) or isinstance(num_threads, bool):
        raise ValueError(f"num_threads must be a number of threads or 'auto', got "
                         f"{num_threads!r}")
    elif cpu_budget is not None:
        raise ValueError("cpu_budget applies to num_threads='auto' (with a fixed num_threads, "
                         "that number is the budget)")


def check_cores(cpu_affinity):
    """cpu_affinity: None (any core) or cores as whole numbers; a sorted list without repeats
    ([] for None). Whether the cores exist is checked when the pipeline is built."""
    if cpu_affinity is None:
        return []
    if isinstance(cpu_affinity, (str, bytes, int)):
        raise ValueError(f"cpu_affinity must be a list of core numbers, got {cpu_affinity!r}")
    cores = list(cpu_affinity)
    bad = [c for c in cores if not isinstance(c, int) or isinstance(c, bool) or c < 0]
    if bad or not cores:
        raise ValueError(f"cpu_affinity must be a non-empty list of core numbers (0, 1, ...), "
                         f"got {cpu_affinity!r}")
    return sorted(set(cores))


def max_threads(num_threads, cpu_budget):
    """The pool's size: num_threads, or for "auto" the cpu_budget (default: the cores)."""
    if num_threads != "auto":
        return num_threads
    return cpu_budget or os.cpu_count() or 1


def queue_depths(prefetch_queue_depth):
    """(auto, cpu_size, gpu_size) from prefetch_queue_depth: a count for both queues, a dict
    {"cpu_size", "gpu_size"}, or "auto" (both 2 at first, the consumer's grows)."""
    if prefetch_queue_depth == "auto":
        return True, 2, 2
    if isinstance(prefetch_queue_depth, dict):
        unknown = set(prefetch_queue_depth) - {"cpu_size", "gpu_size"}
        if unknown:
            raise ValueError(f"prefetch_queue_depth: unknown keys {sorted(unknown)}; "
                             f"expected 'cpu_size' and 'gpu_size'")
        return (False, int(prefetch_queue_depth.get("cpu_size", 2)),
                int(prefetch_queue_depth.get("gpu_size", 2)))
    return False, int(prefetch_queue_depth), int(prefetch_queue_depth)
