"""Soak: nothing grows while stoker runs for long or is built and dropped many times.

    PYTHONPATH=build/python python3 scripts/soak.py [--minutes 20] [--cycles 200] [--data DIR]
        [--device gpu|cpu] [--json FILE]

1. Training: the ResNet-50 training pipeline (readers.file, image_random_crop decoding -- mixed
   on a GPU --, resize, crop_mirror_normalize, coin_flip) feeding a torchvision ResNet-50 step
   (bench/train_step.py; with --device cpu the batches are only consumed) through the PyTorch
   plugin's DALIGenericIterator, for --minutes. The process's RSS, its threads (and, over the
   cycles, its file descriptors) and its GPU memory (NVML's count for this process; the whole
   device's used memory where the driver does not list the process, and then nothing else may
   use the GPU) are sampled every 15 s; after a warm-up (the first fifth, at least a minute,
   when pools and caches fill) the mean of the last third of each series
   must be within +-2% of the mean of its first third (threads: every sample equal).
2. Cycles: --cycles times, a GPU pipeline (the same, plus a python_function and a parallel
   external source: the parts that hold threads and processes) is built, run for a few
   batches and deleted; RSS, threads and GPU memory are sampled every 10 cycles from cycle 20
   and judged the same way.
The data: --data (a class-folder tree of JPEGs), else 512 synthetic photos-sized JPEGs
written to a temporary folder. Exits 1 naming what grew; --json writes the samples.
"""

import argparse
import ctypes
import json
import os
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def rss_mb():
    """Resident memory after giving free heap pages back (glibc keeps freed memory in its
    arenas: without the trim, RSS wanders by a few % with no leak)."""
    import gc
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024


def threads():
    return len(os.listdir("/proc/self/task"))


def descriptors():
    return len(os.listdir("/proc/self/fd"))


class _NvmlProcess(ctypes.Structure):
    # nvmlProcessInfo_v2_t (the layout of the _v2 and _v3 calls)
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong),
                ("gpuInstanceId", ctypes.c_uint), ("computeInstanceId", ctypes.c_uint)]


def _nvml_process_mb():
    """This process's GPU memory as the driver counts it (CUDA context, nvJPEG's and torch's
    allocations, stoker's pools), summed over the GPUs, or None where NVML does not list this
    process (a container whose PIDs the driver does not see). Per process, so that other work
    on the GPU does not move the series."""
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
        count = ctypes.c_uint(0)
        if nvml.nvmlInit_v2() != 0 or nvml.nvmlDeviceGetCount_v2(ctypes.byref(count)) != 0:
            return None
        call = getattr(nvml, "nvmlDeviceGetComputeRunningProcesses_v3", None) or \
            nvml.nvmlDeviceGetComputeRunningProcesses_v2
        found, total = False, 0
        for index in range(count.value):
            device = ctypes.c_void_p()
            if nvml.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(device)) != 0:
                return None
            n = ctypes.c_uint(256)
            infos = (_NvmlProcess * 256)()
            if call(device, ctypes.byref(n), infos) != 0:
                return None
            for info in infos[:n.value]:
                if info.pid == os.getpid():
                    found, total = True, total + info.usedGpuMemory
        return total / 2**20 if found else None
    except (OSError, AttributeError):
        return None


GPU_MEASURE = {"kind": None}


def gpu_used_mb(torch):
    """This process's GPU memory from NVML where the driver lists it; else the whole device's
    used memory (then nothing else may run on the GPU during the soak). GPU_MEASURE says which,
    decided at the first call and kept for the whole run."""
    if torch is None or not torch.cuda.is_available():
        return 0.0
    if GPU_MEASURE["kind"] in (None, "process"):
        mine = _nvml_process_mb()
        if mine is not None:
            GPU_MEASURE["kind"] = "process"
            return mine
        if GPU_MEASURE["kind"] == "process":
            raise RuntimeError("NVML stopped listing this process")
        GPU_MEASURE["kind"] = "device"
    free, total = torch.cuda.mem_get_info()
    return (total - free) / 2**20


