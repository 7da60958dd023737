"""device="mixed" decoders against the CPU decoder: nvJPEG's hardware decoder, its CUDA decoder
(Huffman on a thread or on the GPU) and the CPU threads, alone and split by "auto"; streams the
hardware cannot take; stream ordering into recycled buffers; the fallbacks. Skipped without a
CUDA device."""

import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn
from stoker.datasets import _image

needs_gpu = pytest.mark.skipif(not _stoker.cuda_available(),
                               reason="no CUDA device: GPU test skipped")

# Each backend alone: hardware_only, cuda with CPU Huffman, cuda with GPU Huffman.
BACKENDS = {
    "hardware": dict(hw_decoder_load=1.0, cuda_decoder="off"),
    "cuda": dict(hw_decoder_load=0.0, cuda_decoder="on"),
    "cuda_gpu_huffman": dict(hw_decoder_load=0.0, cuda_decoder="on", hybrid_huffman_threshold=0),
}
STAT = {"hardware": "hw_images", "cuda": "cuda_images", "cuda_gpu_huffman": "cuda_images"}


@pytest.fixture(scope="session")
def mixed_folder(tmp_path_factory):
    """JPEGs the engines can and cannot take (progressive, 4:4:4/4:2:2/4:2:0, grayscale, CMYK)
    and a PNG, in odd sizes."""
    PIL = pytest.importorskip("PIL.Image", reason="Pillow is needed to write the test images")
    root = tmp_path_factory.mktemp("mixed") / "c"
    root.mkdir()
    rng = np.random.default_rng(3)
    kinds = [dict(progressive=True, subsampling=2), dict(subsampling=0), dict(subsampling=1),
             dict(subsampling=2), dict(progressive=True, subsampling=0), "gray", "cmyk", "png"]
    for i, kind in enumerate(kinds * 2):
        img = PIL.fromarray(_image(rng, int(rng.integers(61, 301)), int(rng.integers(57, 311))))
        path = root / f"{i:02d}.jpg"
        if kind == "gray":
            img.convert("L").save(path, quality=90)
        elif kind == "cmyk":
            img.convert("CMYK").save(path, quality=90)
        elif kind == "png":
            img.save(root / f"{i:02d}.png")
        else:
            img.save(path, quality=90, **kind)
    return str(root.parent)


def _decode_pipe(folder, device, batch=8, window="image", **kwargs):
    pipe = stoker.Pipeline(batch_size=batch, num_threads=3, seed=9,
                           device_id=0 if device == "mixed" else None)
    with pipe:
        jpegs, _ = fn.readers.file(file_root=folder)
        decoder = getattr(fn.decoders, window)
        pipe.set_outputs(decoder(jpegs, device=device, name="dec", **kwargs))
    return pipe


def _decoded(pipe, iterations=3):
    out = []
    for _ in range(iterations):
        (b,) = pipe.run()
        out.extend(s.numpy().astype(np.int16) for s in b.as_cpu())
    return out


def _assert_close_to_cpu(cpu, mixed):
    """Within nvJPEG's difference from libjpeg-turbo (its own IDCT and chroma upsampling): mean
    absolute difference <= 2 levels; single pixels at sharp chroma edges differ more."""
    worst = 0
    for a, b in zip(cpu, mixed, strict=True):
        assert a.shape == b.shape
        diff = np.abs(a - b)
        assert diff.mean() <= 2.0, diff.mean()
        worst = max(worst, int(diff.max()))
    assert worst <= 96, worst
    return worst


@needs_gpu
@pytest.mark.parametrize("backend", list(BACKENDS))
@pytest.mark.parametrize("window", ["image", "image_random_crop", "image_crop"])
def test_each_nvjpeg_backend_matches_cpu(jpeg_folder, window, backend):
    kwargs = {"crop": (40, 50), "crop_pos_x": 0.7} if window == "image_crop" else {}
    cpu = _decoded(_decode_pipe(jpeg_folder, "cpu", window=window, **kwargs))
    mixed_pipe = _decode_pipe(jpeg_folder, "mixed", window=window, **BACKENDS[backend], **kwargs)
    worst = _assert_close_to_cpu(cpu, _decoded(mixed_pipe))
    s = mixed_pipe.operator_stats("dec")
    available = s["hw_available"] if backend == "hardware" else s["cuda_available"]
    if available:  # really decoded by nvJPEG: not libjpeg-turbo's pixels
        assert s[STAT[backend]] > 0 and s["cuda_refused"] == 0 and worst > 0, s


