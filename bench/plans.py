"""What bench/harness.py measures: its profiles (warm-up, window, repeats) and plans (lists of
(loader, pipeline, mode, threads[, environment]) items). Plans are chosen by --plan.
"""

PROFILES = {
    "full": {"warmup_batches": 10, "warmup_s": 5.0, "window_s": 20.0, "repeats": 3},
    "quick": {"warmup_batches": 5, "warmup_s": 2.0, "window_s": 5.0, "repeats": 1},
    # The autotune plan: long enough a warm-up for num_threads="auto" to settle.
    "tune": {"warmup_batches": 10, "warmup_s": 5.0, "window_s": 10.0, "repeats": 1},
    "test": {"warmup_batches": 1, "warmup_s": 0.0, "window_s": 0.5, "repeats": 1},
}


def standard_plan(cores, gpu):
    """[(loader, pipeline, mode, threads)]: what the issue asks for, in one list."""
    plan = []
    alone = ["synthetic", "stoker-cpu", "dataloader-pil", "dataloader-pil-u8", "dataloader-tvio"]
    if gpu:
        alone += ["stoker-gpu", "stoker-gpu-hw1.0", "stoker-gpu-hw0.5", "naive-gpu"]
    plan += [(lo, "rn50-train", "alone", cores) for lo in alone]
    plan += [(lo, "rn50-val", "alone", cores) for lo in
             (["stoker-gpu"] if gpu else []) + ["stoker-cpu", "dataloader-pil"]]
    plan += [(lo, "decode-only", "alone", cores) for lo in
             (["stoker-gpu", "naive-gpu"] if gpu else []) + ["stoker-cpu", "dataloader-tvio"]]
    heavy = "stoker-gpu" if gpu else "stoker-cpu"
    plan += [(heavy, f"heavy-{n}", "alone", cores) for n in (1, 4, 8, 12)]
    plan += [("dataloader-pil", f"heavy-{n}", "alone", cores) for n in (1, 12)]
    for model in ("resnet50", "resnet18") if gpu else ():
        fed = ["synthetic", "stoker-gpu", "dataloader-pil"]
        plan += [(lo, "rn50-train", f"train-{model}", cores) for lo in fed]
        plan.append(("stoker-gpu", "rn50-train", f"train-{model}", 4))  # a 4-core budget
    sweep = [t for t in (1, 2, 4, 8, 16) if t <= cores]
    plan += [("stoker-cpu", "rn50-train", "alone", t) for t in sweep if t != cores]
    if gpu:
        plan += [("stoker-gpu", "rn50-train", "alone", t) for t in sweep if t != cores]
    return plan


def headline_plan(cores, gpu):
    """The README's headline figures, in one device call (about 6 minutes on the quick
    profile): RN50-train alone per loader, ResNet-50/18 training fed (16 and 4 threads), the
    heavy-augmentation slope."""
    plan = [(lo, "rn50-train", "alone", cores) for lo in
            ["synthetic", "stoker-cpu", "dataloader-pil", "dataloader-pil-u8"] +
            (["stoker-gpu", "naive-gpu"] if gpu else [])]
    for model in ("resnet50", "resnet18") if gpu else ():
        plan += [(lo, "rn50-train", f"train-{model}", cores) for lo in ("synthetic", "stoker-gpu")]
        plan.append(("stoker-gpu", "rn50-train", f"train-{model}", 4))
    if gpu:
        plan.append(("dataloader-pil", "rn50-train", "train-resnet50", cores))
    heavy = "stoker-gpu" if gpu else "stoker-cpu"
    plan += [(heavy, f"heavy-{n}", "alone", cores) for n in (1, 4)]
    return plan


def ab_plan(cores, gpu, ab_env):
    """A/B of a setting given as environment (`--ab-env K=V,...`, e.g. a toggle in stoker): the
    GPU loader alone (RN50-train and heavy augmentation 1 and 4) and ResNet-50 fed at 4 threads,
    each without and with it. A fifth element of a plan item is extra environment for that
    measurement."""
    if not gpu:
        return []
    plan = [("synthetic", "rn50-train", "train-resnet50", 4)]
    for env in ({}, ab_env):
        plan += [("stoker-gpu", "rn50-train", "alone", cores, env),
                 ("stoker-gpu", "heavy-1", "alone", cores, env),
                 ("stoker-gpu", "heavy-4", "alone", cores, env),
                 ("stoker-gpu", "rn50-train", "train-resnet50", 4, env)]
    return plan


def ab_cpu_plan(cores, ab_env):
    """The same A/B for the CPU loader at all cores: RN50-train twice (A B A B, the target's
    pipeline), then heavy augmentation N = 4 and RN50-val (A B each)."""
    plan = []
    for _ in range(2):
        plan += [("stoker-cpu", "rn50-train", "alone", cores, env) for env in ({}, ab_env)]
    for pipeline in ("heavy-4", "rn50-val"):
        plan += [("stoker-cpu", pipeline, "alone", cores, env) for env in ({}, ab_env)]
    return plan


