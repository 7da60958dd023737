"""GPU backends against their CPU twins (the same pipeline with device="cpu"): ragged batches, odd
sizes, per-sample arguments; device outputs through DLPack into torch with stream ordering;
STOKER_FORCE_CPU and device_id=None. GPU tests skip (with a message) without a CUDA device."""

import os
import subprocess
import sys

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn, types

needs_gpu = pytest.mark.skipif(not _stoker.cuda_available(),
                               reason="no CUDA device: GPU test skipped")


def _images(seed, n=5, channels=3, dtype=np.uint8):
    """A ragged batch of odd-sized images."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        h, w = rng.integers(7, 90), rng.integers(5, 120)
        if dtype == np.uint8:
            out.append(rng.integers(0, 256, (h, w, channels), dtype=np.uint8))
        else:
            out.append(rng.uniform(0, 255, (h, w, channels)).astype(dtype))
    return out


def _run_twins(build, images, iterations=1, **pipe_kwargs):
    """Runs `build(data, device)` on the CPU and on the GPU over the same images; returns the
    pairs of host arrays, iteration by iteration."""
    results = {}
    for device in ("cpu", "gpu"):
        pipe = stoker.Pipeline(batch_size=len(images), num_threads=2, seed=7,
                               device_id=0 if device == "gpu" else None, **pipe_kwargs)
        with pipe:
            data = fn.external_source(lambda: images, layout="HWC")
            outs = build(data, device)
            pipe.set_outputs(*(outs if isinstance(outs, tuple) else (outs,)))
        got = []
        for _ in range(iterations):
            batches = pipe.run()
            assert [b.device for b in batches] == [device] * len(batches), device
            got.append([[s.numpy().copy() for s in b.as_cpu()] for b in batches])
        results[device] = got
    return results["cpu"], results["gpu"]


def _assert_twins(cpu, gpu, atol):
    for it_cpu, it_gpu in zip(cpu, gpu):
        for out_cpu, out_gpu in zip(it_cpu, it_gpu):
            for i, (a, b) in enumerate(zip(out_cpu, out_gpu)):
                assert a.shape == b.shape and a.dtype == b.dtype, (i, a.shape, b.shape)
                np.testing.assert_allclose(b.astype(np.float64), a.astype(np.float64),
                                           atol=atol, rtol=1e-4, err_msg=f"sample {i}")


@needs_gpu
@pytest.mark.parametrize("interp", [types.INTERP_NN, types.INTERP_LINEAR, types.INTERP_CUBIC,
                                    types.INTERP_LANCZOS3, types.INTERP_TRIANGULAR,
                                    types.INTERP_GAUSSIAN])
def test_resize_matches_cpu(interp):
    images = _images(1)

    def build(data, device):
        per_sample = fn.random.uniform(range=(10, 70))
        return (fn.resize(data, device=device, size=(33, 47), interp_type=interp),
                fn.resize(data, device=device, resize_x=per_sample, interp_type=interp),
                fn.resize(data, device=device, resize_shorter=21, interp_type=interp,
                          dtype=types.FLOAT),
                fn.resize(data, device=device, roi_start=(2.5, 20), roi_end=(6, 3), size=(9, 14),
                          interp_type=interp))
    cpu, gpu = _run_twins(build, images)
    _assert_twins(cpu, gpu, atol=1)  # uint8: within one level; float within 1 (of 255)


@needs_gpu
def test_random_resized_crop_flip_crop_and_normalize_match_cpu():
    images = _images(2)
    floats = _images(3, dtype=np.float32)

    def build(data, device):
        coin = fn.random.coin_flip()
        rrc = fn.random_resized_crop(data, device=device, size=(24, 31))
        return (rrc,
                fn.flip(data, device=device, horizontal=coin, vertical=1 - coin),
                fn.crop(data, device=device, crop=(20, 30), crop_pos_x=0.3,
                        out_of_bounds_policy="pad", fill_values=(7, 8, 9)),
                fn.crop_mirror_normalize(data, device=device, crop=(5, 4), mirror=coin,
                                         mean=(10, 20, 30), std=(2, 3, 4), dtype=types.FLOAT16,
                                         output_layout="CHW", pad_output=True),
                fn.crop_mirror_normalize(rrc, device=device, mean=(127,), std=(64,),
                                         dtype=types.INT8, output_layout="HWC", scale=30,
                                         shift=3))
    cpu, gpu = _run_twins(build, images, iterations=2)
    _assert_twins(cpu, gpu, atol=1)
    cpu, gpu = _run_twins(lambda d, dev: fn.flip(fn.crop_mirror_normalize(
        d, device=dev, crop=(6, 5), output_layout="CHW"), device=dev, vertical=1), floats)
    _assert_twins(cpu, gpu, atol=1e-3)


@needs_gpu
def test_mixed_decoder_and_gpu_chain_match_cpu(jpeg_folder):
    def run(device):
        pipe = stoker.Pipeline(batch_size=6, num_threads=2, seed=3,
                               device_id=0 if device != "cpu" else None)
        with pipe:
            jpegs, labels = fn.readers.file(file_root=jpeg_folder, random_shuffle=True)
            dec = "mixed" if device != "cpu" else "cpu"
            images = fn.decoders.image_random_crop(jpegs, device=dec)
            images = fn.resize(images, device=device, size=(32, 32))
            out = fn.crop_mirror_normalize(images, device=device, dtype=types.FLOAT16,
                                           mirror=fn.random.coin_flip(),
                                           mean=(0.485 * 255, 0.456 * 255, 0.406 * 255),
                                           std=(0.229 * 255, 0.224 * 255, 0.225 * 255))
            pipe.set_outputs(out, labels)
        got = []
        for _ in range(3):
            o, l = pipe.run()
            assert o.device == ("gpu" if device != "cpu" else "cpu") and l.device == "cpu"
            got.append((o.as_cpu().as_array().astype(np.float32), l.as_array().copy()))
        return got
    for (a, la), (b, lb) in zip(run("cpu"), run("gpu")):
        np.testing.assert_array_equal(la, lb)
        np.testing.assert_allclose(b, a, atol=2e-2)


@needs_gpu
def test_dlpack_into_torch_waits_and_recycles_safely():
    """Many iterations into recycled device buffers while torch reads them on its own stream:
    every batch torch sees equals the CPU pipeline's (no buffer reused too early)."""
    torch = pytest.importorskip("torch")
    images = [np.full((40, 60, 3), k, np.uint8) for k in range(8)]

    def build(pipe, device):
        with pipe:
            data = fn.external_source(lambda: images, layout="HWC")
            bright = fn.random.uniform(range=(0, 50))  # a CPU output beside the GPU one
            out = fn.resize(data, device=device, size=(300, 400))
            pipe.set_outputs(out, bright)
    cpu = stoker.Pipeline(batch_size=8, num_threads=2, seed=5)
    gpu = stoker.Pipeline(batch_size=8, num_threads=2, seed=5, device_id=0,
                          prefetch_queue_depth={"cpu_size": 3, "gpu_size": 3})
    build(cpu, "cpu")
    build(gpu, "gpu")
    side = torch.cuda.Stream()
    held = []
    for it in range(30):
        (ref, _), (out, _) = cpu.run(), gpu.run()
        # Asked before __dlpack__ (torch does), without making the array: the array's answer.
        assert out.__dlpack_device__() == out._impl.as_ndarray().__dlpack_device__() == (2, 0)
        with torch.cuda.stream(side):
            t = torch.from_dlpack(out)  # waits for the batch on `side`
            total = (t.float() * 1.0).sum(dim=(1, 2, 3))  # a reader on torch's stream
        held.append((t, total, ref.as_array().astype(np.float64).sum(axis=(1, 2, 3))))
        if len(held) > 4:  # torch drops tensors while its kernels may still read them
            t, total, expect = held.pop(0)
            side.synchronize()
            np.testing.assert_allclose(total.cpu().numpy(), expect, rtol=1e-6)
            del t
    stats = gpu.memory_stats()
    assert stats["device"]["reused"] > 0 and stats["pinned"]["reused"] > 0


