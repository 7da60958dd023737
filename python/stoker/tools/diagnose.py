"""stoker diagnose: is the loader what keeps training from going faster, and if so, which part?

    stoker diagnose --data DIR [--pipeline rn50-train|rn50-val] [--model resnet50] [--threads N]
                    [--seconds S] [--batch B] [--json] [--png FILE]

Measures (each after a warm-up) the loader alone, the model on synthetic data (the same tensor
every step: what the GPU can consume) and the model fed by the loader, prints images/s and "%
of synthetic", names the bottleneck from the pipeline's own statistics (stage busy/starved
times, queue occupancy, per-operator times, CPU cores used) and recommends settings. With a
GPU it samples the GPU's utilisation (nvidia-smi) during both training runs and saves their
histograms as a PNG (or, without matplotlib, as JSON: `stoker diagnose --plot FILE.json`).
Without a GPU (or torch) it measures the loader alone and says what it could not measure.
DIR is a class-folder tree of JPEGs (scripts/make_dataset.py makes one).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time

from stoker import _schema
from stoker.tools.thread_stats import per_step, thread_sched

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def build_pipeline(data, pipeline, batch, threads, gpu, size=224):
    """The diagnosed pipeline: RN50-train (random resized crop, flip, normalize, fp16 NCHW) or
    RN50-val (resize shorter 256, centre crop), on the GPU (mixed decoder) when `gpu`."""
    import stoker
    from stoker import fn, types
    dev = "gpu" if gpu else "cpu"
    pipe = stoker.Pipeline(batch_size=batch, num_threads=threads, seed=0,
                           device_id=0 if gpu else None, pinned_outputs=gpu)
    with pipe:
        jpegs, labels = fn.readers.file(file_root=data, random_shuffle=True, name="reader")
        decoder = {"device": "mixed" if gpu else "cpu"}
        if pipeline == "rn50-val":
            images = fn.decoders.image(jpegs, name="decode", **decoder)
            images = fn.resize(images, device=dev, resize_shorter=size * 8 // 7, name="resize")
            mirror = 0
        else:
            images = fn.decoders.image_random_crop(jpegs, name="decode", **decoder)
            images = fn.resize(images, device=dev, size=(size, size), name="resize")
            mirror = fn.random.coin_flip()
        images = fn.crop_mirror_normalize(images, device=dev, crop=(size, size), mirror=mirror,
                                          mean=MEAN, std=STD, dtype=types.FLOAT16,
                                          output_layout="CHW", name="normalize")
        pipe.set_outputs(images, labels.gpu() if gpu else labels)
    pipe.build()
    return pipe


def _window(step, seconds, warmup_s):
    """Runs step() for warmup_s, then for at least `seconds`: (steps, seconds)."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < warmup_s:
        step()
    t0, n = time.perf_counter(), 0
    while time.perf_counter() - t0 < seconds or n == 0:
        step()
        n += 1
    return n, time.perf_counter() - t0


def batch_waiter(gpu):
    """wait(outputs) for a GPU pipeline's batch, as a training loop waits for it: torch's
    stream waits for the batch (DLPack), the host for the stream; without torch, a host copy.
    None for CPU pipelines (run() returns finished batches)."""
    if not gpu:
        return None
    try:
        import torch
    except ImportError:
        return lambda outputs: outputs[0].as_cpu()

    def wait(outputs):
        torch.from_dlpack(outputs[0])
        torch.cuda.current_stream().synchronize()
    return wait


def measure_loader(pipe, batch, seconds, warmup_s, wait=None):
    """Images/s of the pipeline alone, and its statistics; wait(outputs) waits for a GPU
    batch (as the training loop would)."""
    def step():
        outputs = pipe.run()
        if wait:
            wait(outputs)
    n, wall = _window(step, seconds, warmup_s)
    return {"images_per_s": n * batch / wall, "stats": pipe.stats(), "report": pipe.report()}


