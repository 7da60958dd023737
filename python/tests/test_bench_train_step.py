"""The benchmarks' training step (bench/train_step.py), eager and captured in a CUDA graph, and
fed_gap's finding of the training thread in a profiler trace."""

import json
import os
import sys
import tempfile

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchvision")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import train_step  # noqa: E402

GPU = torch.cuda.is_available()
needs_gpu = pytest.mark.skipif(not GPU, reason="no CUDA GPU: the graph step and CUPTI traces "
                                               "need one")


def params(step):
    return [p.detach().clone() for p in step.model.parameters()]


def changed(before, step):
    return sum(not torch.equal(a, b) for a, b in zip(before, step.model.parameters()))


def batch(seed, n=4, size=64, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(n, 3, size, size, generator=g).to(device)
    y = torch.randint(0, 5000, (n,), generator=g).to(device)
    return (x.half() if device == "cuda" else x), y


def test_eager_step_trains_the_model():
    step = train_step.make_step("train-resnet18", torch)
    before = params(step)
    # On the GPU the GradScaler skips the optimizer's step while its scale (2^16 at first)
    # overflows the float16 gradients, halving the scale each time: a few steps, not one.
    for seed in range(20):
        step(*batch(seed, device="cuda" if GPU else "cpu"))
        if changed(before, step) > 50:  # every conv, bn and the fc layer moved
            break
    assert changed(before, step) > 50


@pytest.mark.skipif(GPU, reason="checks the refusal without a GPU")
def test_graph_step_without_a_gpu_is_refused():
    with pytest.raises(SystemExit, match="train-resnet18-graph: a CUDA graph needs a GPU"):
        train_step.make_step("train-resnet18-graph", torch)


@needs_gpu
def test_graph_step_replays_on_each_new_batch():
    """Each replay trains on the batch it is given (copied into the captured input), not on the
    batch it was captured with."""
    step = train_step.make_step("train-resnet18-graph", torch)
    x0, y0 = batch(0, device="cuda")
    step(x0, y0)  # captures, then replays
    before = params(step)
    step(*batch(1, device="cuda"))
    assert changed(before, step) > 50
    # The same start, two different batches: different weights after one replay each.
    state = {k: v.clone() for k, v in step.model.state_dict().items()}
    step(*batch(2, device="cuda"))
    after_2 = params(step)
    with torch.no_grad():
        for k, v in step.model.state_dict().items():
            v.copy_(state[k])
    step(*batch(3, device="cuda"))
    assert changed(after_2, step) > 50


@needs_gpu
def test_fed_gap_finds_the_training_thread_in_a_real_trace():
    """torch.profiler names a CUDA call's thread by its pthread id, not its kernel thread id:
    the training thread must still be found (it was not, in session 13's first device run)."""
    import fed_gap
    from torch.profiler import ProfilerActivity, profile
    x = torch.ones(1000, device="cuda")
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            x = x * 2
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as d:
        prof.export_chrome_trace(os.path.join(d, "t.json"))
        events = json.load(open(os.path.join(d, "t.json")))["traceEvents"]
    rows = fed_gap.api_calls(events, 1, fed_gap.training_thread_ids())
    mine = [r for r in rows if r["training_thread"]]
    assert mine, f"no thread of {[r['tid'] for r in rows]} matched {fed_gap.training_thread_ids()}"
    assert mine[0]["launch_us_mean"] is not None and mine[0]["calls_per_step"] >= 5


def test_graph_plan_pairs_each_graphed_model_with_its_synthetic_rate():
    import harness
    plan = harness.PLANS["graph"](16, True)
    assert plan == [("synthetic", "rn50-train", "train-resnet50-graph", 4),
                    ("stoker-gpu", "rn50-train", "train-resnet50-graph", 4),
                    ("synthetic", "rn50-train", "train-resnet18-graph", 4),
                    ("stoker-gpu", "rn50-train", "train-resnet18-graph", 4)]
    assert harness.PLANS["graph"](16, False) == []