def test_gpu_operators_need_a_device_id():
    pipe = stoker.Pipeline(batch_size=1, num_threads=1, seed=0)
    with pipe:
        data = fn.external_source(lambda: [np.zeros((4, 4, 3), np.uint8)], layout="HWC")
        pipe.set_outputs(fn.resize(data, device="gpu", size=(2, 2)))
    # A build without CUDA has no GPU backends at all, and says that instead.
    with pytest.raises(ValueError, match=r"runs on the '(mixed|gpu)' backend, but the pipeline "
                                         r"has no GPU \(device_id=None\)" if _stoker.built_with_cuda
                       else r"resize .*no 'gpu' backend; this operator runs on: cpu"):
        pipe.run()


def test_gpu_to_cpu_edges_are_refused():
    pipe = stoker.Pipeline(batch_size=1, num_threads=1, seed=0, device_id=0)
    with pipe:
        data = fn.external_source(lambda: [np.zeros((4, 4, 3), np.uint8)], layout="HWC")
        pipe.set_outputs(fn.flip(fn.resize(data.gpu(), device="gpu", size=(2, 2)), device="cpu"))
    with pytest.raises(ValueError, match="on the GPU, but a 'cpu' operator takes CPU data"
                       if _stoker.built_with_cuda else "no 'gpu' backend"):
        pipe.build()