def ab_train_plan(gpu, ab_env):
    """Training fed by the GPU loader at 4 threads without and with a setting, A B A B between
    the synthetic rate without and with it (the setting may speed the training loop itself):
    ResNet-50 (items 0:6), then ResNet-18 (6:12). Full profile: about 3 items per call."""
    plan = []
    for model in ("resnet50", "resnet18") if gpu else ():
        mode = f"train-{model}"
        plan.append(("synthetic", "rn50-train", mode, 4))
        plan += [("stoker-gpu", "rn50-train", mode, 4, env) for env in ({}, ab_env, {}, ab_env)]
        plan.append(("synthetic", "rn50-train", mode, 4, ab_env))
    return plan


def ab_cpu_per_image_plan(gpu, ab_env):
    """CPU per image without and with a setting, A B A B: the GPU loader alone at 4 threads
    with the engines taking every image (hw_decoder_load=1.0: what is left on the CPU is
    reading, parsing and driving the GPU), stoker and DALI (a setting of the process, e.g.
    STOKER_BENCH_CTX_WAIT=blocking, applies to both)."""
    plan = []
    for _ in range(2 if gpu else 0):
        for env in ({}, ab_env):
            plan += [("stoker-gpu-hw1.0", "rn50-train", "alone", 4, env),
                     ("dali-gpu-hw1.0", "rn50-train", "alone", 4, env)]
    return plan


def autotune_plan(cores, gpu):
    """num_threads="auto" (budget: all cores) against a sweep of fixed thread counts: the GPU
    pipeline alone and feeding ResNet-50, the CPU pipeline alone (issue: auto >= 95% of the
    best fixed setting)."""
    sweep = [t for t in (2, 4, 8, 12, 16) if t <= cores]
    plan = []
    if gpu:
        plan += [("stoker-gpu", "rn50-train", "alone", t) for t in sweep]
        plan.append(("stoker-gpu-auto", "rn50-train", "alone", cores))
        plan.append(("synthetic", "rn50-train", "train-resnet50", 4))
        plan += [("stoker-gpu", "rn50-train", "train-resnet50", t) for t in (2, 4, 8)]
        plan.append(("stoker-gpu-auto", "rn50-train", "train-resnet50", cores))
    plan += [("stoker-cpu", "rn50-train", "alone", t) for t in sweep if t >= 8]
    plan.append(("stoker-cpu-auto", "rn50-train", "alone", cores))
    return plan


def graph_plan(cores, gpu):
    """Training whose step is captured in a CUDA graph (bench/train_step.py), synthetic then fed
    by the GPU loader at 4 threads: ResNet-50 (items 0:2), ResNet-18 (2:4)."""
    return [(loader, "rn50-train", f"train-{model}-graph", 4)
            for model in (("resnet50", "resnet18") if gpu else ())
            for loader in ("synthetic", "stoker-gpu")]


def threads_plan(cores, gpu):
    """The GPU loader alone at 4, 8 and 16 threads (images/s and CPU per image: more threads
    must never be slower, and the best setting must cost no more CPU per image than DALI's
    best), with DALI at its default and its best (hw_decoder_load=1.0) at the same threads."""
    sweep = [t for t in (4, 8, 16) if t <= cores]
    loaders = ("stoker-gpu", "stoker-gpu-hw1.0", "dali-gpu", "dali-gpu-hw1.0") if gpu \
        else ("stoker-cpu", "dali-cpu")
    return [(lo, "rn50-train", "alone", t) for t in sweep for lo in loaders]


PLANS = {"standard": standard_plan, "headline": headline_plan, "autotune": autotune_plan,
         "graph": graph_plan, "threads": threads_plan}


def smoke_plan(cores, gpu):
    """A few small measurements of every kind the machine can run (tests)."""
    plan = [("synthetic", "rn50-train", "alone", 1), ("stoker-cpu", "rn50-train", "alone", 2),
            ("dataloader-pil", "rn50-train", "alone", 1), ("dataloader-tvio", "heavy-1", "alone", 0),
            ("dataloader-pil-u8", "rn50-train", "alone", 1),
            ("stoker-cpu", "decode-only", "alone", 2), ("stoker-cpu", "rn50-val", "alone", 1),
            ("stoker-cpu", "heavy-1", "alone", 1),
            ("synthetic", "rn50-train", "train-resnet18", 1),
            ("stoker-cpu", "rn50-train", "train-resnet18", 2)]
    if gpu:
        plan += [("stoker-gpu", "rn50-train", "alone", 2), ("naive-gpu", "rn50-train", "alone", 1)]
    return plan


# -- one measurement (in its own process) ---------------------------------------------------