def synthetic_jpegs(root, n=512):
    from PIL import Image
    rng = np.random.default_rng(0)
    for k in range(n):
        folder = os.path.join(root, str(k % 8))
        os.makedirs(folder, exist_ok=True)
        # Smooth content, as photos compress: ~40-60 KB at 500x375.
        y, x = np.mgrid[0:375, 0:500]
        img = np.stack([(x * (k % 7 + 1)) % 256, (y * (k % 5 + 1)) % 256,
                        rng.integers(0, 255, (375, 500))], -1).astype(np.uint8)
        Image.fromarray(img).save(os.path.join(folder, f"{k}.jpg"), quality=90)
    return root


def rn50_pipeline(stoker, data, gpu, batch, extras=False):
    from stoker import fn, types

    @stoker.pipeline_def(batch_size=batch, num_threads=4, device_id=0 if gpu else None, seed=1,
                         py_num_workers=2 if extras else 1)
    def pipe():
        jpegs, labels = fn.readers.file(file_root=data, random_shuffle=True, name="Reader")
        images = fn.decoders.image_random_crop(jpegs, device="mixed" if gpu else "cpu",
                                               output_type=types.RGB)
        images = fn.resize(images, resize_x=224, resize_y=224)
        images = fn.crop_mirror_normalize(images, dtype=types.FLOAT16 if gpu else types.FLOAT,
                                          output_layout="CHW", mean=[123.7, 116.3, 103.5],
                                          std=[58.4, 57.1, 57.4], mirror=fn.random.coin_flip())
        outs = [images, labels.gpu() if gpu else labels]
        if extras:  # the parts that hold threads and worker processes of their own
            outs.append(fn.python_function(labels, function=lambda x: x + 1))
            outs.append(fn.external_source(source=lambda info: np.full(2, info.idx_in_epoch,
                                                                       np.int32),
                                           parallel=True, batch=False))
        return tuple(outs)
    return pipe()


