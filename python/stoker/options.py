"""Pipeline's keyword arguments onto its options (stoker.PipelineOptions, bound from the one
C++ struct): DALI's forms (num_threads="auto" with cpu_budget, prefetch_queue_depth as a
count, a dict or "auto", trace as a path) are read here; every other option is set by name."""
import numbers
import os

from stoker import _stoker

# The documented ranges of the options with a size meaning (docs/design/pipeline.md,
# "Ranges"). The C++ builder checks them too (src/pipeline/pipeline.cpp, for serialised
# pipelines); here they are checked before a value is converted to a C++ int, in the same words.
# Values below the range are left to the build, as DALI leaves them (num_threads=-1 pipelines
# are only serialised).
RANGES = {"batch_size": (1, 1 << 20), "num_threads": (1, 1024), "cpu_budget": (1, 1024),
          "prefetch_queue_depth": (1, 64)}


def _whole(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_range(name, value, key=None):
    """ValueError naming the option, the value and its range when `value` is above it."""
    lo, hi = RANGES[key or name]
    if value > hi:
        raise ValueError(f"{name} must be at most {hi}, got {value} (its range is [{lo}, {hi}])")


def check_threads(num_threads, cpu_budget):
    """num_threads is a count or "auto"; cpu_budget (cores) only goes with "auto"."""
    if num_threads == "auto":
        if cpu_budget is not None and (not _whole(cpu_budget) or cpu_budget < 1):
            raise ValueError(f"cpu_budget must be a whole number of cores >= 1, got "
                             f"{cpu_budget!r}")
        if cpu_budget is not None:
            check_range("cpu_budget", cpu_budget)
    elif not _whole(num_threads):
        raise ValueError(f"num_threads must be a number of threads or 'auto', got "
                         f"{num_threads!r}")
    elif cpu_budget is not None:
        raise ValueError("cpu_budget applies to num_threads='auto' (with a fixed num_threads, "
                         "that number is the budget)")
    else:
        check_range("num_threads", num_threads)


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


def _depth(name, value):
    """A queue depth: a whole number (DALI refuses 2.0 too) within its range."""
    if not _whole(value):
        lo, hi = RANGES["prefetch_queue_depth"]
        raise TypeError(f"{name} must be a whole number of batches in [{lo}, {hi}] (or, for "
                        f"prefetch_queue_depth, a dict {{'cpu_size': n, 'gpu_size': m}} or "
                        f"'auto'), got {value!r}")
    check_range(name, value, "prefetch_queue_depth")
    return int(value)


def queue_depths(prefetch_queue_depth):
    """(auto, cpu_size, gpu_size) from prefetch_queue_depth: a count for both queues, a dict
    {"cpu_size", "gpu_size"}, or "auto" (both 2 at first, the consumer's grows)."""
    if isinstance(prefetch_queue_depth, str) and prefetch_queue_depth == "auto":
        return True, 2, 2
    if isinstance(prefetch_queue_depth, dict):
        unknown = set(prefetch_queue_depth) - {"cpu_size", "gpu_size"}
        if unknown:
            raise ValueError(f"prefetch_queue_depth: unknown keys {sorted(unknown)}; "
                             f"expected 'cpu_size' and 'gpu_size'")
        return (False,
                _depth("prefetch_queue_depth's cpu_size", prefetch_queue_depth.get("cpu_size", 2)),
                _depth("prefetch_queue_depth's gpu_size", prefetch_queue_depth.get("gpu_size", 2)))
    depth = _depth("prefetch_queue_depth", prefetch_queue_depth)
    return False, depth, depth


# DALI's Pipeline arguments for its own executor (pipelining and asynchrony are always on here;
# streams, priorities and memory statistics are stoker's business): accepted so that DALI
# scripts run unchanged, and ignored (docs/dali_differences.md).
DALI_PIPELINE_ARGS = frozenset({
    "exec_pipelined", "exec_async", "exec_dynamic", "bytes_per_sample", "set_affinity",
    "max_streams", "default_cuda_stream_priority", "enable_memory_stats",
    "enable_checkpointing", "experimental_exec_dynamic",
})


def configure(o, options):
    """Sets PipelineOptions `o` from Pipeline's keyword arguments `options` (those given)."""
    options = {k: v for k, v in options.items() if k not in DALI_PIPELINE_ARGS}
    if "num_threads" in options or "cpu_budget" in options:
        threads = options.pop("num_threads", "auto" if o.auto_threads else o.num_threads)
        budget = options.pop("cpu_budget", None)
        check_threads(threads, budget)
        o.auto_threads = threads == "auto"
        o.num_threads = int(budget or 0) if o.auto_threads else int(threads)  # 0: every core
    if "prefetch_queue_depth" in options:
        o.auto_prefetch, o.prefetch_queue_depth, o.gpu_queue_depth = queue_depths(
            options.pop("prefetch_queue_depth"))
    if "checkpoint" in options:
        state = options.pop("checkpoint") or ""
        if isinstance(state, (bytes, bytearray)):  # read back from a file opened "rb", as DALI's
            state = state.decode("utf-8")
        o.checkpoint = state
    if "trace" in options:
        trace = options.pop("trace")
        o.trace = os.fspath(trace) if trace is not None else ""  # "": STOKER_TRACE, if set
    if "cpu_affinity" in options:
        o.cpu_affinity = check_cores(options.pop("cpu_affinity"))
    names = set(_stoker.PipelineOptions.names())
    for key, value in options.items():
        if key not in names:
            raise TypeError(f"Pipeline got an unexpected keyword argument '{key}' (options: "
                            f"{', '.join(sorted(names | {'cpu_budget'}))})")
        if key in ("batch_size", "seed") and value is None:
            value = -1
        if key == "batch_size" and _whole(value):
            check_range(key, value)
        try:
            setattr(o, key, value)
        except TypeError:
            raise TypeError(f"Pipeline option {key}={value!r}: expected "
                            f"{type(getattr(o, key)).__name__}") from None