def test_operators_go_where_their_input_is():
    """DALI's placement: without `device`, an operator with a GPU input runs on the GPU."""
    pipe = stoker.Pipeline(batch_size=1, num_threads=1, seed=0, device_id=0)
    with pipe:
        data = fn.external_source(lambda: [np.zeros((4, 4, 3), np.uint8)], layout="HWC")
        on_gpu = fn.flip(fn.resize(data.gpu(), size=(2, 2)))
        on_cpu = fn.flip(data)
        pipe.set_outputs(on_gpu, on_cpu)
    devices = [n["device"] for n in pipe._nodes]
    assert devices == ["cpu", "mixed", "gpu", "gpu", "cpu"], devices


def test_force_cpu_runs_gpu_pipelines_on_the_cpu():
    """STOKER_FORCE_CPU=1: the same definition, every operator on its CPU backend, the same
    numbers as a CPU pipeline (random draws included)."""
    code = r"""
import numpy as np, stoker
from stoker import fn
def run(device, device_id):
    pipe = stoker.Pipeline(batch_size=3, num_threads=1, seed=11, device_id=device_id)
    imgs = [np.arange(20 * 30 * 3, dtype=np.uint8).reshape(20, 30, 3) + k for k in range(3)]
    with pipe:
        d = fn.external_source(lambda: imgs, layout="HWC")
        d = d.gpu() if device == "gpu" else d
        pipe.set_outputs(fn.random_resized_crop(d, device=device, size=(9, 9)))
    (o,) = pipe.run()
    assert o.device == "cpu"
    return o.as_array()
np.testing.assert_array_equal(run("gpu", 0), run("cpu", None))
print("ok")
"""
    env = dict(os.environ, STOKER_FORCE_CPU="1")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


@needs_gpu
@pytest.mark.parametrize("disable_nvjpeg", ["0", "1"])
def test_exit_with_live_pipelines_and_torch_is_clean(jpeg_folder, disable_nvjpeg):
    """Regression: a GPU pipeline alive at interpreter exit, with torch loaded, segfaulted in
    cuEventRecord during finalisation; pipelines are now closed by an atexit hook."""
    pytest.importorskip("torch")
    code = f"""
import torch, stoker
from stoker import fn
torch.zeros(1).cuda()
pipe = stoker.Pipeline(batch_size=8, num_threads=2, seed=0, device_id=0)
with pipe:
    jpegs, _ = fn.readers.file(file_root={jpeg_folder!r})
    images = fn.decoders.image_random_crop(jpegs, device="mixed")
    pipe.set_outputs(fn.resize(images, device="gpu", size=[64, 64]))
for _ in range(3):
    (out,) = pipe.run()
print("ok")
"""
    env = dict(os.environ, STOKER_DISABLE_NVJPEG=disable_nvjpeg)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    assert r.stdout.strip() == "ok"


