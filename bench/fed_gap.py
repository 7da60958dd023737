"""Where a fed training step's time goes, when training fed by stoker runs below the
synthetic rate (issue 7: ResNet-50 fed at 96% of synthetic, not 99%).

Each variant runs in its own process: a warm-up, then a window of training steps (the step of
bench/harness.py: AMP, channels_last, SGD, a stream sync per step), recording
- images/s;
- the training thread's CPU time, run-queue wait (runnable but not running) and context
  switches per step (/proc/thread-self/schedstat and status): is the thread that launches the
  model's kernels kept waiting? And its time in stoker's calls: next() (run() and the DLPack
  hand-over) and releasing the previous batch (its buffers going back to stoker's pools);
- with --profile-steps N, every GPU kernel and copy of N more steps (CUPTI, through
  torch.profiler), per stream: the training stream's busy time per step (do stoker's kernels
  slow the model's?) and the other streams' (stoker's and nvJPEG's work).

Variants: synthetic (the same tensor each step), fed (stoker's batches), discard (stoker runs
and each step takes its batch, but trains on the synthetic tensor: stoker's work without its
data), sidecar (the same, but stoker runs in a process of its own taking a batch every
--sidecar-period seconds: its CUDA calls go to another process's driver state, its kernels to
another CUDA context, which the GPU time-slices with the training's). Parts: "-pin" or
"-pinN" sets STOKER_BENCH_PIN=1 or N (the training thread on the first N cores, stoker's
threads on the others: bench/loaders.py; each row records which cores the process's threads
may use, so a pinning gone wrong shows); -hwL, -tN, -cpudec, -graph, -blocking, -yield
(split_variant); "+K=V" suffixes set environment variables for that variant's process (e.g.
fed+CUDA_DEVICE_MAX_CONNECTIONS=32: more hardware work queues, so the model's stream is not
queued behind stoker's or nvJPEG's streams).

    PYTHONPATH=build-gpu/python python3 bench/fed_gap.py --data DIR/jpeg \\
        [--variants synthetic,fed,discard,synthetic-pin,fed-pin,fed-pin2] [--model resnet50]
        [--threads 4] [--window 10] [--profile-steps 30] [--json out.json]
"""

import argparse
import collections
import json
import os
import re
import signal
import statistics
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


# -- what one process measures -----------------------------------------------------------------

def threads_by_cores():
    """How many of this process's threads may run on each set of cores ("0": 1, "1-15": 40)."""
    count = collections.Counter()
    for tid in os.listdir("/proc/self/task"):
        try:
            for line in open(f"/proc/self/task/{tid}/status"):
                if line.startswith("Cpus_allowed_list:"):
                    count[line.split(":", 1)[1].strip()] += 1
        except OSError:  # the thread ended meanwhile
            pass
    return dict(count)


def split_variant(variant):
    """"fed-pin2-hw0-t12+K=V" -> {"base": "fed", "pin": 2, "hw": "0", "threads": 12, ...}: the
    loader variant, the consumer's cores (-pin = -pin1; 0: unpinned), stoker's hw_decoder_load
    (None: auto), threads (None: --threads) and "cpudec" (-cpudec: every JPEG decoded by the CPU
    threads, neither the engines nor nvJPEG's CUDA decoder: stoker's CUDA calls per batch drop
    to a copy and the resize kernel), "graph" (-graph: the training step captured in a CUDA
    graph and replayed, bench/train_step.py), "sched" (-blocking / -yield: the process's
    CUDA context waits by blocking or yielding instead of spinning, set_context_wait) and
    "dali" (-dali: NVIDIA DALI running the same definition as the loader, at its defaults;
    -daliL: with hw_decoder_load L — the peer measured in the same run) and "dropin" (-dropin,
    -dropinL: stoker running DALI's definition, import changed, at stoker's defaults: what a
    DALI user gets)."""
    base, *tokens = variant.split("+")[0].split("-")
    if base not in ("synthetic", "fed", "discard", "sidecar"):
        raise SystemExit(f"fed_gap: variant '{variant}': unknown '{base}' (known: synthetic, fed, "
                         "discard, sidecar)")
    out = {"base": base, "pin": 0, "hw": None, "threads": None, "cpudec": False, "graph": False,
           "sched": None, "dali": None, "dropin": None}
    for tok in tokens:
        if tok in ("blocking", "yield"):
            out["sched"] = tok
            continue
        if tok in ("cpudec", "graph"):
            out[tok] = True
            out["hw"] = "0" if tok == "cpudec" else out["hw"]
            continue
        m = re.fullmatch(r"(pin|hw|t|dali|dropin)([0-9.]*)", tok)
        if not m or (m.group(1) not in ("pin", "dali", "dropin") and not m.group(2)):
            raise SystemExit(f"fed_gap: variant '{variant}': unknown part '-{tok}' "
                             "(known: -pin, -pinN, -hwL, -tN, -cpudec, -graph, -blocking, "
                             "-yield, -dali, -daliL, -dropin, -dropinL)")
        kind, val = m.groups()
        if kind == "pin":
            out["pin"] = int(val or 1)
        elif kind in ("dali", "dropin"):
            out[kind] = val
        elif kind == "hw":
            out["hw"] = val
        else:
            out["threads"] = int(val)
    return out