@pytest.fixture(scope="session")
def varied_folder(tmp_path_factory):
    """48 baseline JPEGs of sizes and subsamplings that differ from one image to the next, so
    that an image decoded with another image's nvJPEG state or tables shows."""
    PIL = pytest.importorskip("PIL.Image", reason="Pillow is needed to write the test images")
    root = tmp_path_factory.mktemp("varied") / "c"
    root.mkdir()
    rng = np.random.default_rng(11)
    for i in range(48):
        h, w = int(rng.integers(120, 700)), int(rng.integers(120, 900))
        quality, subsampling = int(rng.integers(70, 98)), int(rng.integers(0, 3))
        PIL.fromarray(_image(rng, h, w)).save(root / f"{i:02d}.jpg", quality=quality,
                                              subsampling=subsampling)
    return str(root.parent)


@pytest.fixture
def gpu_load():
    """Another process keeping the GPU busy with matrix products (as a training job beside the
    loader does): queued copies and kernels then run late, and a buffer reused too early shows.
    Nothing without torch."""
    code = ("import sys, time, torch\n"
            "a = torch.randn(4096, 4096, device='cuda')\n"
            "print('ready', flush=True)\n"
            "end = time.time() + 120\n"
            "while time.time() < end:\n"
            "    for _ in range(8): a = (a @ a).clamp_(-1, 1)\n"
            "    torch.cuda.synchronize()\n")
    if importlib.util.find_spec("torch") is None:
        yield None
        return
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        yield proc
    finally:
        proc.kill()
        proc.wait()


@needs_gpu
@pytest.mark.parametrize("window", ["image", "image_crop"])
def test_cuda_decoder_back_to_back_under_gpu_load_gives_each_image_its_own_pixels(
        varied_folder, window, gpu_load):
    """One thread decodes image after image with Huffman on the GPU while another process keeps
    the GPU busy. nvJPEG's transfer copies each JPEG's bytes from the reader's pinned buffer
    asynchronously: the buffer goes back to the reader only after those copies (it was refilled
    under queued copies: another image's pixels, now and then, under load)."""
    kwargs = {"crop": (64, 80), "crop_pos_x": 0.3, "crop_pos_y": 0.6} if window == "image_crop" \
        else {}
    def pipe(device, **extra):
        p = stoker.Pipeline(batch_size=16, num_threads=1, seed=3,
                            device_id=0 if device == "mixed" else None)
        with p:
            jpegs, _ = fn.readers.file(file_root=varied_folder)
            p.set_outputs(getattr(fn.decoders, window)(jpegs, device=device, name="dec",
                                                       **kwargs, **extra))
        return p
    cpu = _decoded(pipe("cpu"), iterations=6)
    mixed = pipe("mixed", **BACKENDS["cuda_gpu_huffman"])
    _assert_close_to_cpu(cpu, _decoded(mixed, iterations=6))
    s = mixed.operator_stats("dec")
    if s["cuda_available"]:
        assert s["cuda_images"] > 0 and s["cuda_refused"] == 0, s


@needs_gpu
@pytest.mark.parametrize("hw_decoder_load", ["auto", 0.0, 1.0])
def test_streams_the_hardware_cannot_take_go_elsewhere(mixed_folder, hw_decoder_load):
    cpu = _decoded(_decode_pipe(mixed_folder, "cpu"), iterations=4)
    mixed_pipe = _decode_pipe(mixed_folder, "mixed", hw_decoder_load=hw_decoder_load,
                              cuda_decoder="on")
    _assert_close_to_cpu(cpu, _decoded(mixed_pipe, iterations=4))
    s = mixed_pipe.operator_stats("dec")
    assert s["hw_images"] + s["cuda_images"] + s["cpu_images"] >= 32
    if s["cuda_available"]:  # progressive JPEGs: the CUDA decoder; gray, CMYK, PNG: the CPU
        assert s["cuda_images"] > 0 and s["cpu_images"] > 0, s