def _fusion_chain(data, device):
    coin = fn.random.coin_flip()
    rrc = fn.random_resized_crop(data, device=device, size=(40, 36), name="rrc")
    a = fn.crop_mirror_normalize(rrc, device=device, mirror=coin, mean=(120, 110, 100),
                                 std=(60, 61, 62), dtype=types.FLOAT16, output_layout="CHW",
                                 name="cmn1")
    big = fn.resize(data, device=device, size=(50, 60), interp_type=types.INTERP_CUBIC,
                    name="big")
    b = fn.crop_mirror_normalize(big, device=device, crop=(30, 41), crop_pos_x=0.8, mirror=coin,
                                 dtype=types.FLOAT, output_layout="HWC", pad_output=True,
                                 name="cmn2")
    # Crops and flips between, a transpose and a cast after: all one kernel.
    rrc3 = fn.random_resized_crop(data, device=device, size=(33, 47), name="rrc3")
    flip3 = fn.flip(rrc3, device=device, horizontal=fn.random.coin_flip(),
                    vertical=fn.random.coin_flip(), name="flip3")
    crop3 = fn.crop(flip3, device=device, crop=(20, 25), crop_pos_x=0.3, crop_pos_y=0.9,
                    name="crop3")
    cmn3 = fn.crop_mirror_normalize(crop3, device=device, mirror=coin, mean=(120, 110, 100),
                                    std=(60, 61, 62), output_layout="HWC", name="cmn3")
    c = fn.cast(fn.transpose(cmn3, device=device, perm=[2, 0, 1], name="t3"), device=device,
                dtype=types.FLOAT16, name="cast3")
    big4 = fn.resize(data, device=device, size=(41, 29), name="big4")
    crop4 = fn.crop(big4, device=device, crop=(30, 40), out_of_bounds_policy="trim_to_shape",
                    crop_pos_x=0.7, name="crop4")
    flip4 = fn.flip(crop4, device=device, horizontal=1, name="flip4")
    d = fn.crop_mirror_normalize(flip4, device=device, crop=(12, 10), crop_pos_y=0.2, mirror=coin,
                                 mean=(120, 110, 100), std=(60, 61, 62), name="cmn4")
    return a, b, c, d


@needs_gpu
def test_fused_resampling_matches_the_cpu_chain():
    """resize/random_resized_crop (+ crops and flips) + crop_mirror_normalize (+ transpose and
    cast) on the GPU run as one kernel that rounds the intermediate as the unfused chain stores
    it: the CPU chain's result up to one level of the intermediate (float summation order at
    rounding ties), divided by std."""
    images = _images(11)
    cpu, gpu = _run_twins(_fusion_chain, images, iterations=2)
    _assert_twins(cpu, gpu, atol=1.0 / 60 + 2e-3)
    pipe = stoker.Pipeline(batch_size=2, num_threads=1, seed=0, device_id=0)
    with pipe:
        data = fn.external_source(lambda: images[:2], layout="HWC")
        pipe.set_outputs(*_fusion_chain(data, "gpu"))
    pipe.build()
    for fused_away in ("rrc", "big", "rrc3", "flip3", "crop3", "t3", "cast3", "big4", "crop4",
                       "flip4"):
        with pytest.raises(ValueError, match=f"no operator named '{fused_away}'"):
            pipe.operator_stats(fused_away)