# CU_CTX_SCHED_*: how a CUDA context's host threads wait for the GPU (cuda.h).
_SCHED_FLAGS = {"yield": 0x02, "blocking": 0x04}


def set_context_wait(how, device=0):
    """Makes the primary CUDA context (torch's and stoker's) wait by yielding or blocking
    instead of spinning, before anything creates it. By default the host threads spin in every
    synchronisation (the training step's, nvJPEG's ~210 per step inside its hardware call);
    if each turn of the spin takes a driver lock, that is the lock the training thread's
    launches wait for."""
    import ctypes
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        raise SystemExit(f"fed_gap: -{how} needs the CUDA driver (libcuda.so.1): {e}")

    def check(result, what):
        if result != 0:
            raise SystemExit(f"fed_gap: -{how}: {what} failed (CUresult {result})")
    check(cuda.cuInit(0), "cuInit")
    dev = ctypes.c_int()
    check(cuda.cuDeviceGet(ctypes.byref(dev), device), "cuDeviceGet")
    check(cuda.cuDevicePrimaryCtxSetFlags_v2(dev, _SCHED_FLAGS[how]),
          "cuDevicePrimaryCtxSetFlags")


def training_thread_ids():
    """The id a profiler trace gives the calling thread's CUDA calls: torch.profiler (Kineto)
    writes the low 32 bits of its pthread_t (threading.get_ident()) as a signed number without
    its sign (seen on the H100: pthread_t 0x7f8e96520140 as 1773010624), not the kernel's
    thread id, which matched nothing. A set, for api_calls."""
    low = threading.get_ident() & 0xFFFFFFFF
    return {str(abs(low - (1 << 32) if low >= 1 << 31 else low))}


def api_calls(events, steps, training_ids):
    """Chrome-trace events -> per thread: CUDA runtime/driver calls and their time (per step),
    busiest first, each with its eight costliest calls (count and time); the training thread
    (any id in `training_ids`) marked; names from the trace's thread_name records, else "?"
    (the trace's ids are not the kernel's, so /proc's names cannot be matched). Contention for the driver's locks shows as the training thread's calls
    (cudaLaunchKernel) taking longer when other threads (stoker's, nvJPEG's) make many calls."""
    per = collections.defaultdict(lambda: {"calls": 0, "us": 0.0, "names": collections.Counter(),
                                           "counts": collections.Counter(), "launch": [0, 0.0]})
    names = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names.setdefault(str(e.get("tid")), str(e.get("args", {}).get("name", "?")))
        if e.get("ph") != "X" or e.get("cat") not in ("cuda_runtime", "cuda_driver"):
            continue
        t, dur = per[str(e.get("tid"))], float(e.get("dur", 0))
        t["calls"] += 1
        t["us"] += dur
        t["names"][e["name"]] += dur
        t["counts"][e["name"]] += 1
        if "LaunchKernel" in e["name"]:
            t["launch"][0] += 1
            t["launch"][1] += dur
    out = [{"tid": k, "name": names.get(k, "?"), "training_thread": k in training_ids,
            "calls_per_step": v["calls"] / steps, "ms_per_step": v["us"] / 1e3 / steps,
            "launch_us_mean": v["launch"][1] / v["launch"][0] if v["launch"][0] else None,
            "top": [{"name": n, "calls_per_step": v["counts"][n] / steps,
                     "ms_per_step": d / 1e3 / steps}
                    for n, d in v["names"].most_common(8)]}
           for k, v in per.items()]
    out.sort(key=lambda t: -t["ms_per_step"])
    return out