@needs_gpu
@pytest.mark.parametrize("window", ["image", "image_crop"])
def test_progressive_jpegs_take_huffman_on_the_gpu_above_the_threshold(mixed_folder, window):
    """hybrid_huffman_threshold=0: every colour JPEG's Huffman decode runs on the GPU,
    progressive ones included (nvJPEG's GPU-hybrid backend takes them), none refused; the
    threads decode them in the CPU stage, a batch ahead of the mixed stage."""
    kwargs = {"crop": (40, 50), "crop_pos_x": 0.7} if window == "image_crop" else {}
    cpu = _decoded(_decode_pipe(mixed_folder, "cpu", window=window, **kwargs), iterations=4)
    mixed = _decode_pipe(mixed_folder, "mixed", window=window, **BACKENDS["cuda_gpu_huffman"],
                         **kwargs)
    _assert_close_to_cpu(cpu, _decoded(mixed, iterations=4))
    s = mixed.operator_stats("dec")
    if s["cuda_available"]:
        # 10 of every 16 files are 3-component JPEGs (4 of them progressive); the rest, gray,
        # CMYK and PNG, decode on the CPU. Prefetched batches count too.
        assert s["cuda_refused"] == 0 and s["cuda_images"] >= 20, s
        assert s["threads_images_ahead"] == s["cuda_images"] + s["cpu_images"], s
        # Where the threads' time went, by nvJPEG's phases.
        assert s["seconds_cuda_host"] > 0 and s["seconds_cuda_device"] > 0, s
        assert s["seconds_cuda_wait"] >= 0 and s["seconds_cuda_transfer"] > 0, s


@needs_gpu
def test_cpu_only_share_is_bit_exact_and_auto_uses_every_side(jpeg_folder):
    cpu = _decoded(_decode_pipe(jpeg_folder, "cpu"), iterations=6)
    none = _decode_pipe(jpeg_folder, "mixed", hw_decoder_load=0.0, cuda_decoder="off")
    for a, b in zip(cpu, _decoded(none, iterations=6)):
        np.testing.assert_array_equal(a, b)  # all on the CPU: libjpeg-turbo's pixels
    s = none.operator_stats("dec")
    assert s["hw_images"] == 0 and s["cuda_images"] == 0 and s["cuda_available"] == 0
    auto = _decode_pipe(jpeg_folder, "mixed")
    _assert_close_to_cpu(cpu, _decoded(auto, iterations=6))
    s = auto.operator_stats("dec")
    done = s["hw_images"] + s["cuda_images"] + s["cpu_images"]  # delivered and prefetched
    assert done >= 48 and done % 8 == 0
    if s["hw_available"]:
        assert 0 < s["hw_load"] <= 1 and s["hw_images"] > 0, s
        assert s["hw_threads_scale"] in (0.0, 0.5, 1.0), s  # HwShare::kScales
    if s["cuda_available"]:
        # The first batches measure both of the threads' decoders, unless the engines took
        # (nearly) every image of the measured probe batch: with 8 images and a fast engine
        # share (the 2-GPU H200 host), the threads may get none to give the CUDA decoder.
        measured = s["thread_seconds_per_cuda_image"] > 0 and s["thread_seconds_per_cpu_image"] > 0
        assert measured or s["hw_load"] >= 0.8, s


_AUTO_SPLIT_RUN = """
import sys, stoker
from stoker import fn
pipe = stoker.Pipeline(batch_size=128, num_threads=2, seed=1, device_id=0)
with pipe:
    jpegs, _ = fn.readers.file(file_root=sys.argv[1], random_shuffle=True)
    pipe.set_outputs(fn.decoders.image(jpegs, device="mixed", name="dec"))
sizes = set()
for _ in range(30):
    (b,) = pipe.run()
    b.as_cpu()
    s = pipe.operator_stats("dec")
    sizes.add(round(s["hw_load"] * 128))
print(len(sizes), s["hw_images"], s["cpu_images"] + s["cuda_images"])
"""


