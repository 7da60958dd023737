"""Every example in examples/ runs (with tiny sizes)."""

import os
import subprocess
import sys

import pytest

import stoker

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def _run(name, *args):
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *args],
                       capture_output=True, text=True, timeout=300, env=os.environ)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_training_pipeline_example(jpeg_folder):
    out = _run("01_training_pipeline.py", "--data", jpeg_folder, "--size", "32",
               "--batch-size", "8", "--batches", "2")
    assert "24 images" in out
    assert "batch 1: images (8, 3, 32, 32) float16" in out


def test_training_pipeline_example_generates_data():
    pytest.importorskip("PIL")
    out = _run("01_training_pipeline.py", "--size", "32", "--batches", "1")
    assert "48 images" in out


def test_external_source_example():
    out = _run("02_external_source.py")
    assert "batch 2:" in out and out.strip().endswith("done")


def _first_last(out):
    """(first, last) of the examples' closing 'loss A (first k steps) -> B (last k)' line."""
    line = [ln for ln in out.splitlines() if "(first" in ln][-1]
    first = float(line.split("loss ")[1].split(" ")[0])
    last = float(line.split("-> ")[1].split(" ")[0])
    return first, last


def test_train_resnet_torch_example_learns_on_the_cpu():
    pytest.importorskip("torchvision", reason="torchvision is needed for the ResNet example")
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")  # the CPU path, even on a GPU machine
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, "train_resnet_torch.py"),
                        "--size", "32", "--steps", "24", "--pin"], capture_output=True, text=True,
                       timeout=600, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    # Pinning the training thread would put torch's CPU threads on its one core (they inherit
    # it): 16 of them crawled there on the 16-core GPU machine.
    assert "--pin: ignored without a GPU" in r.stdout
    first, last = _first_last(r.stdout)
    assert last < 0.7 * first, r.stdout[-1500:]


def test_train_resnet_torch_example_learns_on_the_gpu_pinned():
    torch = pytest.importorskip("torch")
    pytest.importorskip("torchvision", reason="torchvision is needed for the ResNet example")
    if not torch.cuda.is_available():
        pytest.skip("no GPU: --pin is the set-up for GPU training")
    out = _run("train_resnet_torch.py", "--size", "32", "--steps", "24", "--batch-size", "16",
               "--pin")
    if len(os.sched_getaffinity(0)) > 1:
        assert "--pin: training thread on core" in out, out[-1500:]
    first, last = _first_last(out)
    assert last < 0.7 * first, out[-1500:]


def test_video_classification_example_learns_on_the_cpu():
    """Clips of squares moving up or down (generated with PyAV): the 3-D network learns the
    direction, fed CFHW clips with one crop and flip per clip."""
    pytest.importorskip("torch")
    pytest.importorskip("av", reason="PyAV writes the example's generated clips")
    if not stoker._stoker.build_info()["ffmpeg"]:
        pytest.skip("stoker was built without FFmpeg: no video")
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, "video_classification.py"),
                        "--frames", "8", "--size", "48", "--steps", "40", "--threads", "2"],
                       capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "(clips (8, 3, 8, 48, 48))" in r.stdout  # N x C x F x H x W
    first, last = _first_last(r.stdout)
    assert last < 0.85 * first, r.stdout[-1500:]


def test_video_classification_example_on_the_gpu():
    torch = pytest.importorskip("torch")
    pytest.importorskip("av", reason="PyAV writes the example's generated clips")
    if not torch.cuda.is_available():
        pytest.skip("no GPU: readers.video on NVDEC")
    out = _run("video_classification.py", "--frames", "8", "--size", "48", "--steps", "40")
    first, last = _first_last(out)
    assert last < 0.85 * first, out[-1500:]


def test_train_jax_example_learns():
    pytest.importorskip("jax", reason="JAX is needed for the JAX example")
    first, last = _first_last(_run("train_jax.py", "--steps", "30"))
    assert last < 0.5 * first


def test_torchrun_ddp_example_shards_disjointly():
    pytest.importorskip("torch", reason="PyTorch is needed for the DDP example")
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")  # two CPU processes, gloo
    r = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                        "--nproc_per_node=2", os.path.join(EXAMPLES, "torchrun_ddp.py")],
                       capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "samples per rank: [11, 11]; disjoint: True; cover the epoch: True" in r.stdout


def test_ssd_pipeline_example_on_the_coco_subset(shared_data):
    """SSD300's pipeline on DALI's COCO subset; with DALI installed, the same definition runs
    there too and the reader's outputs are equal."""
    coco = os.path.join(shared_data, "photos", "dali-coco")
    args = ["--data", coco, "--batch-size", "4", "--batches", "2", "--device", "cpu"]
    try:
        import nvidia.dali  # noqa: F401
        # (DALI's libraries do not load beside the sanitizer build's preloaded runtime)
        if "libasan" not in os.environ.get("LD_PRELOAD", ""):
            args.append("--dali")
    except ImportError:
        pass
    out = _run("ssd_pipeline.py", *args)
    assert "8732 default boxes" in out and "61 images with objects" in out
    assert "batch 1: images (4, 3, 300, 300) float32, encoded boxes (8732, 4)" in out
    if "--dali" in args:
        assert "the same shapes and types: True" in out
        assert "reader outputs equal to DALI's: True" in out


def test_segmentation_pipeline_example_on_the_coco_subset(shared_data):
    coco = os.path.join(shared_data, "photos", "dali-coco")
    out = _run("segmentation_pipeline.py", "--data", coco, "--batch-size", "4", "--batches", "2",
               "--size", "64", "--device", "cpu")
    assert "61 images" in out
    assert "batch 1: images (4, 3, 64, 64) float32, masks (4, 64, 64, 1) uint8" in out