def merged(intervals):
    """(start, end) intervals -> the disjoint, sorted intervals covering the same time."""
    out = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def busy_union(intervals):
    """Total length covered by (start, end) intervals (overlaps counted once)."""
    return sum(b - a for a, b in merged(intervals))


def model_idle(events, steps):
    """The busiest stream's (the model's) idle time per step between its first and last work,
    and how much of that idle time other streams' kernels were running: GPU work of others
    (nvJPEG's conversions, stoker's kernels) in the model's way rather than the GPU waiting
    for the training thread's next launch."""
    spans, kernels = collections.defaultdict(list), collections.defaultdict(list)
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        stream = str(e.get("args", {}).get("stream", e.get("tid")))
        start, dur = float(e["ts"]), float(e.get("dur", 0))
        spans[stream].append((start, start + dur))
        if e["cat"] == "kernel":
            kernels[stream].append((start, start + dur))
    if not spans:
        return None
    model = max(spans, key=lambda k: busy_union(spans[k]))
    busy = merged(spans[model])
    gaps = [(a[1], b[0]) for a, b in zip(busy, busy[1:])]
    others = merged([iv for k, v in kernels.items() if k != model for iv in v])
    overlap, j = 0.0, 0
    for a, b in gaps:  # both lists sorted and disjoint: one pass
        while j < len(others) and others[j][1] <= a:
            j += 1
        k = j
        while k < len(others) and others[k][0] < b:
            overlap += min(b, others[k][1]) - max(a, others[k][0])
            k += 1
    return {"idle_ms_per_step": sum(b - a for a, b in gaps) / 1e3 / steps,
            "idle_other_kernels_ms_per_step": overlap / 1e3 / steps}


def gpu_streams(events, steps):
    """Chrome-trace events of torch.profiler -> per stream: kernels, copies, the sum of their
    durations and the time covered (ms per step), busiest first; and the ten costliest names."""
    per = collections.defaultdict(lambda: {"kernels": 0, "copies": 0, "spans": []})
    names = collections.Counter()
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        s = per[str(e.get("args", {}).get("stream", e.get("tid")))]
        s["kernels" if e["cat"] == "kernel" else "copies"] += 1
        start, dur = float(e["ts"]), float(e.get("dur", 0))
        s["spans"].append((start, start + dur))
        names[e["name"][:80]] += dur
    streams = [{"stream": k, "kernels_per_step": v["kernels"] / steps,
                "copies_per_step": v["copies"] / steps,
                "sum_ms_per_step": sum(b - a for a, b in v["spans"]) / 1e3 / steps,
                "busy_ms_per_step": busy_union(v["spans"]) / 1e3 / steps}
               for k, v in per.items()]
    streams.sort(key=lambda s: -s["busy_ms_per_step"])
    top = [{"name": n, "ms_per_step": d / 1e3 / steps} for n, d in names.most_common(10)]
    return streams, top


