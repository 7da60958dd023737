"""What a running pipeline measures, with one entry: ``pipe.stats()`` (and ``pipe.report()``,
the same as a readable table). Every part of it also has the method DALI's or stoker's scripts
call (``stage_stats()``, ``operator_stats(name)``, ``memory_stats()``...), each one call into
the native pipeline, which produces the figures (include/stoker/stats.hpp; dicts through their
`fields()`), so none is computed twice.

stats() keys and what they hold:

"stages" (stage_stats()): where each stage's thread spent its time since the start, in
    seconds: a list of {"stage", "iterations", "busy", "starved", "blocked", "queue_mean",
    "queue_capacity", "cpu", "threads"} for "cpu", "mixed", "gpu" (those the pipeline has) and
    "consumer" (its "starved": waiting in run()). "queue_mean" is how many finished batches the
    stage's output queue held, on average, when run() was called (near 0: the consumer waits
    for this stage; near "queue_capacity": the pipeline is ahead); "cpu" the CPU seconds of the
    stage's threads. "threads": pipelines with 8 or more threads (but not nvJPEG decoding's) run
    two iterations at once in the CPU stage (two lanes sharing the threads, so that one batch's serial parts and
    end are filled with the other's samples; same batches, in order; cpu_lanes=1 turns it off);
    their busy and blocked seconds are the lanes' mean. The stage with the most busy time and
    the least starved time is the bottleneck.
"operators" (operator_times()): per operator, in graph order: {"name", "op", "backend",
    "runs", "samples", "seconds" (its stage thread's time in it; for mixed and gpu operators
    the host's part), "bytes_in", "bytes_out", "gpu_runs", "gpu_seconds"} since the start, and
    "counters": the operator's own counters (operator_stats(name), e.g. a mixed decoder's split
    between the hardware decoder and the CPU: hw_images, cpu_images, hw_load). The GPU figures
    (CUDA events on the stage's stream around each run) count the runs the GPU has finished,
    so gpu_runs may trail runs by the iterations in flight.
"cpu" (cpu_times()): CPU seconds of stoker's threads since the first run(): {"threads":
    {"cpu stage", "mixed stage", "gpu stage", "workers" (the pool of num_threads - 1), "gpu
    stage workers": seconds}, "wall": seconds since the first run(), "cores": their sum over
    "wall"} — the cores the pipeline keeps busy (the readers' I/O threads and the CUDA
    driver's are not counted).
"memory" (memory_stats()): per pool ("host", "pinned", "device"): bytes_in_use,
    peak_bytes_in_use, bytes_reserved (in use + cached free blocks), budget (0: none),
    allocations, how many were reused from the cache, "not_waited": fresh blocks made because
    every cached one was still in use on the GPU (reusing it would have made the stage wait),
    and "release_events": CUDA events recorded as buffers came back (one per stream that used
    a buffer; a batch whose last GPU use was already queued shares one event instead).
"errors" (error_stats()): {"skipped": samples replaced so far (on_error="skip"), "warnings":
    samples used despite a warning (JPEGs decoded past corrupt or truncated data, as DALI and
    PIL decode them; strict=True on the decoder raises instead), "recent": the last incidents
    (operator, sample, source, error or warning)}.
"autotune" (autotune()): num_threads="auto": {"threads": the threads working now, "changes":
    [{"time", "threads", "rate", "wait", "why"}]}, each change the tuner made: when (seconds of
    measured windows), the new count, the images/s and the share of the time the consumer
    waited before it, and why. With a fixed num_threads: that count, no changes. Also
    "prefetch_queue_depth" (the consumer's queue now) and "prefetch_changes" ({"time", "depth",
    "wait", "blocked", "why"}) for prefetch_queue_depth="auto".
"gpu" (gpu_utilization()): the GPU's utilisation sampled through NVML every 100 ms since the
    first run() (pipelines with GPU operators): {"available", "why" (when not), "samples",
    "sm_percent" (kernels running), "nvjpg_percent" (JPEG engines busy; -1 where NVML has no
    such counter)} — the whole GPU's, training included.
"external_sources": parallel sources: per source "batches", "wait_seconds" that run() waited
    for the workers, "worker_seconds" their callbacks took, "chunks" and "shm_capacity" of the
    shared memory.
"""

from stoker.report import format_report


class Statistics:
    """The statistics half of stoker.Pipeline (see this module's doc for every field)."""

    def _measure(self, what, *args):
        """The native pipeline's measurement `what` (building the pipeline first)."""
        self.build()
        return getattr(self._native, what)(*args)

    def stats(self):
        """Everything the pipeline measures, in one dict: "stages", "operators", "cpu",
        "memory", "errors", "autotune", "gpu", "external_sources" (help(stoker.stats) describes
        each)."""
        ops = self.operator_times()
        for o in ops:
            o["counters"] = self._native.operator_stats(o["name"])
        return {"stages": self.stage_stats(), "operators": ops, "cpu": self.cpu_times(),
                "memory": self.memory_stats(), "errors": self.error_stats(),
                "autotune": self.autotune(), "gpu": self.gpu_utilization(),
                "external_sources": self._external.stats()}

    def report(self):
        """stats() as a readable table: where each stage's time went, then each operator's time
        per sample, bytes out and (device operators) GPU time per batch (the busiest stage that
        is never starved is the bottleneck), and the automatic thread count's changes."""
        return format_report(self.stats())

    # The parts of stats(), one call each (help(stoker.stats) describes their fields).
    def stage_stats(self):
        """stats()["stages"]: each stage's busy, starved and blocked seconds, its output queue
        and CPU time (the busiest stage that is never starved is the bottleneck)."""
        return self._measure("stage_stats")

    def operator_times(self):
        """stats()["operators"] without the counters: each operator's runs, samples, seconds,
        bytes in and out, and GPU runs and seconds."""
        return self._measure("operator_times")

    def operator_stats(self, name):
        """Counters of operator `name` (e.g. a mixed decoder's split between the hardware
        decoder and the CPU: hw_images, cpu_images, hw_load; python_function's
        function_seconds)."""
        return self._measure("operator_stats", name)

    def cpu_times(self):
        """stats()["cpu"]: CPU seconds of stoker's threads since the first run(), the wall time
        and "cores" (their ratio: the cores the pipeline keeps busy)."""
        t = self._measure("cpu_times")
        t["cores"] = sum(t["threads"].values()) / t["wall"] if t["wall"] > 0 else 0.0
        return t

    def memory_stats(self):
        """stats()["memory"]: per pool ("host", "pinned", "device") bytes in use, peak,
        reserved, budget, allocations and reuses."""
        return self._measure("memory_stats")

    def error_stats(self):
        """stats()["errors"]: samples skipped (on_error="skip"), samples used despite a warning,
        and the recent incidents."""
        return self._measure("error_stats")

    def autotune(self):
        """stats()["autotune"]: num_threads="auto"'s thread count and changes, and
        prefetch_queue_depth="auto"'s queue depth and changes."""
        return self._measure("autotune")

    def gpu_utilization(self):
        """stats()["gpu"]: the GPU's utilisation (NVML, every 100 ms since the first run())."""
        return self._measure("gpu_utilization")

    def external_source_shm_statistics(self):
        """DALI's view of the parallel sources' shared memory: {"capacities": bytes per chunk,
        "per_sample_capacities": bytes per chunk over the batch size}."""
        return self._external.shm_statistics(self.batch_size)

    def trim_memory(self):
        """Returns the pools' cached free blocks to the system (buffers in use stay; the pools
        grow again as needed), e.g. between training and evaluation."""
        self._measure("trim_memory")
