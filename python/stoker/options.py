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