def measure(variant, args):
    sys.path.insert(0, HERE)
    import torch
    import harness
    import loaders
    from stoker.tools.thread_stats import per_step, thread_sched, voluntary_switches
    v = split_variant(variant)  # the environment (+K=V) was set by the driver
    base = v["base"]
    if v["sched"]:
        set_context_wait(v["sched"])  # before torch or stoker create the context
    if v["pin"]:
        os.environ["STOKER_BENCH_PIN"] = str(v["pin"])
    torch.backends.cudnn.benchmark = True
    loader = "stoker-cpu"
    if torch.cuda.is_available():
        loader = f"stoker-gpu-hw{v['hw']}" if v["hw"] is not None else "stoker-gpu"
    for kind in ("dali", "dropin"):
        if v[kind] is not None:
            loader = f"{kind}-gpu" if torch.cuda.is_available() else f"{kind}-cpu"
            loader += f"-hw{v[kind]}" if v[kind] and torch.cuda.is_available() else ""
    threads = v["threads"] or args.threads
    mode = f"train-{args.model}" + ("-graph" if v["graph"] else "")
    spec = {"loader": loader, "pipeline": "rn50-train", "mode": mode,
            "threads": threads, "batch": args.batch, "size": args.size, "data": args.data}
    if v["cpudec"] and loader.startswith("stoker-gpu"):
        spec["decoder_args"] = {"cuda_decoder": "off"}
    step = harness._consumer(spec, torch)
    synth = next(loaders.synthetic_loader(spec))  # pins this thread with -pin
    batches = None if base in ("synthetic", "sidecar") else loaders.make_loader(spec)
    side = Sidecar(spec, args) if base == "sidecar" else None

    # The training thread's time in stoker's calls, and its waits in next().
    spent = {"next": 0.0, "release": 0.0, "next_switches": 0}

    def one():
        if batches is None:
            step(*synth)
            return
        s0 = voluntary_switches()
        t0 = time.perf_counter()
        x, y = next(batches)
        t1 = time.perf_counter()
        spent["next_switches"] += voluntary_switches() - s0
        step(*((x, y) if base == "fed" else synth))
        t2 = time.perf_counter()
        del x, y  # the batch's last references: its buffers go back to stoker's pools
        spent["next"] += t1 - t0
        spent["release"] += time.perf_counter() - t2

    t0, n = time.perf_counter(), 0
    while n < args.warmup_steps or time.perf_counter() - t0 < args.warmup:
        one()
        n += 1
    sched0, t0, steps = thread_sched(), time.perf_counter(), 0
    side_n0 = side.count() if side else 0
    spent.update(next=0.0, release=0.0, next_switches=0)
    while time.perf_counter() - t0 < args.window or steps == 0:
        one()
        steps += 1
    wall = time.perf_counter() - t0
    side_rate = (side.count() - side_n0) * args.batch / wall if side else None
    sched = per_step(sched0, thread_sched(), steps)
    env = {k: os.environ.get(k) for k in (kv.split("=", 1)[0] for kv in variant.split("+")[1:])}
    out = {"variant": variant, "env": env, "model": args.model, "threads": threads,
           "loader": loader,
           "images_per_s": steps * args.batch / wall, "step_ms": 1e3 * wall / steps,
           "thread_run_ms_per_step": sched["run_ms"],
           "thread_runq_wait_ms_per_step": sched["runq_wait_ms"],
           "voluntary_switches_per_step": sched["voluntary"],
           "involuntary_switches_per_step": sched["involuntary"],
           "next_ms_per_step": 1e3 * spent["next"] / steps,
           "next_voluntary_switches_per_step": spent["next_switches"] / steps,
           "release_ms_per_step": 1e3 * spent["release"] / steps,
           "threads_by_cores": threads_by_cores()}
    if side:
        out["sidecar_images_per_s"] = side_rate
    if args.profile_steps and torch.cuda.is_available():
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            t0 = time.perf_counter()
            for _ in range(args.profile_steps):
                one()
            torch.cuda.synchronize()
            out["profiled_step_ms"] = 1e3 * (time.perf_counter() - t0) / args.profile_steps
        with tempfile.TemporaryDirectory() as d:
            prof.export_chrome_trace(os.path.join(d, "trace.json"))
            events = json.load(open(os.path.join(d, "trace.json")))["traceEvents"]
        out["streams"], out["top_gpu_work"] = gpu_streams(events, args.profile_steps)
        out["model_idle"] = model_idle(events, args.profile_steps)
        out["api_threads"] = api_calls(events, args.profile_steps, training_thread_ids())
    if side:
        side.stop()
    return out