@needs_gpu
def test_fusion_can_be_turned_off_and_gives_the_same_result():
    images = _images(11)
    results = []
    for fusion in (True, False):
        pipe = stoker.Pipeline(batch_size=len(images), num_threads=2, seed=7, device_id=0,
                               fusion=fusion)
        with pipe:
            data = fn.external_source(lambda: images, layout="HWC")
            pipe.set_outputs(*_fusion_chain(data, "gpu"))
        results.append([np.concatenate([s.numpy().astype(np.float32).ravel()
                                        for s in b.as_cpu()]) for b in pipe.run()])
        nodes = {t["name"] for t in pipe.operator_times()}
        assert ("rrc" in nodes) == (not fusion), nodes  # fused into the normalisation, or not
        pipe.close()
    for fused, separate in zip(*results):
        np.testing.assert_allclose(fused, separate, atol=1.0 / 60 + 2e-3)


@needs_gpu
def test_colour_operators_match_cpu():
    images = _images(21)
    floats = [a.astype(np.float32) / 255 for a in _images(22)]

    def build(data, device):
        u = fn.random.uniform(range=(0.5, 1.5))
        h = fn.random.uniform(range=(-40, 40))
        return (fn.brightness_contrast(data, device=device, brightness=u, contrast=1.3,
                                       brightness_shift=0.05),
                fn.brightness(data, device=device, brightness=u, dtype=types.FLOAT16),
                fn.contrast(data, device=device, contrast=u, contrast_center=100),
                fn.hue(data, device=device, hue=h),
                fn.saturation(data, device=device, saturation=u),
                fn.hsv(data, device=device, hue=h, saturation=u, value=0.9),
                fn.color_twist(data, device=device, hue=h, saturation=u, brightness=1.1,
                               contrast=0.8, dtype=types.FLOAT))
    cpu, gpu = _run_twins(build, images, iterations=2)
    _assert_twins(cpu, gpu, atol=1)  # uint8: one level (float summation order at .5)
    cpu, gpu = _run_twins(build, floats)
    _assert_twins(cpu, gpu, atol=2e-3)  # float16 output: its rounding


@needs_gpu
def test_data_movement_operators_match_cpu():
    images = _images(31)
    floats = _images(32, dtype=np.float32)

    def build(data, device):
        other = fn.flip(data, device=device, horizontal=1)
        return (fn.transpose(data, device=device, perm=(2, 0, 1)),
                fn.pad(data, device=device, axes=(0, 1), align=(8, 16), fill_value=7),
                fn.pad(data, device=device, shape=(-1, 130, 4), axes=(0, 1, 2), fill_value=-1),
                fn.cat(data, other, data, device=device, axis=2),
                fn.cat(data, other, device=device, axis=0),
                fn.stack(data, other, device=device, axis=1),
                fn.reshape(data, device=device, shape=(-1,)))
    for imgs in (images, floats):
        cpu, gpu = _run_twins(build, imgs)
        _assert_twins(cpu, gpu, atol=0)


@needs_gpu
def test_colour_space_conversion_and_cast_match_cpu():
    images = _images(41)
    floats = [a.astype(np.float32) / 255 for a in _images(42)]

    def build(data, device):
        outs = []
        for src, dst in [("RGB", "BGR"), ("RGB", "YCbCr"), ("RGB", "GRAY"), ("BGR", "YCbCr")]:
            outs.append(fn.color_space_conversion(data, device=device, image_type=src,
                                                  output_type=dst))
        gray = fn.color_space_conversion(data, device=device, image_type="RGB",
                                         output_type="GRAY")
        outs.append(fn.color_space_conversion(gray, device=device, image_type="GRAY",
                                              output_type="RGB"))
        ycc = fn.color_space_conversion(data, device=device, image_type="RGB",
                                        output_type="YCbCr")
        outs.append(fn.color_space_conversion(ycc, device=device, image_type="YCbCr",
                                              output_type="RGB"))
        half = fn.cast(data, device=device, dtype=types.FLOAT16)
        outs += [half, fn.cast(half, device=device, dtype=types.FLOAT)]
        return tuple(outs)
    cpu, gpu = _run_twins(build, images)
    _assert_twins(cpu, gpu, atol=1)
    cpu, gpu = _run_twins(lambda d, dev: build(d, dev)[:6], floats)
    _assert_twins(cpu, gpu, atol=1e-5)
    # float32 0-255 with fractions (and beyond the range) to uint8: rounding and saturation.
    wide = [(a.astype(np.float32) - 40) * 1.37 for a in _images(43, dtype=np.float32)]
    cpu, gpu = _run_twins(lambda d, dev: (fn.cast(d, device=dev, dtype=types.UINT8),
                                          fn.cast(d, device=dev, dtype=types.FLOAT16)), wide)
    _assert_twins(cpu, gpu, atol=0)