@needs_gpu
def test_auto_split_whose_hardware_share_changes_does_not_hang(tmp_path_factory):
    """The hardware batch size follows the measured split, so nvJPEG's batch state is
    re-initialised while the stream has work queued: that hung the engines in about half the
    runs on an H100 (batch 256, 2 threads) until each batch waited for an idle stream. In a
    subprocess with a timeout, so a hang fails the test instead of stopping the suite."""
    pytest.importorskip("PIL", reason="Pillow is needed to write the test JPEGs")
    from stoker.datasets import make_jpeg_folder

    root = tmp_path_factory.mktemp("auto_split")
    make_jpeg_folder(str(root), num_images=192, num_classes=2, seed=11)
    r = subprocess.run([sys.executable, "-c", _AUTO_SPLIT_RUN, str(root)], capture_output=True,
                       text=True, timeout=180)
    assert r.returncode == 0, r.stderr[-3000:]
    loads, hw, threads = (float(v) for v in r.stdout.split())
    if hw:  # engines present: the split moved, and both sides decoded
        assert loads >= 2 and threads > 0, r.stdout


@needs_gpu
def test_bad_cuda_decoder_argument_is_refused(jpeg_folder):
    with pytest.raises(ValueError, match="cuda_decoder must be 'auto', 'on' or 'off', got 'yes'"):
        _decode_pipe(jpeg_folder, "mixed", cuda_decoder="yes").run()


@needs_gpu
def test_disable_nvjpeg_falls_back_to_the_cpu(jpeg_folder):
    code = f"""
import numpy as np, stoker
from stoker import fn
pipe = stoker.Pipeline(batch_size=4, num_threads=2, seed=1, device_id=0)
with pipe:
    jpegs, _ = fn.readers.file(file_root={jpeg_folder!r})
    pipe.set_outputs(fn.decoders.image(jpegs, device="mixed", name="dec", hw_decoder_load=1.0))
(b,) = pipe.run()
s = pipe.operator_stats("dec")
assert b.device == "gpu" and s["hw_available"] == 0 and s["cuda_available"] == 0, s
assert s["cpu_images"] == 4, s
print("ok")
"""
    env = dict(os.environ, STOKER_DISABLE_NVJPEG="1")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


@needs_gpu
@pytest.mark.parametrize("backend", ["hardware", "cuda"])
def test_decodes_into_recycled_buffers_while_torch_reads(jpeg_folder, backend):
    """The stream-ordering test: many nvJPEG-decoded batches into recycled device buffers while
    torch reads earlier ones on its own stream; every batch equals the CPU decode within the
    decoders' difference (corruption would show as large differences)."""
    torch = pytest.importorskip("torch")
    cpu = _decode_pipe(jpeg_folder, "cpu", window="image_crop", crop=(48, 48))
    gpu = _decode_pipe(jpeg_folder, "mixed", window="image_crop", crop=(48, 48),
                       **BACKENDS[backend])
    side = torch.cuda.Stream()
    held = []
    for _ in range(40):
        (ref,), (out,) = cpu.run(), gpu.run()
        with torch.cuda.stream(side):
            t = torch.from_dlpack(out)
            s = t.float().mean(dim=(1, 2, 3))
        held.append((t, s, ref.as_array().astype(np.float64).mean(axis=(1, 2, 3))))
        if len(held) > 5:
            t, s, expect = held.pop(0)
            side.synchronize()
            np.testing.assert_allclose(s.cpu().numpy(), expect, atol=2.0)
    assert gpu.memory_stats()["device"]["reused"] > 0
    del held, t, s
    torch.cuda.synchronize()
    import time
    time.sleep(0.3)  # the stages fill their queues and wait
    gpu.trim_memory()
    for pool in ("device", "pinned"):
        m = gpu.memory_stats()[pool]
        assert m["bytes_reserved"] == m["bytes_in_use"], (pool, m)
    (out,) = gpu.run()  # and it goes on
    assert len(out) == 8