def check(name, series, tolerance, exact=False):
    """series: [(t, value)] after the warm-up. Flat: the mean of its last third within
    `tolerance` of the mean of its first third (single samples wander with the allocator's
    arenas by a few %; a leak moves the mean). Threads: every sample equal to the first."""
    values = [v for _, v in series]
    third = max(1, len(values) // 3)
    early, late = sum(values[:third]) / third, sum(values[-third:]) / third
    if exact:
        grew = any(v != values[0] for v in values)
        line = f"{name}: {values[0]:.0f} after the warm-up, {min(values):.0f}-{max(values):.0f} " \
               f"over {len(values)} samples (limit: exact)"
    else:
        grew = abs(late - early) > tolerance * max(early, 1.0)
        line = (f"{name}: {early:.1f} (mean of the first third after the warm-up), {late:.1f} "
                f"(of the last third), samples {min(values):.1f}-{max(values):.1f} "
                f"(limit +-{tolerance:.0%})")
    print(("GREW  " if grew else "flat  ") + line, flush=True)
    return not grew


def soak_training(stoker, torch, data, gpu, minutes, batch):
    from stoker.plugin.pytorch import DALIGenericIterator, LastBatchPolicy
    sys.path.insert(0, os.path.join(HERE, "..", "bench"))
    step = None
    if gpu:
        from train_step import make_step
        step = make_step("train-resnet50", torch)
    pipe = rn50_pipeline(stoker, data, gpu, batch)
    it = DALIGenericIterator(pipe, ["x", "y"], reader_name="Reader",
                             last_batch_policy=LastBatchPolicy.DROP, auto_reset=True)
    start = time.monotonic()
    warm = max(60.0, minutes * 60 / 5)
    samples, next_sample, steps = [], 0.0, 0
    while time.monotonic() - start < minutes * 60:
        for b in it:
            x, y = b[0]["x"], b[0]["y"]
            if step is not None:
                step(x, y.view(-1).long())
            else:
                float(x.float().mean())
            steps += 1
            t = time.monotonic() - start
            if t >= next_sample:
                samples.append({"t": t, "rss_mb": rss_mb(), "threads": threads(),
                                "gpu_mb": gpu_used_mb(torch), "steps": steps})
                next_sample += 15.0
            if t >= minutes * 60:
                break
    after = [s for s in samples if s["t"] >= warm]
    print(f"training: {steps} steps in {minutes} min, {len(samples)} samples, "
          f"{len(after)} after the {warm:.0f} s warm-up", flush=True)
    ok = len(after) >= 2
    if ok:
        ok &= check("training RSS MB", [(s["t"], s["rss_mb"]) for s in after], 0.02)
        ok &= check("training threads", [(s["t"], s["threads"]) for s in after], 0, exact=True)
        if gpu:
            ok &= check("training GPU MB", [(s["t"], s["gpu_mb"]) for s in after], 0.02)
    return ok, samples


def soak_cycles(stoker, torch, data, gpu, cycles, batch):
    samples = []
    for k in range(1, cycles + 1):
        pipe = rn50_pipeline(stoker, data, gpu, batch, extras=True)
        for _ in range(3):
            pipe.run()
        del pipe
        if k == min(20, cycles) or k == cycles or k % 10 == 0:
            samples.append({"cycle": k, "rss_mb": rss_mb(), "threads": threads(),
                            "fds": descriptors(), "gpu_mb": gpu_used_mb(torch)})
    after = [s for s in samples if s["cycle"] >= min(20, cycles)]
    print(f"cycles: {cycles} build/run/del cycles", flush=True)
    ok = check("cycles RSS MB", [(s["cycle"], s["rss_mb"]) for s in after], 0.02)
    ok &= check("cycles threads", [(s["cycle"], s["threads"]) for s in after], 0, exact=True)
    ok &= check("cycles descriptors", [(s["cycle"], s["fds"]) for s in after], 0, exact=True)
    if gpu:
        ok &= check("cycles GPU MB", [(s["cycle"], s["gpu_mb"]) for s in after], 0.02)
    return ok, samples


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=20.0)
    ap.add_argument("--cycles", type=int, default=200)
    ap.add_argument("--data")
    ap.add_argument("--device", choices=["gpu", "cpu"], default="gpu")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--json")
    ap.add_argument("--probe", action="store_true",
                    help="print how GPU memory will be measured (process or device) and exit")
    args = ap.parse_args()
    if args.probe:
        import torch
        torch.zeros(1, device="cuda")
        print(f"{gpu_used_mb(torch):.0f} MB", GPU_MEASURE["kind"])
        return
    import stoker
    try:
        import torch
    except ImportError:
        torch = None
        if args.minutes > 0:
            raise SystemExit("the training soak needs torch (--minutes 0 runs the cycles only)")
    gpu = args.device == "gpu"
    if gpu and not (torch is not None and torch.cuda.is_available()):
        raise SystemExit("--device gpu needs a GPU (and torch); use --device cpu")
    tmp = None
    data = args.data
    if data is None:
        tmp = tempfile.TemporaryDirectory()
        data = synthetic_jpegs(tmp.name)
    ok, report = True, {"device": args.device, "minutes": args.minutes, "cycles": args.cycles}
    if args.minutes > 0:
        good, report["training"] = soak_training(stoker, torch, data, gpu, args.minutes,
                                                 args.batch)
        ok &= good
    if args.cycles > 0:
        good, report["cycles_samples"] = soak_cycles(stoker, torch, data, gpu, args.cycles,
                                                     min(args.batch, 16))
        ok &= good
    report["gpu_measure"] = GPU_MEASURE["kind"]
    if gpu:
        which = {"process": "this process's (NVML)", "device": "the whole device's"}
        print("GPU memory measured:", which.get(GPU_MEASURE["kind"], "not sampled"), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    print("soak:", "flat" if ok else "something grew", flush=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
