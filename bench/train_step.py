"""The training step the benchmarks feed: torchvision ResNet (AMP, channels_last, SGD with
momentum, a stream sync per step), run eagerly or captured whole in a CUDA graph.

Why a graph variant: fed by stoker, ResNet-50's eager step on an H100 is partly bound by its
~2,000 CUDA calls per step (forward thread ~860, autograd thread ~1,120; bench/fed_gap.py: the
GPU is busy ~90% of a synthetic step), and each launch takes longer while stoker's threads
make CUDA calls of their own (nvJPEG's per-image calls: the driver's locks are shared).
Replaying a captured step costs the training thread one launch, so it measures what a user
who graphs the step (torch.cuda.graphs, torch.compile(mode="reduce-overhead")) would see.
Measured (docs/findings.md): this bfloat16 graphed step is itself ~12% slower
than the eager float16 one, and fed by stoker it reaches ~91% of its synthetic rate.

The graph variant autocasts to bfloat16 without a GradScaler (its inf check syncs with the CPU,
which a graph cannot hold); the eager one keeps float16 with the scaler, as most ResNet recipes.
"""


def make_step(mode, torch, sync_every=1):
    """mode "train-<torchvision model>[-graph]" -> step(x, y): one training step on batch x
    (N, 3, H, W, float16 or float32) with labels y (N,) of any integer type."""
    import torchvision
    name = mode.split("-", 1)[1]
    graph = name.endswith("-graph")
    name = name[:-len("-graph")] if graph else name
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    if graph and dev != "cuda":
        raise SystemExit(f"{mode}: a CUDA graph needs a GPU")
    model = getattr(torchvision.models, name)(num_classes=1000).to(dev)
    model = model.to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    loss_fn = torch.nn.CrossEntropyLoss()
    steps = [0]

    def sync():
        steps[0] += 1
        if dev == "cuda" and steps[0] % sync_every == 0:
            torch.cuda.current_stream().synchronize()

    if not graph:
        scaler = torch.amp.GradScaler(dev, enabled=dev == "cuda")

        def train(x, y):
            x = x.contiguous(memory_format=torch.channels_last)
            with torch.autocast(dev, dtype=torch.float16 if dev == "cuda" else torch.bfloat16):
                loss = loss_fn(model(x if dev == "cuda" else x.float()), y % 1000)
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            sync()
        train.model = model  # for tests
        return train

    state = {}

    def whole_step():
        # cache_enabled=False: autocast's cast cache must not outlive the capture.
        with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):
            loss = loss_fn(model(state["x"]), state["y"])
        loss.backward()
        opt.step()

    def capture(x, y):
        # PyTorch's whole-network capture: a few eager steps on a side stream (cuDNN picks its
        # algorithms, the optimizer makes its momentum buffers), then the step captured with
        # the gradients set to None, so the captured backward allocates them in the graph's pool.
        state["x"] = torch.empty_like(x, memory_format=torch.channels_last)
        state["y"] = torch.empty(y.shape, dtype=torch.int64, device="cuda")
        state["x"].copy_(x), state["y"].copy_(y % 1000)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                opt.zero_grad(set_to_none=True)
                whole_step()
        torch.cuda.current_stream().wait_stream(side)
        opt.zero_grad(set_to_none=True)
        g = torch.cuda.CUDAGraph()
        # thread_local: stoker's threads keep making their CUDA calls (event and stream
        # synchronizations among them) while this thread captures; in the default "global"
        # mode those calls would fail as "not permitted while a stream is capturing".
        with torch.cuda.graph(g, capture_error_mode="thread_local"):
            whole_step()
        state["graph"] = g

    def train(x, y):
        if "graph" not in state:
            capture(x, y)
        # No zero_grad: the gradients were None when the step was captured, so the captured
        # backward allocated them in the graph's pool and each replay writes them afresh.
        state["x"].copy_(x)
        state["y"].copy_(y % 1000)
        state["graph"].replay()
        sync()
    train.model = model
    return train