_CAST_TYPES = {np.bool_: types.BOOL, np.uint8: types.UINT8, np.uint16: types.UINT16,
               np.uint32: types.UINT32, np.uint64: types.UINT64, np.int8: types.INT8,
               np.int16: types.INT16, np.int32: types.INT32, np.int64: types.INT64,
               np.float16: types.FLOAT16, np.float32: types.FLOAT, np.float64: types.FLOAT64}


def _cast_inputs(np_type):
    """Ragged 1-D samples of `np_type` with the values casts get wrong: extremes, halves,
    NaN and infinities, values beyond every narrower type."""
    if np_type == np.bool_:
        values = np.array([0, 1, 1, 0, 1], np.bool_)
    elif np.issubdtype(np_type, np.integer):
        info = np.iinfo(np_type)
        picks = [int(info.min), int(info.max), 0, 1, int(info.max) // 3, int(info.min) // 5, 127,
                 128, 255, 256, 65535, 65536, 2**31 - 1, 2**53 + 1]
        values = np.array([v for v in picks if info.min <= v <= info.max], np_type)
    else:
        with np.errstate(over="ignore"):
            values = np.array([np.nan, np.inf, -np.inf, 0.5, -0.5, 1.5, 2.5, -2.5, 255.5, 256.4,
                               -129.5, 65535.5, 1e5, -1e5, 2.0**31, -2.0**31 - 1, 2.0**63,
                               -2.0**63, 2.0**64, 1e30, -1e30, 3.4e38, 1e-7], np.float64
                              ).astype(np_type)
    values = values.reshape(1, -1, 1)  # one row of pixels (the twins feed HWC)
    return [values, values[:, ::-1].copy(), values[:, :3].copy()]


@needs_gpu
@pytest.mark.parametrize("np_in", list(_CAST_TYPES), ids=lambda t: np.dtype(t).name)
def test_cast_every_dtype_pair_matches_cpu_exactly(np_in):
    """The GPU cast follows the CPU's rules bit for bit: rounding half away from zero,
    saturation, NaN to 0, float16 and bfloat16 rounding to nearest even."""
    def build(data, device):
        outs = tuple(fn.cast(data, device=device, dtype=t) for t in _CAST_TYPES.values())
        bf16 = fn.cast(data, device=device, dtype=types.BFLOAT16)
        return outs + (fn.cast(bf16, device=device, dtype=types.FLOAT),)
    cpu, gpu = _run_twins(build, _cast_inputs(np_in))
    for k, (out_cpu, out_gpu) in enumerate(zip(cpu[0], gpu[0])):
        for a, b in zip(out_cpu, out_gpu):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(b, a, err_msg=f"output {k}")


@needs_gpu
def test_warp_affine_and_rotate_match_cpu():
    images = _images(51)
    floats = _images(52, dtype=np.float32)

    def build(data, device):
        angle = fn.random.uniform(range=(-180, 180))
        return (fn.rotate(data, device=device, angle=angle),
                fn.rotate(data, device=device, angle=angle, keep_size=True, fill_value=(9, 8, 7),
                          interp_type=types.INTERP_NN),
                fn.rotate(data, device=device, angle=90.0),
                fn.warp_affine(data, device=device, matrix=(0.9, 0.2, 3.5, -0.1, 1.1, -2.0),
                               size=(31, 45)),
                fn.warp_affine(data, device=device, matrix=(1.3, 0, 0, 0, 0.7, 0),
                               inverse_map=False, fill_value=0))
    cpu, gpu = _run_twins(build, images, iterations=2)
    _assert_twins(cpu, gpu, atol=1)  # bilinear in float: one level at rounding ties
    cpu, gpu = _run_twins(build, floats)
    _assert_twins(cpu, gpu, atol=1e-3)