class Sidecar:
    """Stoker's loader for `spec` in a child process (bench/fed_gap.py --sidecar), taking a
    batch every args.sidecar_period seconds; count() is how many it has taken. Returns once
    it has taken its first batches, so the warm-up does not measure its start. The child ends
    with this process however it ends (an error, os._exit, a kill: see sidecar())."""

    def __init__(self, spec, args, timeout=120.0):
        import subprocess
        self.file = tempfile.NamedTemporaryFile(prefix="fed_gap_sidecar_", delete=False).name
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--data",
                                      args.data, "--sidecar", json.dumps(spec),
                                      "--sidecar-period", str(args.sidecar_period),
                                      "--sidecar-count", self.file],
                                     env={k: v for k, v in os.environ.items()
                                          if k != "STOKER_BENCH_PIN"})  # the training's cores
        t0 = time.perf_counter()
        while self.count() < 5:
            if self.proc.poll() is not None or time.perf_counter() - t0 > timeout:
                self.stop()
                raise RuntimeError("fed_gap: the sidecar loader did not start (exit "
                                   f"{self.proc.returncode}; see its messages above)")
            time.sleep(0.1)

    def count(self):
        try:
            return int(open(self.file).read() or 0)
        except (OSError, ValueError):
            return 0

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        os.unlink(self.file)


def sidecar(spec, period, count_file):
    """The sidecar's loop: a batch every `period` seconds, waited for on the GPU as a training
    step would, its count written to `count_file` (replaced whole, so never read half-written)."""
    import ctypes
    parent = os.getppid()
    # PR_SET_PDEATHSIG (1): killed when the measuring process ends, error or os._exit included.
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)
    sys.path.insert(0, HERE)
    import torch
    import loaders
    batches = loaders.make_loader(spec)
    n, due = 0, time.perf_counter()
    while os.getppid() == parent:  # the parent died before prctl took effect
        x, y = next(batches)
        if torch.cuda.is_available():
            torch.cuda.current_stream().synchronize()
        del x, y
        n += 1
        with open(count_file + ".tmp", "w") as f:
            f.write(str(n))
        os.replace(count_file + ".tmp", count_file)
        due += period
        time.sleep(max(0.0, due - time.perf_counter()))


# -- the driver -------------------------------------------------------------------------------

