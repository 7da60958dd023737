"""Pipeline.report()'s text: stats() as readable tables."""


def format_report(s):
    """The stages' time, the CPU cores, each operator's time and GPU time per batch, the
    parallel sources' waits and worker time, and (num_threads="auto") the tuner's changes, from
    a Pipeline.stats() dict."""
    lines = ["stage      iterations   busy s  starved s  blocked s   CPU s   queue"]
    for st in s["stages"]:
        queue = (f"{st['queue_mean']:4.1f}/{st['queue_capacity']}"
                 if st["queue_capacity"] else "")
        cpu = f"{st['cpu']:7.2f}" if st["stage"] != "consumer" else ""
        name = st["stage"] + (f" x{st['threads']}" if st.get("threads", 1) > 1 else "")
        lines.append(f"{name:10} {st['iterations']:10d} {st['busy']:8.2f} "
                     f"{st['starved']:10.2f} {st['blocked']:10.2f} {cpu:>7} {queue:>7}"
                     .rstrip())
    c = s["cpu"]
    lines.append(f"CPU cores busy: {c['cores']:.2f} (" + ", ".join(
        f"{k} {v:.2f} s" for k, v in c["threads"].items()) + f" in {c['wall']:.2f} s)")
    g = s.get("gpu", {})
    if g.get("available") and g.get("samples"):
        jpg = f", NVJPG {g['nvjpg_percent']:.0f}%" if g["nvjpg_percent"] >= 0 else ""
        lines.append(f"GPU (NVML, {g['samples']} samples): SM {g['sm_percent']:.0f}%{jpg}")
    lines += ["", "operator                        backend   samples   ms/sample   MB out"
                  "   GPU ms/batch"]
    for o in s["operators"]:
        per = 1000 * o["seconds"] / o["samples"] if o["samples"] else 0.0
        gpu = f"{1000 * o['gpu_seconds'] / o['gpu_runs']:14.3f}" if o["gpu_runs"] else ""
        lines.append(f"{o['name'][:31]:31} {o['backend']:8} {o['samples']:8d} {per:11.3f} "
                     f"{o['bytes_out'] / 1e6:8.1f} {gpu}".rstrip())
    sources = s.get("external_sources", {})
    if sources:
        lines += ["", "parallel source                 batches   run() waited s   worker s   "
                      "shm MB"]
        lines += [f"{name[:31]:31} {v['batches']:7d} {v['wait_seconds']:16.2f} "
                  f"{v['worker_seconds']:10.2f} {v['shm_capacity'] / 1e6:8.1f}"
                  for name, v in sources.items()]
    tuned = s.get("autotune", {}).get("changes", [])
    if tuned:
        lines += ["", f"threads (auto): {s['autotune']['threads']} now; changes:"]
        lines += [f"  at {c['time']:6.1f} s -> {c['threads']:3d}  ({c['why']}; before: "
                  f"{c['rate']:,.0f} images/s, consumer waiting {100 * c['wait']:.0f}%)"
                  for c in tuned]
    depth = s.get("autotune", {}).get("prefetch_changes", [])
    if depth:
        lines += ["", f"prefetch queue (auto): {s['autotune']['prefetch_queue_depth']} batches "
                      "now; changes:"]
        lines += [f"  at {c['time']:6.1f} s -> {c['depth']:3d}  (consumer waiting "
                  f"{100 * c['wait']:.0f}%, pipeline blocked {100 * c['blocked']:.0f}%)"
                  for c in depth]
    return "\n".join(lines)