@needs_gpu
def test_masks_of_labels_resample_alike():
    """Nearest-neighbour resampling of label maps in the mask dtypes (int32 warps and rotations,
    uint16/int16 resizes): the GPU's labels are the CPU's."""
    rng = np.random.default_rng(54)
    for dtype, high, build in (
            (np.int32, 70000, lambda data, device: (
                fn.rotate(data, device=device, angle=31.0, interp_type=types.INTERP_NN,
                          fill_value=0),
                fn.warp_affine(data, device=device, matrix=(0.9, 0.2, 3.5, -0.1, 1.1, -2.0),
                               interp_type=types.INTERP_NN))),
            (np.uint16, 60000, lambda data, device: fn.resize(
                data, device=device, size=(33, 47), interp_type=types.INTERP_NN)),
            (np.int16, 30000, lambda data, device: fn.resize(
                data, device=device, size=(20, 9), interp_type=types.INTERP_NN))):
        masks = [rng.integers(0, high, (h, w, 1)).astype(dtype)
                 for h, w in ((25, 31), (40, 18), (9, 60))]
        cpu, gpu = _run_twins(build, masks)
        _assert_twins(cpu, gpu, atol=0)


@needs_gpu
def test_flips_fused_into_warps_match_the_cpu_chain():
    """A gpu flip that only feeds a bilinear rotate or warp_affine becomes part of the warp's
    map (graph fusion): the same pixels as the CPU's flip then warp, per-sample and constant
    flips, both axes, odd and even sizes."""
    images = _images(53) + [np.arange(7 * 6 * 3, dtype=np.uint8).reshape(7, 6, 3)]
    floats = [a.astype(np.float32) for a in images]

    def build(data, device):
        angle = fn.random.uniform(range=(-30, 30))
        h, v = fn.random.coin_flip(), fn.random.coin_flip(probability=0.7)
        rotated = fn.rotate(fn.flip(data, device=device, horizontal=h, vertical=v),
                            device=device, angle=angle, keep_size=True)
        warped = fn.warp_affine(fn.flip(data, device=device, vertical=1),
                                device=device, matrix=(0.5, 0.1, 1.0, 0.0, 2.0, -1.5),
                                size=(9, 11), fill_value=0)
        twice = fn.rotate(fn.flip(fn.flip(data, device=device, horizontal=h), device=device,
                                  horizontal=0, vertical=1), device=device, angle=angle)
        return rotated, warped, twice
    cpu, gpu = _run_twins(build, images, iterations=3)
    _assert_twins(cpu, gpu, atol=1)
    cpu, gpu = _run_twins(build, floats)
    _assert_twins(cpu, gpu, atol=1e-3)
    pipe = stoker.Pipeline(batch_size=len(images), num_threads=2, seed=7, device_id=0)
    with pipe:
        pipe.set_outputs(*build(fn.external_source(lambda: images, layout="HWC"), "gpu"))
    pipe.run()
    ran = [o["op"] for o in pipe.stats()["operators"]]
    assert ran.count("flip") == 1 and ran.count("rotate") == 2, ran  # one flip of `twice` left