@needs_gpu
def test_auto_split_gives_the_engines_all_when_the_consumer_is_slower(jpeg_folder):
    """A consumer slower than the engines alone (a training loop paced by its GPU): "auto"
    offers the engines every JPEG they accept, and the threads' decoding stops competing with
    the training thread for the host."""
    import time
    pipe = _decode_pipe(jpeg_folder, "mixed", batch=16)
    for _ in range(12):
        (out,) = pipe.run()
        assert len(out) == 16
        time.sleep(0.05)
    s = pipe.operator_stats("dec")
    if not s["hw_available"]:
        pytest.skip("no hardware JPEG decoder on this GPU")
    assert s["hw_load"] == 1.0, s
    before = s["cpu_images"] + s["cuda_images"]
    for _ in range(6):
        pipe.run()
        time.sleep(0.05)
    s = pipe.operator_stats("dec")
    # The threads took part in the first batches only (the split of a batch is made an
    # iteration or two ahead); baseline JPEGs all go to the engines now. (The hardware batch
    # size's hysteresis had kept 3 of every 16 on the threads: 18 more in 6 batches.)
    assert s["cpu_images"] + s["cuda_images"] <= before + 8, s


@needs_gpu
def test_engines_inputs_share_one_event_per_batch(jpeg_folder):
    """The readers' pinned samples that the engines read are guarded by one event per batch
    (Batch::record_use), not one recorded per sample at release: those, and the readers'
    polling of each, were ~790 driver calls per ResNet-50 step beside the training thread."""
    pipe = _decode_pipe(jpeg_folder, "mixed", batch=16, **BACKENDS["hardware"])
    for _ in range(12):
        (out,) = pipe.run()
        assert len(out) == 16
    s = pipe.operator_stats("dec")
    if not s["hw_available"]:
        pytest.skip("no hardware JPEG decoder on this GPU")
    assert s["hw_images"] >= 12 * 16 - 16, s
    pinned = pipe.memory_stats()["pinned"]
    # Every sample's buffer has come back at least once (12 batches of 16, a few in flight);
    # per-sample events would number about as many.
    assert pinned["allocations"] >= 150, pinned
    assert pinned["release_events"] < 60, pinned


@needs_gpu
@pytest.mark.parametrize("damage", ["not_an_image", "truncated"])
def test_on_error_skip_replaces_bad_samples_of_mixed_decoders(tmp_path, jpeg_folder, damage):
    """The mixed decoder's host work (headers, the CPU threads' share) runs in the CPU stage, so
    on_error="skip" replaces what fails there, as for the CPU decoder. (A truncated JPEG given to
    the engines fails in the mixed stage and raises: the CPU decodes its share here.)"""
    import shutil
    import warnings
    root = tmp_path / "data"
    shutil.copytree(jpeg_folder, root)
    bad = sorted((root / "class_1").iterdir())[0]
    data = bad.read_bytes()
    bad.write_bytes(b"\xff\xd8\xff\xe0 this is not really a JPEG" if damage == "not_an_image"
                    else data[: len(data) // 3])
    pipe = stoker.Pipeline(batch_size=8, num_threads=2, seed=1, on_error="skip", device_id=0)
    with pipe:
        jpegs, labels = fn.readers.file(file_root=str(root), stick_to_shard=True)
        load = "auto" if damage == "not_an_image" else 0.0
        images = fn.decoders.image(jpegs, device="mixed", hw_decoder_load=load, cuda_decoder="off")
        pipe.set_outputs(fn.resize(images, device="gpu", size=(8, 8)), labels)
    seen = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):  # one epoch of 23 good files, and one more
            images, labels = pipe.run()
            assert len(images) == 8
            seen += [images.source_info(i) for i in range(8)]
    assert str(bad) not in seen and len(set(seen)) == 23
    assert any(f"source '{bad}'" in str(w.message) for w in caught)
    assert pipe.error_stats()["skipped"] >= 1