def table(rows):
    lines = ["| variant | images/s | step ms | thread run ms | run-queue wait ms | "
             "switches vol (in next()) / invol | next() ms | release ms | busiest stream ms | "
             "other streams ms | its idle ms (others' kernels running) | "
             "CUDA calls/step: training (launch µs) / other threads | threads per core set |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['variant']} | error: {r['error'][:100]} ||||||||||||")
            continue
        streams = r.get("streams") or []
        first = f"{streams[0]['busy_ms_per_step']:.2f}" if streams else ""
        rest = f"{sum(s['sum_ms_per_step'] for s in streams[1:]):.2f}" if streams else ""
        idle = r.get("model_idle") or {}
        idle = (f"{idle['idle_ms_per_step']:.2f} ({idle['idle_other_kernels_ms_per_step']:.2f})"
                if idle else "")
        api = r.get("api_threads") or []
        calls = ""
        if api:
            mine = [t for t in api if t["training_thread"]]
            launch = mine[0]["launch_us_mean"] if mine else None
            theirs = sum(t["calls_per_step"] for t in api if not t["training_thread"])
            calls = (f"{sum(t['calls_per_step'] for t in mine):.0f}"
                     f"{f' ({launch:.1f})' if launch else ''} / {theirs:.0f}")
        cores = ", ".join(f"{k}: {v}" for k, v in sorted(r.get("threads_by_cores", {}).items()))
        name = r["variant"]
        if r.get("sidecar_images_per_s") is not None:
            name += f" (sidecar {r['sidecar_images_per_s']:,.0f}/s)"
        lines.append(
            f"| {name} | {r['images_per_s']:,.0f} | {r['step_ms']:.1f} | "
            f"{r['thread_run_ms_per_step']:.1f} | {r['thread_runq_wait_ms_per_step']:.2f} | "
            f"{r['voluntary_switches_per_step']:.1f} "
            f"({r.get('next_voluntary_switches_per_step', 0):.1f}) / "
            f"{r['involuntary_switches_per_step']:.1f}"
            f" | {r['next_ms_per_step']:.2f} | {r['release_ms_per_step']:.3f} | {first} | "
            f"{rest} | {idle} | {calls} | {cores} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--variants", default="synthetic,fed,discard,synthetic-pin,fed-pin",
                    help="comma-separated; each may end in -pin / -pinN and +K=V environment")
    ap.add_argument("--model", default="resnet50")
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--warmup", type=float, default=5.0, help="seconds (and >= 10 steps)")
    ap.add_argument("--warmup-steps", type=int, default=10)
    ap.add_argument("--window", type=float, default=10.0, help="seconds")
    ap.add_argument("--profile-steps", type=int, default=0,
                    help="then profile this many steps' GPU work (CUPTI); 0: none")
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds per variant")
    ap.add_argument("--sidecar-period", type=float, default=0.057,
                    help="seconds between the sidecar's batches (default: the H100's synthetic "
                    "ResNet-50 step at batch 256)")
    ap.add_argument("--sidecar", help=argparse.SUPPRESS)
    ap.add_argument("--sidecar-count", help=argparse.SUPPRESS)
    ap.add_argument("--repeats", type=int, default=1,
                    help="processes per variant, the list run this many times over (A B A B); "
                    "a summary gives each variant's median with its range and %% of synthetic")
    ap.add_argument("--json")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.sidecar:
        sidecar(json.loads(args.sidecar), args.sidecar_period, args.sidecar_count)
        os._exit(0)  # its parent is gone; stoker's threads need no teardown
    if args.one:
        import faulthandler
        faulthandler.register(signal.SIGUSR1, all_threads=True)  # stacks, if it hangs
        print(json.dumps(measure(args.one, args)), flush=True)
        os._exit(0)  # no interpreter teardown with stoker's and CUDA's threads still there
    for variant in args.variants.split(","):
        split_variant(variant)  # a typo stops here, before any variant runs
    sys.path.insert(0, HERE)
    import harness
    rows = []
    for variant in args.variants.split(",") * max(1, args.repeats):
        cmd = [sys.executable, os.path.abspath(__file__), "--one", variant] + \
            [a for a in (argv if argv is not None else sys.argv[1:])]
        env = dict(kv.split("=", 1) for kv in variant.split("+")[1:])
        # A hung variant (the engines have hung before) is killed with its whole process group
        # and its threads' stacks kept beside the JSON; the next variant still runs.
        hang_log = os.path.join(os.path.dirname(os.path.abspath(args.json)),
                                f"hang-fed_gap-{variant}.txt") if args.json else None
        r = harness.run_process(cmd, args.timeout, env, hang_log, header=variant)
        rows.append({"variant": variant, "error": r["error"][-1]} if "error" in r else r)
        print(table(rows[-1:]).splitlines()[-1], flush=True)
        if args.json:  # rewritten after every process: a run cut short keeps what it measured
            with open(args.json, "w") as f:
                json.dump({"results": rows, "argv": argv if argv is not None else sys.argv[1:]},
                          f, indent=1)
    print(table(rows))
    if args.repeats > 1:
        print()
        print(summary(rows))


def summary(rows):
    """Each variant's median images/s over its processes, the range, and % of synthetic's
    median (when the run has a synthetic variant)."""
    rates = collections.defaultdict(list)
    for r in rows:
        if "error" not in r:
            rates[r["variant"]].append(r["images_per_s"])
    med = {v: statistics.median(x) for v, x in rates.items()}
    base = med.get("synthetic")
    lines = ["| variant | processes | images/s (median) | min-max | % of synthetic |",
             "|---|---:|---:|---:|---:|"]
    for v, x in rates.items():
        pct = f"{100 * med[v] / base:.1f}" if base else ""
        lines.append(f"| {v} | {len(x)} | {med[v]:,.0f} | {min(x):,.0f}-{max(x):,.0f} | {pct} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
