"""stoker against the loaders users would pick instead, side by side on the same data and
machine (issue 7). Every measurement runs in its own process (bench/loaders.py defines the
loaders and pipelines); this driver runs the plan, takes the median and spread of the repeats,
and writes JSON and a Markdown table.

    PYTHONPATH=build-gpu/python python3 bench/harness.py --data DIR/jpeg [--profile quick|full|tune]
        [--plan standard|headline|autotune|graph|smoke|ab|ab-cpu|ab-train|ab-cpu-per-image
         --ab-env K=V]
        [--json out.json] [--markdown out.md]

DIR comes from scripts/make_dataset.py. Modes:
- alone: the loader by itself; the consumer waits for each batch (stream sync), so images/s is
  what a training step could be fed. Also: CPU cores busy (the process and its children, from
  /proc), their resident memory, the GPU memory in use, and the NVJPG (hardware JPEG engines)
  and SM utilisation sampled by `nvidia-smi dmon` during the window.
- train-<model>: torchvision ResNet-50 or ResNet-18 training fed by the loader (AMP fp16,
  channels_last, SGD), images/s and % of the same model fed by the synthetic loader.
  Each step ends with a stream sync (as a loop that logs loss.item() every step does).
  train-<model>-graph: the same step captured in a CUDA graph (bench/train_step.py).
In both modes "wait %" is the share of the window the consumer spent getting the next batch
(next() on the loader): what the loader's latency costs a training loop that syncs.
STOKER_BENCH_CTX_WAIT=blocking|yield (a measurement's environment): the process's CUDA context
waits for the GPU by blocking or yielding instead of spinning (set before torch or the loader
creates it), for every thread — nvJPEG's waits inside its hardware decode included.
Method: warm-up of at least `warmup_batches` batches and `warmup_s` seconds, then a window of
at least `window_s` seconds; `repeats` processes per measurement; median and min-max.
Profiles: full = the issue's method (10 batches + 5 s warm-up, 20 s window, 3 repeats); quick =
a shorter window and one repeat, so the standard plan fits one 10-minute GPU-machine call
(the default); tune = the autotune plan's default (5 s warm-up, in which num_threads="auto"
settles, 10 s window, one repeat).
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# Profiles and plans: bench/plans.py (re-exported: tests and --plan use them from here).
sys.path.insert(0, HERE)
from plans import (PLANS, PROFILES, ab_cpu_per_image_plan, ab_cpu_plan, ab_plan,  # noqa: E402,F401
                   ab_train_plan, autotune_plan, graph_plan, headline_plan, smoke_plan,
                   standard_plan, threads_plan)


def _proc_tree_cpu_and_rss(root_pid):
    """(CPU seconds, resident bytes) of `root_pid` and its descendants, from /proc."""
    parents, stats = {}, {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(d)] = int(fields[1])
        stats[int(d)] = (int(fields[11]) + int(fields[12]), int(fields[21]))
    keep, changed = {root_pid}, True
    while changed:
        changed = False
        for pid, ppid in parents.items():
            if ppid in keep and pid not in keep:
                keep.add(pid)
                changed = True
    ticks, page = os.sysconf("SC_CLK_TCK"), os.sysconf("SC_PAGE_SIZE")
    cpu = sum(stats[p][0] for p in keep if p in stats) / ticks
    rss = sum(stats[p][1] for p in keep if p in stats) * page
    return cpu, rss


class GpuSampler:
    """`nvidia-smi dmon -s u` in the background: mean SM and JPG (NVJPG) utilisation."""

    def __init__(self):
        self.rows, self.proc = [], None
        if os.environ.get("STOKER_BENCH_DMON") == "0":
            return
        try:
            self.proc = subprocess.Popen(["nvidia-smi", "dmon", "-s", "u", "-d", "1", "-i", "0"],
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                         text=True, env=_tool_env())
        except OSError:
            return
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        header = None
        for line in self.proc.stdout:
            parts = line.split()
            if line.startswith("#") and "sm" in parts:
                header = parts[1:]
            elif header and parts and not line.startswith("#"):
                self.rows.append(dict(zip(header, parts)))

    def stop(self):
        if self.proc is None:
            return {}
        self.proc.terminate()
        self.proc.wait()

        def mean(key):
            vals = [float(r[key]) for r in self.rows if r.get(key, "-") not in ("-", "")]
            return round(sum(vals) / len(vals), 1) if vals else None
        return {"sm_util": mean("sm"), "nvjpg_util": mean("jpg")}


def measure(spec):
    import faulthandler
    # run_one asks on a hang; the interpreter's own stderr, which has a descriptor even where
    # sys.stderr was replaced (pytest's --capture=sys)
    faulthandler.register(signal.SIGUSR1, all_threads=True, file=sys.__stderr__)
    sys.path.insert(0, HERE)
    if os.environ.get("STOKER_BENCH_CTX_WAIT"):
        import fed_gap  # before anything creates the CUDA context
        fed_gap.set_context_wait(os.environ["STOKER_BENCH_CTX_WAIT"])
    import torch
    import loaders
    gpu = torch.cuda.is_available()
    if gpu:
        torch.backends.cudnn.benchmark = True
        free0, total = torch.cuda.mem_get_info()
    step = _consumer(spec, torch)
    it = loaders.make_loader(spec)
    t0 = time.perf_counter()
    n = 0
    while n < spec["warmup_batches"] or time.perf_counter() - t0 < spec["warmup_s"]:
        step(*next(it))
        n += 1
        _phase(f"warm-up batch {n}")
    sampler = GpuSampler() if gpu else None
    cpu0, _ = _proc_tree_cpu_and_rss(os.getpid())
    t0, images, waited = time.perf_counter(), 0, 0.0
    while time.perf_counter() - t0 < spec["window_s"] or images == 0:
        t1 = time.perf_counter()
        x, y = next(it)
        waited += time.perf_counter() - t1
        step(x, y)
        images += len(y)
    wall = time.perf_counter() - t0
    _phase(f"window done: {images} images in {wall:.1f} s")
    cpu1, rss = _proc_tree_cpu_and_rss(os.getpid())
    out = {**spec, "images_per_s": images / wall, "window_s": wall,
           "cpu_cores_busy": (cpu1 - cpu0) / wall, "rss_mb": rss / 1e6,
           "wait_pct": 100 * waited / wall}
    if gpu:
        out["gpu_mem_mb"] = (free0 - torch.cuda.mem_get_info()[0]) / 1e6
        out.update(sampler.stop())
    if loaders.LAST_PIPE is not None:  # where stoker's time went (CPU and GPU per operator)
        stats = loaders.LAST_PIPE.stats()  # operators with their counters (the decoder's split)
        out["operators"], out["memory"] = stats["operators"], stats["memory"]
        out["autotune"] = stats["autotune"]
        out["cpu_threads"] = stats["cpu"]  # per thread group: where the cores went
        out["report"] = loaders.LAST_PIPE.report()
    return out


def _phase(what):
    """Progress on stderr: a hung measurement's log shows how far it got."""
    print(f"[{time.perf_counter() - _T0:7.2f} s] {what}", file=sys.stderr, flush=True)