class UtilSampler:
    """GPU utilisation (%) every 100 ms from nvidia-smi, in the background."""

    def __init__(self):
        self.values, self.proc = [], None
        if not shutil.which("nvidia-smi"):
            return
        env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        self.proc = subprocess.Popen(
            ["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits",
             "-i", "0", "-lms", "100"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, env=env)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            try:
                self.values.append(float(line.strip()))
            except ValueError:
                pass

    def stop(self):
        if self.proc:
            self.proc.terminate()
            self.proc.wait()
        return self.values


def measure_training(model_name, batch, seconds, warmup_s, batches, size=224):
    """Images/s of torchvision `model_name` training (AMP fp16, channels_last, SGD) on the
    batches `batches()` yields (a torch (images, labels) pair each), and the GPU utilisation
    samples of the window, and the training thread's scheduling per step (it runs step())."""
    import torch
    import torchvision
    torch.backends.cudnn.benchmark = True
    model = getattr(torchvision.models, model_name)(num_classes=1000).cuda()
    model = model.to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    scaler = torch.amp.GradScaler("cuda")
    loss_fn = torch.nn.CrossEntropyLoss()
    it = batches()

    def step():
        x, y = next(it)
        x = x.contiguous(memory_format=torch.channels_last)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = loss_fn(model(x), y % 1000)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        torch.cuda.current_stream().synchronize()  # as a loop that logs loss.item() does

    t0 = time.perf_counter()
    while time.perf_counter() - t0 < warmup_s:
        step()
    sampler = UtilSampler()
    before = thread_sched()
    n, wall = _window(step, seconds, 0)
    return {"images_per_s": n * batch / wall, "gpu_util": sampler.stop(),
            "training_thread": per_step(before, thread_sched(), n)}


def bottleneck(loader_rate, synthetic_rate, fed_rate, stats, threads, cores, waits=None,
               gpu=None, machine_cores=None):
    """(what limits training, [recommendations]) from the three rates (synthetic and fed are
    None without a GPU) and the loader's stats() while running alone; `cores`: the cores the
    pipeline kept busy; `waits`: the training thread's voluntary switches per step (synthetic,
    fed), the evidence of contention. Advice fits the machine: GPU decoding only where there
    is a GPU (`gpu`; default: whether training was measured), more threads only where cores
    are idle (`machine_cores`: the cores this process may use)."""
    if gpu is None:
        gpu = synthetic_rate is not None
    if machine_cores is None:
        machine_cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
            else (os.cpu_count() or 1)
    idle = machine_cores - cores  # cores the pipeline left idle while it ran alone
    stages = [s for s in stats["stages"] if s["stage"] != "consumer"]
    ops = stats["operators"]
    recs = []
    if synthetic_rate and fed_rate and fed_rate >= 0.97 * synthetic_rate:
        return (f"the GPU (the model itself): fed by stoker it trains at "
                f"{100 * fed_rate / synthetic_rate:.1f}% of its synthetic-data speed"), recs
    if synthetic_rate and loader_rate >= 1.1 * synthetic_rate:
        # Fast enough alone, slower when training: they compete for the machine.
        what = ("host contention with the training thread, or stoker's GPU work sharing the "
                f"GPU: the loader alone delivers {loader_rate:,.0f} images/s, "
                f"{loader_rate / synthetic_rate:.1f}x what the model consumes")
        if waits and waits[1] > 2 * waits[0] + 5:
            what += (f"; the training thread blocked {waits[1]:.0f} times per step fed, "
                     f"{waits[0]:.0f} on synthetic data (on an H100 these were waits for the "
                     "CUDA driver's locks, held by the hardware decoder's per-image calls: "
                     "its kernel launches took 17 µs instead of 9, docs/findings.md)")
        if threads > 4:
            recs.append(f"try num_threads=4 (now {threads}): the model consumes "
                        f"{100 * synthetic_rate / loader_rate:.0f}% of what the loader delivers "
                        "alone, and fewer threads leave the training thread its core")
        recs.append("or num_threads='auto' (with cpu_budget=N to cap it): stoker gives back "
                    "the threads the model does not need")
        recs.append("keep the labels on the GPU with labels.gpu() and avoid per-step host "
                    "copies in the training loop")
        if (os.cpu_count() or 1) >= 2:  # a core for the training thread, the rest for stoker
            recs.append("give the training thread a core of its own: os.sched_setaffinity(0, "
                        "{0}) in it and Pipeline(cpu_affinity=range(1, os.cpu_count())) (part "
                        "of ResNet-50's loss on two H100 instances, docs/findings.md; threads "
                        "it starts later, torch's CPU pool included, share that core)")
        return what, recs
    # The loader itself is too slow (or there is nothing to compare with): its busiest stage.
    busiest = max(stages, key=lambda s: s["busy"] - s["starved"])
    name = busiest["stage"]
    stage_ops = [o for o in ops if o["backend"] == name] or ops
    top = max(stage_ops, key=lambda o: o["seconds"])
    per = 1000 * top["seconds"] / top["samples"] if top["samples"] else 0.0
    if _schema.is_reader(top["op"]):
        what = f"storage: the reader '{top['name']}' ({per:.3f} ms per sample)"
        recs.append("put the data on faster storage or in fewer, larger files (TFRecord, "
                    "webdataset: `stoker convert`)")
    elif name == "cpu":
        what = (f"the CPU stage: operator '{top['name']}' ({top['op']}, {per:.3f} ms per "
                f"sample on its thread); {cores:.1f} cores busy with {threads} threads")
        if "decoders" in top["op"] and gpu:
            recs.append("decode on the GPU: fn.decoders.image(..., device='mixed') uses the "
                        "hardware JPEG engines and nvJPEG")
        if idle >= 1 and threads < machine_cores:
            recs.append(f"more threads: {idle:.0f} of the {machine_cores} cores were idle "
                        f"(num_threads, now {threads}), or num_threads='auto' to find the count")
        else:
            recs.append(f"the {machine_cores} cores were all busy: more threads cannot help; "
                        "less work per sample can (a smaller decode with "
                        "fn.decoders.image_random_crop, which decodes only the window; fewer "
                        "operators)" + ("" if gpu else ", or a machine with more cores or a GPU"))
    elif name == "mixed":
        counters = top.get("counters", {})
        what = f"the decoder '{top['name']}' (mixed stage)"
        if counters:
            what += f": split {json.dumps({k: v for k, v in counters.items() if 'load' in k})}"
        recs.append("hw_decoder_load='auto' balances the engines and the threads (and gives "
                    "the engines all they can take when training sets a slower pace)"
                    + ("; more threads help when the CPU's share is the slower one"
                       if idle >= 1 else ""))
    else:
        gpu_ms = 1000 * top["gpu_seconds"] / top["gpu_runs"] if top.get("gpu_runs") else 0.0
        what = (f"the GPU stage: operator '{top['name']}' ({gpu_ms:.2f} ms of GPU stream time "
                "per batch)")
        recs.append("fewer or fused GPU operators (resize -> crop_mirror_normalize chains "
                    "fuse into one kernel)")
    if busiest["queue_capacity"] and busiest["queue_mean"] > 0.8 * busiest["queue_capacity"]:
        recs.append("its queue is usually full: the consumer, not stoker, sets the pace")
    return what, recs


def plot(hist_json, png):
    """Draws the GPU utilisation histograms of a diagnose run (JSON) as a PNG."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    with open(hist_json) as f:
        h = json.load(f)
    fig, ax = plt.subplots(figsize=(7, 4))
    bins = list(range(0, 105, 5))
    for label, values in h["gpu_util"].items():
        if values:
            mean = sum(values) / len(values)
            ax.hist(values, bins=bins, alpha=0.6, label=f"{label} (mean {mean:.0f}%)")
    ax.set_xlabel("GPU utilisation (%), sampled every 100 ms")
    ax.set_ylabel("samples")
    ax.set_title(h.get("title", "GPU utilisation during training"))
    ax.legend()
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    return png


def diagnose(args):
    import stoker
    gpu = stoker._stoker.cuda_available()
    try:
        import torch
        import torchvision  # noqa: F401
        torch_gpu = gpu and torch.cuda.is_available()
    except ImportError:
        torch, torch_gpu = None, False
    threads = args.threads or min(os.cpu_count() or 1, 16)  # a count, or "auto"
    out = {"data": args.data, "pipeline": args.pipeline, "model": args.model,
           "threads": threads, "batch": args.batch, "gpu": gpu, "notes": []}
    pipe = build_pipeline(args.data, args.pipeline, args.batch, threads, gpu)
    alone = measure_loader(pipe, args.batch, args.seconds, args.warmup, batch_waiter(gpu))
    cpu = alone["stats"]["cpu"]
    out["loader_alone"] = {"images_per_s": alone["images_per_s"], "cores": cpu["cores"],
                           "threads_used": pipe.autotune()["threads"]}
    stats = alone["stats"]
    synthetic = fed = None
    if not torch_gpu:
        out["notes"].append("no CUDA GPU (or no torch/torchvision): measured the loader alone; "
                            "the training comparison needs a GPU")
    else:
        def synthetic_batches():
            x = torch.randn(args.batch, 3, 224, 224, device="cuda").half()
            y = torch.randint(0, 1000, (args.batch,), device="cuda")
            while True:
                yield x, y

        def stoker_batches():
            while True:
                images, labels = pipe.run()
                yield (torch.from_dlpack(images),
                       torch.from_dlpack(labels).to("cuda", non_blocking=True).reshape(-1).long())
        syn = measure_training(args.model, args.batch, args.seconds, args.warmup,
                               synthetic_batches)
        fedm = measure_training(args.model, args.batch, args.seconds, args.warmup,
                                stoker_batches)
        synthetic, fed = syn["images_per_s"], fedm["images_per_s"]
        out["synthetic"] = {"images_per_s": synthetic, "training_thread": syn["training_thread"]}
        out["fed"] = {"images_per_s": fed, "pct_of_synthetic": 100 * fed / synthetic,
                      "threads_used": pipe.autotune()["threads"],
                      "training_thread": fedm["training_thread"]}
        hist = {"title": f"{args.model}, batch {args.batch}: GPU utilisation",
                "gpu_util": {"synthetic data": syn["gpu_util"], "fed by stoker": fedm["gpu_util"]}}
        base = os.path.splitext(args.png)[0]
        with open(base + ".json", "w") as f:
            json.dump(hist, f)
        out["histogram_json"] = base + ".json"
        try:
            out["png"] = plot(base + ".json", args.png)
        except ImportError:
            out["notes"].append(f"matplotlib is not installed: the histograms are in "
                                f"{base}.json (`stoker diagnose --plot {base}.json` draws them)")
    pipe.close()
    waits = None
    if out.get("fed", {}).get("training_thread") and out["synthetic"]["training_thread"]:
        waits = (out["synthetic"]["training_thread"]["voluntary"],
                 out["fed"]["training_thread"]["voluntary"])
    what, recs = bottleneck(alone["images_per_s"], synthetic, fed, stats,
                            out["loader_alone"]["threads_used"], cpu["cores"], waits, gpu=gpu)
    if threads == "auto":  # what the tuner chose is the recommendation
        chosen = out.get("fed", out["loader_alone"])["threads_used"]
        recs = [r for r in recs if "num_threads" not in r]
        recs.insert(0, f"num_threads='auto' settled at {chosen} threads"
                       f"{' while training' if 'fed' in out else ''} (alone: "
                       f"{out['loader_alone']['threads_used']}): keep 'auto', or fix "
                       f"num_threads={chosen}")
    out["bottleneck"], out["recommendations"] = what, recs
    out["report"] = alone["report"]
    out["stages"] = stats["stages"]
    out["operators"] = [{k: o[k] for k in ("name", "op", "backend", "samples", "seconds",
                                            "gpu_runs", "gpu_seconds")} for o in stats["operators"]]
    return out


def text(out):
    lines = [f"stoker diagnose: {out['pipeline']} on {out['data']}, batch {out['batch']}, "
             f"{out['threads']} threads, {'GPU' if out['gpu'] else 'CPU only'}",
             f"  loader alone:            {out['loader_alone']['images_per_s']:10,.0f} images/s "
             f"({out['loader_alone']['cores']:.1f} cores busy)"]
    if "synthetic" in out:
        rate = out["synthetic"]["images_per_s"]
        lines.append(f"  {out['model']} on synthetic data: {rate:10,.0f} images/s")
        lines.append(f"  {out['model']} fed by stoker:    {out['fed']['images_per_s']:10,.0f} "
                     f"images/s = {out['fed']['pct_of_synthetic']:.1f}% of synthetic")
        syn_t, fed_t = out["synthetic"].get("training_thread"), out["fed"].get("training_thread")
        if syn_t and fed_t:
            lines.append(f"  training thread per step: blocked {fed_t['voluntary']:.0f} times "
                         f"fed ({syn_t['voluntary']:.0f} on synthetic data), waited for a core "
                         f"{fed_t['runq_wait_ms']:.2f} ms ({syn_t['runq_wait_ms']:.2f})")
    lines.append(f"bottleneck: {out['bottleneck']}")
    recs = out["recommendations"]
    lines += [f"  - {r}" for r in recs]
    lines += [f"note: {n}" for n in out["notes"]]
    if out.get("png"):
        lines.append(f"GPU utilisation histograms: {out['png']}")
    lines += ["", "the pipeline's own statistics (loader alone):", out["report"]]
    return "\n".join(lines)


def _threads(value):
    """--threads: a count >= 1 or "auto"."""
    if value == "auto":
        return value
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of threads or 'auto', got "
                                         f"'{value}'") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1 thread, got {n}")
    return n


def main(argv=None, prog="stoker diagnose"):
    ap = argparse.ArgumentParser(prog=prog, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="class-folder tree of JPEGs")
    ap.add_argument("--pipeline", choices=["rn50-train", "rn50-val"], default="rn50-train")
    ap.add_argument("--model", default="resnet50",
                    help="a torchvision model (resnet50, resnet18, ...)")
    ap.add_argument("--threads", type=_threads, default=0, help="pipeline threads, or 'auto' "
                                                                "(default: cores, "
                                                           "at most 16)")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--seconds", type=float, default=10.0, help="each measurement's window")
    ap.add_argument("--warmup", type=float, default=3.0, help="seconds before each window")
    ap.add_argument("--png", default="stoker-diagnose.png", help="the histograms' PNG")
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    ap.add_argument("--plot", metavar="JSON", help="only draw the PNG of an earlier run's JSON")
    args = ap.parse_args(argv)
    if args.plot:
        print(plot(args.plot, args.png))
        return 0
    if not args.data:
        ap.error("--data is required")
    if not os.path.isdir(args.data):
        ap.error(f"--data {args.data}: not a folder")
    out = diagnose(args)
    print(json.dumps(out, indent=1) if args.json else text(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