@needs_gpu
def test_gaussian_blur_matches_cpu():
    images = _images(61)
    gray = [a[..., 0] for a in _images(62)]  # HW samples
    floats = _images(63, dtype=np.float32)

    def build(data, device):
        sigma = fn.random.uniform(range=(0.3, 3.0))
        return (fn.gaussian_blur(data, device=device, sigma=sigma),
                fn.gaussian_blur(data, device=device, window_size=(7, 3)),
                fn.gaussian_blur(data, device=device, sigma=(2.0, 0.7), dtype=types.FLOAT))
    for imgs, tol in ((images, 1), (floats, 1e-3)):
        cpu, gpu = _run_twins(build, imgs)
        _assert_twins(cpu, gpu, atol=tol)
    pipes = {}
    for device in ("cpu", "gpu"):
        pipe = stoker.Pipeline(batch_size=len(gray), num_threads=2, seed=1,
                               device_id=0 if device == "gpu" else None)
        with pipe:
            data = fn.external_source(lambda: gray, layout="HW")
            pipe.set_outputs(fn.gaussian_blur(data, device=device, sigma=1.5))
        (b,) = pipe.run()
        pipes[device] = [s.numpy().astype(np.int16) for s in b.as_cpu()]
    for a, b in zip(pipes["cpu"], pipes["gpu"]):
        assert np.abs(a - b).max() <= 1


@needs_gpu
def test_erase_and_paste_match_cpu():
    images = _images(71)
    floats = _images(72, dtype=np.float32)

    def build(data, device):
        ratio = fn.random.uniform(range=(1.0, 2.0))
        return (fn.erase(data, device=device, anchor=(2, 3, 10, 1), shape=(5, 40, 3, 3),
                         fill_value=(1, 2, 3)),
                fn.erase(data, device=device, anchor=(0.5, 0.5), shape=(0.3, 0.2),
                         normalized=True, centered_anchor=True, fill_value=0),
                fn.paste(data, device=device, ratio=ratio, paste_x=0.25, paste_y=0.9,
                         fill_value=(5, 6, 7)))
    for imgs in (images, floats):
        cpu, gpu = _run_twins(build, imgs)
        _assert_twins(cpu, gpu, atol=0)


@needs_gpu
def test_jitter_matches_cpu_exactly():
    """The offsets come from the same per-sample Philox streams as on the CPU."""
    images = _images(81)
    floats = _images(82, dtype=np.float32)

    def build(data, device):
        return (fn.jitter(data, device=device, nDegree=5, mask=fn.random.coin_flip(),
                          fill_value=(3, 4, 5)),
                fn.jitter(data, device=device, nDegree=2))
    for imgs in (images, floats):
        cpu, gpu = _run_twins(build, imgs, iterations=2)
        _assert_twins(cpu, gpu, atol=0)


@needs_gpu
def test_normalize_matches_cpu():
    images = _images(91)
    floats = _images(92, dtype=np.float32)

    def build(data, device):
        m = fn.random.uniform(range=(100, 150))
        return (fn.normalize(data, device=device),
                fn.normalize(data, device=device, axes=(0, 1)),
                fn.normalize(data, device=device, axes=(0, 1), batch=True, ddof=1),
                fn.normalize(data, device=device, mean=m, stddev=40.0, dtype=types.FLOAT16),
                fn.normalize(data, device=device, axes=(1,), scale=32, shift=128,
                             dtype=types.UINT8, epsilon=1.0))
    for imgs in (images, floats):
        cpu, gpu = _run_twins(build, imgs)
        _assert_twins(cpu, gpu, atol=4e-3 if imgs is floats else 1)  # float16: an ulp


@needs_gpu
def test_arithmetic_on_gpu_values_runs_on_the_gpu_and_matches_cpu():
    images = _images(101)
    floats = _images(102, dtype=np.float32)

    def build(data, device):
        x = fn.flip(data, device=device, horizontal=0)  # GPU data when device == "gpu"
        f = fn.cast(x, device=device, dtype=types.FLOAT)
        return ((x - 128) * 0.5 + 3,
                x // 7 + x % 5,
                (x > 100) & (x < 200),
                stoker.math.clamp(f / 255, 0.2, 0.8),
                stoker.math.sqrt(f) * stoker.math.exp(f / 1000) - stoker.math.log(f + 1),
                -x + abs(f - 100))
    for imgs in (images, floats):
        cpu, gpu = _run_twins(build, imgs, iterations=2)
        _assert_twins(cpu, gpu, atol=1e-5)