_T0 = time.perf_counter()


def _consumer(spec, torch):
    """What is done with each batch: wait for it (alone) or a training step (train-<model>,
    train-<model>-graph: bench/train_step.py)."""
    if spec["mode"] == "alone":
        def wait(x, y):
            if torch.cuda.is_available():
                torch.cuda.current_stream().synchronize()
        return wait
    import train_step
    return train_step.make_step(spec["mode"], torch, spec.get("sync_every", 1))


# -- the driver -----------------------------------------------------------------------------

def run_one(spec, timeout, logs=None):
    """One measurement in a new process group (DataLoader workers included), killed whole
    when it overruns `timeout` seconds: a hung loader is reported, with its threads' Python
    stacks (faulthandler, SIGUSR1) and native stacks (gdb, where installed) saved under `logs`,
    and leaves nothing behind to disturb the next measurement."""
    where = None
    if logs:
        where = os.path.join(logs, "hang-{loader}-{pipeline}-{mode}-{threads}.txt".format(**spec))
    r = run_process([sys.executable, os.path.abspath(__file__), "--one", json.dumps(spec)],
                    timeout, spec.get("env", {}), where, header=json.dumps(spec))
    return {**spec, "error": r["error"]} if "error" in r else r


def run_process(cmd, timeout, env=None, hang_log=None, header=""):
    """Runs a measuring process (`cmd`, `env` added to ours) in a new process group and returns
    the last JSON line it printed, or {"error": [message]}. On overrunning `timeout` seconds its
    threads' Python stacks (SIGUSR1: the process must have registered faulthandler for it) and
    native stacks go to `hang_log`, and the whole group is killed."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, env={**os.environ, **(env or {})})
    try:
        stdout, stderr = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        native = _native_stacks(p.pid)
        os.kill(p.pid, signal.SIGUSR1)  # faulthandler: every thread's Python stack to stderr
        time.sleep(1)
        os.killpg(p.pid, signal.SIGKILL)
        _, stderr = p.communicate()
        if hang_log:
            os.makedirs(os.path.dirname(hang_log) or ".", exist_ok=True)
            with open(hang_log, "w") as f:
                f.write(f"{header}\n\n== Python (faulthandler)\n{stderr}\n"
                        f"== native stacks\n{native}\n")
        return {"error": [f"timed out after {timeout:.0f} s (hung?)" +
                          (f"; stacks in {hang_log}" if hang_log else "")]}
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)  # leftover workers of a finished measurement
        except ProcessLookupError:
            pass
    lines = [ln for ln in stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        return {"error": (stderr or stdout).strip().splitlines()[-1:] or ["?"]}
    return json.loads(lines[-1])


def _tool_env():
    """The environment for outside tools (gdb, nvidia-smi): without LD_PRELOAD, which a
    sanitizer run sets for Python and which can make other programs hang."""
    return {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}


def _native_stacks(pid):
    """Every thread's native stack: gdb's, else py-spy's (a wheel, where gdb is not installed),
    else what /proc says of each thread."""
    tools = [["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt 25"],
             ["py-spy", "dump", "--native", "--pid", str(pid)]]
    for cmd in tools:
        if not shutil.which(cmd[0]):
            continue
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=_tool_env())
            return r.stdout[-200000:] + r.stderr[-2000:]
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"({cmd[0]} failed: {e})\n" + _proc_threads(pid)
    return "(no gdb or py-spy: threads from /proc)\n" + _proc_threads(pid)


def _proc_threads(pid):
    """Without gdb: each thread's name, state, kernel wait channel and system call number
    (202 futex: a lock or condition variable; 16 ioctl: inside the GPU driver)."""
    rows = []
    for tid in sorted(os.listdir(f"/proc/{pid}/task"), key=int):
        def read(name):
            try:
                with open(f"/proc/{pid}/task/{tid}/{name}") as f:
                    return f.read().strip()
            except OSError:
                return "?"
        state = next((ln.split(None, 1)[1] for ln in read("status").splitlines()
                      if ln.startswith("State:")), "?")
        rows.append(f"{tid:>8} {read('comm'):16} {state:14} {read('wchan'):24} "
                    f"syscall {read('syscall').split(' ')[0]}")
    return "\n".join(rows)


def summarise(runs):
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return {**runs[0], "repeats": len(runs)}
    rates = [r["images_per_s"] for r in ok]
    out = dict(sorted(ok, key=lambda r: r["images_per_s"])[len(ok) // 2])  # the median run
    out.update(images_per_s=statistics.median(rates), min=min(rates), max=max(rates),
               repeats=len(ok))
    return out


def add_percent_of_synthetic(results):
    """% of the synthetic loader's rate for the same model: measured with the same extra
    environment where the plan has one (an A/B setting may change the training loop itself),
    else without; from the same part (one run of --merge's inputs: one device call, maybe
    another machine than the next part's) where it has one. A percentage against another
    part's synthetic rate is marked (pct_cross_part), as the tables show it: "97.2 †"."""
    def key(r, env=None, part=True):
        return (r["mode"], tuple(sorted((r.get("env") or {}).items() if env is None else env)),
                r.get("part", 0) if part else None)
    synthetic = {}
    for r in results:
        if r["loader"] == "synthetic" and "error" not in r:
            synthetic[key(r)] = r["images_per_s"]
            synthetic.setdefault(key(r, part=False), r["images_per_s"])
    for r in results:
        r.pop("pct_of_synthetic", None), r.pop("pct_cross_part", None)
        if not r["mode"].startswith("train") or "error" in r:
            continue
        for k, cross in ((key(r), False), (key(r, {}), False),
                         (key(r, part=False), True), (key(r, {}, False), True)):
            if synthetic.get(k):
                r["pct_of_synthetic"] = 100 * r["images_per_s"] / synthetic[k]
                if cross:
                    r["pct_cross_part"] = True
                break


def cpu_topology():
    """The CPU's model and how many cores its logical CPUs are, as the system reports them (a
    virtual machine's vCPUs may still share physical cores: thread sweeps say more)."""
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
    except OSError:
        return info
    cores, core = set(), {}
    for block in text.split("\n\n"):
        for line in block.splitlines():
            key, _, value = line.partition(":")
            core[key.strip()] = value.strip()
        if "processor" in core:
            cores.add((core.get("physical id", "0"), core.get("core id", core["processor"])))
            info.setdefault("cpu_model", core.get("model name", ""))
        core = {}
    if cores:
        info["physical_cores"] = len(cores)
    return info


def environment():
    import torch
    env = {"date": datetime.date.today().isoformat(), "cpus": os.cpu_count(),
           "python": platform.python_version(), "torch": torch.__version__,
           "machine": platform.machine(), **cpu_topology()}
    try:
        import torchvision
        env["torchvision"] = torchvision.__version__
    except ImportError:
        pass
    if torch.cuda.is_available():
        env["gpu"] = torch.cuda.get_device_name(0)
        try:
            env["driver"] = subprocess.run(
                ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                capture_output=True, text=True, env=_tool_env()).stdout.strip()
        except OSError:
            pass
        env["cuda"] = torch.version.cuda
    return env


def _fmt(v, digits=0):
    return "" if v is None else f"{v:,.{digits}f}"


def markdown(results, env, profile):
    cpus = f"{env['cpus']} CPUs" + (f" ({env['physical_cores']} cores, {env['cpu_model']})"
                                     if "physical_cores" in env else "")
    head = (f"{env['date']}, {env.get('gpu', 'no GPU')}, {cpus}, torch "
            f"{env['torch']}, torchvision {env.get('torchvision', '-')}, driver "
            f"{env.get('driver', '-')}; profile {profile} (warm-up >= {PROFILES[profile]['warmup_s']}"
            f" s, window >= {PROFILES[profile]['window_s']} s, median of "
            f"{PROFILES[profile]['repeats']}).")
    lines = [head, "", "| pipeline | mode | loader | threads | images/s | min-max | % of synthetic |"
             " wait % | CPU cores busy | images per core-s | RSS MB | GPU MB | NVJPG % | SM % |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        loader = r["loader"] + "".join(f" ({k}={v})" for k, v in r.get("env", {}).items())
        if "error" in r:
            lines.append(f"| {r['pipeline']} | {r['mode']} | {loader} | {r['threads']} | "
                         f"error: {' '.join(r['error'])[:120]} |||||||||")
            continue
        lines.append(
            f"| {r['pipeline']} | {r['mode']} | {loader} | {r['threads']} | "
            f"{_fmt(r['images_per_s'])} | {_fmt(r['min'])}-{_fmt(r['max'])} | "
            f"{_fmt(r.get('pct_of_synthetic'), 1)}{' †' if r.get('pct_cross_part') else ''} | "
            f"{_fmt(r.get('wait_pct'), 1)} | "
            f"{_fmt(r['cpu_cores_busy'], 1)} | "
            f"{_fmt(r['images_per_s'] / r['cpu_cores_busy'] if r['cpu_cores_busy'] else None)} | "
            f"{_fmt(r['rss_mb'])} | {_fmt(r.get('gpu_mem_mb'))} | {_fmt(r.get('nvjpg_util'))} | "
            f"{_fmt(r.get('sm_util'))} |")
    if any(r.get("pct_cross_part") for r in results):
        lines += ["", "† against the synthetic rate of another part of the merge (another "
                  "device call, possibly another machine): not comparable."]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--data")
    ap.add_argument("--profile", choices=sorted(PROFILES),
                    help="default: tune for --plan autotune (the tuner settles in its warm-up), "
                         "else quick")
    ap.add_argument("--plan", choices=sorted(PLANS) + ["smoke", "ab", "ab-cpu", "ab-train",
                                                       "ab-cpu-per-image"],
                    default="standard")
    ap.add_argument("--ab-env", default="", metavar="K=V,...",
                    help="the B side's environment for --plan ab")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--cores", type=int, default=os.cpu_count())
    ap.add_argument("--only", help="comma-separated loaders to keep from the plan")
    ap.add_argument("--part", help="K/N: only the K-th of N equal parts of the plan (1-based), "
                                   "to spread it over several calls")
    ap.add_argument("--items", help="A:B: only the plan's items A to B-1 (as a Python slice)")
    ap.add_argument("--timeout", type=float, default=180, help="seconds per measurement")
    ap.add_argument("--merge", nargs="+", metavar="JSON",
                    help="combine the results of earlier runs (parts) into one table")
    ap.add_argument("--json", help="results, rewritten after every measurement")
    ap.add_argument("--markdown")
    ap.add_argument("--logs", help="folder for the stacks of hung measurements")
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(measure(json.loads(args.one))), flush=True)
        return 0
    if args.merge:
        runs = [json.load(open(f)) for f in args.merge]
        merged = [{**r, "part": r.get("part", i)} for i, run in enumerate(runs)
                  for r in run["results"]]
        return report(merged, runs[0]["environment"], runs[0]["profile"], args)
    if not args.data:
        ap.error("--data is required")
    args.profile = args.profile or ("tune" if args.plan == "autotune" else "quick")
    ab_env = dict(kv.split("=", 1) for kv in args.ab_env.split(",") if "=" in kv)
    if args.plan.startswith("ab") and not ab_env:
        ap.error(f"--plan {args.plan} needs --ab-env K=V")
    import torch
    gpu = torch.cuda.is_available()
    if args.plan == "ab":
        plan = ab_plan(args.cores, gpu, ab_env)
    elif args.plan == "ab-cpu":
        plan = ab_cpu_plan(args.cores, ab_env)
    elif args.plan == "ab-train":
        plan = ab_train_plan(gpu, ab_env)
    elif args.plan == "ab-cpu-per-image":
        plan = ab_cpu_per_image_plan(gpu, ab_env)
    else:
        plan = {**PLANS, "smoke": smoke_plan}[args.plan](args.cores, gpu)
    if args.only:
        keep = set(args.only.split(","))
        plan = [p for p in plan if p[0] in keep]
    if args.part:
        k, n = (int(v) for v in args.part.split("/"))
        plan = plan[len(plan) * (k - 1) // n:len(plan) * k // n]
    if args.items:
        a, b = (int(v) if v else None for v in args.items.split(":"))
        plan = plan[a:b]
    profile = PROFILES[args.profile]
    env = environment()
    results = []
    for item in plan:
        loader, pipeline, mode, threads = item[:4]
        spec = {"loader": loader, "pipeline": pipeline, "mode": mode, "threads": threads,
                "env": item[4] if len(item) > 4 else {},
                "batch": args.batch, "size": args.size, "data": os.path.abspath(args.data),
                "warmup_batches": profile["warmup_batches"], "warmup_s": profile["warmup_s"],
                "window_s": profile["window_s"]}
        r = summarise([run_one(spec, args.timeout, args.logs)
                       for _ in range(profile["repeats"])])
        results.append(r)
        if args.json:  # what is measured survives a run cut short
            with open(args.json, "w") as f:
                json.dump({"environment": env, "profile": args.profile, "results": results}, f,
                          indent=1)
        rate = f"{r['images_per_s']:,.0f} images/s" if "error" not in r else r["error"]
        print(f"{pipeline:12} {mode:16} {loader:18} {threads:3} threads: {rate}", flush=True)
    return report(results, env, args.profile, args)


def report(results, env, profile, args):
    add_percent_of_synthetic(results)
    table = markdown(results, env, profile)
    print(table)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"environment": env, "profile": profile, "results": results}, f,
                      indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table)
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
