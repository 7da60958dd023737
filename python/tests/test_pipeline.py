"""Pipeline behaviour from Python: external sources, outputs and zero-copy views, determinism,
epochs, errors, shutdown."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import stoker
from stoker import fn, types


def _images(n, seed=0, shape=(6, 8, 3)):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, shape, dtype=np.uint8) for _ in range(n)]


def test_external_source_callable_and_flip_per_sample():
    data = _images(4)
    pipe = stoker.Pipeline(batch_size=4, num_threads=2, seed=3)
    with pipe:
        src = fn.external_source(lambda: data, layout="HWC", dtype=types.UINT8)
        flags = fn.external_source(lambda: [np.int32(i % 2) for i in range(4)])
        pipe.set_outputs(fn.flip(src, horizontal=flags), src)
    flipped, original = pipe.run()
    for i in range(4):
        expect = data[i][:, ::-1] if i % 2 else data[i]
        np.testing.assert_array_equal(flipped[i].numpy(), expect)
        np.testing.assert_array_equal(original[i].numpy(), data[i])
    assert flipped.layout() == "HWC"


def test_iterable_ends_epoch_and_reset_restarts():
    batches = [np.full((2, 3), k, np.float32) for k in range(3)]
    pipe = stoker.Pipeline(batch_size=2, prefetch_queue_depth=2)
    with pipe:
        pipe.set_outputs(fn.external_source(batches))
    for epoch in range(2):
        got = [b.as_array()[0, 0] for (b,) in pipe]
        assert got == [0, 1, 2]
    with pytest.raises(StopIteration):
        pipe.run()
        pipe.run()
        pipe.run()
        pipe.run()


def test_per_sample_source_receives_sample_info():
    seen = []

    def sample(info):
        seen.append((info.idx_in_epoch, info.idx_in_batch, info.iteration))
        return np.array([info.idx_in_epoch], np.int64)

    pipe = stoker.Pipeline(batch_size=3, prefetch_queue_depth=1)
    with pipe:
        pipe.set_outputs(fn.external_source(sample, batch=False))
    a = pipe.run()[0].as_array().ravel().tolist()
    b = pipe.run()[0].as_array().ravel().tolist()
    assert a == [0, 1, 2] and b == [3, 4, 5]
    assert seen[:3] == [(0, 0, 0), (1, 1, 0), (2, 2, 0)]


def test_per_sample_source_without_arguments_is_called_per_sample_as_dalis():
    count = [0]

    def sample():
        count[0] += 1
        return np.array([count[0]], np.int32)

    pipe = stoker.Pipeline(batch_size=3, prefetch_queue_depth=1)
    with pipe:
        pipe.set_outputs(fn.external_source(sample, batch=False))
    assert pipe.run()[0].as_array().ravel().tolist() == [1, 2, 3]
    assert pipe.run()[0].as_array().ravel().tolist() == [4, 5, 6]
    with pytest.raises(TypeError, match="Found more than one positional argument"):
        with stoker.Pipeline(batch_size=1):
            fn.external_source(lambda a, b: a, batch=False)


@pytest.mark.parametrize("source, error", [
    (lambda *a: a, "Found var-positional argument `\\*a` which is not allowed"),
    (lambda **k: k, "Found var-keyword argument `\\*\\*k` which is not allowed"),
    (lambda *, k=1: k, "Found keyword-only argument `k` which is not allowed"),
    (lambda a, b=1: a, "Found more than one positional argument, which is not allowed"),
])
@pytest.mark.parametrize("batch", [True, False])
def test_a_source_taking_other_than_0_or_1_positional_arguments_is_refused_as_by_dali(
        source, error, batch):
    with pytest.raises(TypeError, match="external_source '.*': the `source` callable must accept "
                                        "either 0 or 1 positional arguments .*" + error):
        with stoker.Pipeline(batch_size=1):
            fn.external_source(source, batch=batch)


def test_a_defaulted_parameter_is_given_the_iteration_number_as_by_dali():
    # DALI counts every positional parameter: `lambda d=d: ...` gets the iteration number.
    seen = []

    def source(d=None):
        seen.append(d)
        return [np.zeros(1, np.uint8)]

    pipe = stoker.Pipeline(batch_size=1, prefetch_queue_depth=1)
    with pipe:
        pipe.set_outputs(fn.external_source(source, batch=True))
    pipe.run(), pipe.run()
    assert seen[:2] == [0, 1]


def test_outputs_are_zero_copy_views_and_dlpack():
    pipe = stoker.Pipeline(batch_size=2)
    with pipe:
        pipe.set_outputs(fn.random.uniform(shape=[3, 4]))
    (b,) = pipe.run()
    a1, a2 = b.as_array(), np.from_dlpack(b)
    assert a1.shape == (2, 3, 4) and a1.dtype == np.float32
    assert np.shares_memory(a1, a2)
    assert np.shares_memory(np.asarray(b[1]), a1)
    assert b.__dlpack_device__() == b._impl.as_ndarray().__dlpack_device__() == (1, 0)  # kDLCPU
    assert b.is_contiguous() and b.is_uniform()
    # The views keep the memory alive after the pipeline and the batch are gone.
    del pipe, b
    assert np.isfinite(a1).all() and (a1 >= -1).all() and (a1 < 1).all()


def test_ragged_batch_refuses_as_array_but_gives_samples():
    data = [np.zeros((2, 2, 3), np.uint8), np.zeros((3, 2, 3), np.uint8)]
    pipe = stoker.Pipeline(batch_size=2)
    with pipe:
        pipe.set_outputs(fn.external_source(lambda: data, layout="HWC"))
    (b,) = pipe.run()
    assert b.shape() == [(2, 2, 3), (3, 2, 3)]
    with pytest.raises(ValueError, match=r"not uniform: sample 0 has shape \(2, 2, 3\) but "
                                         r"sample 1 has \(3, 2, 3\)"):
        b.as_array()
    assert [s.shape for s in b.numpy()] == [(2, 2, 3), (3, 2, 3)]


@stoker.pipeline_def
def _train(root):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, initial_fill=8,
                                    name="Reader")
    images = fn.decoders.image(jpegs)
    images = fn.random_resized_crop(images, size=(32, 32))
    images = fn.crop_mirror_normalize(images, mirror=fn.random.coin_flip(),
                                      mean=[128.0], std=[64.0], dtype=types.FLOAT16)
    return images, labels


def _epoch_bytes(pipe, n):
    return [tuple(np.asarray(x).tobytes() for x in pipe.run()) for _ in range(n)]


def test_same_seed_identical_for_threads_and_prefetch(jpeg_folder):
    runs = {}
    for threads, depth in [(1, 1), (4, 3), (2, 1), (1, 3)]:
        pipe = _train(jpeg_folder, batch_size=5, num_threads=threads, seed=77,
                      prefetch_queue_depth=depth)
        runs[(threads, depth)] = _epoch_bytes(pipe, 7)  # crosses an epoch (24 files)
    first = runs[(1, 1)]
    for key, r in runs.items():
        assert r == first, key
    other = _epoch_bytes(_train(jpeg_folder, batch_size=5, num_threads=2, seed=78), 7)
    assert other != first


def test_epoch_iteration_reader_meta_and_sharding(jpeg_folder):
    pipe = _train(jpeg_folder, batch_size=5, num_threads=2, seed=1)
    assert pipe.epoch_size("Reader") == 24
    assert pipe.reader_meta() == {"epoch_size": 24, "shard_size": 24, "shard_id": 0,
                                  "number_of_shards": 1, "epoch_size_padded": 24,
                                  "pad_last_batch": False, "stick_to_shard": False}
    assert len(list(pipe)) == 5  # ceil(24 / 5)
    assert len(list(pipe)) == 5
    seen = []
    for shard in range(3):
        p = stoker.Pipeline(batch_size=8, seed=1)
        with p:
            jpegs, labels = fn.readers.file(file_root=jpeg_folder, shard_id=shard, num_shards=3)
            p.set_outputs(jpegs)
        (b,) = p.run()
        seen += [b.source_info(i) for i in range(8)]
    assert len(set(seen)) == 24  # the shards are disjoint and cover the dataset


def test_corrupt_jpeg_names_operator_sample_and_file(tmp_path, jpeg_folder):
    import shutil

    root = tmp_path / "data"
    shutil.copytree(jpeg_folder, root)
    victim = sorted((root / "class_0").iterdir())[2]
    victim.write_bytes(victim.read_bytes()[:300])  # truncated inside the entropy-coded data
    pipe = stoker.Pipeline(batch_size=4, num_threads=2, seed=0)
    with pipe:
        jpegs, _ = fn.readers.file(file_root=str(root))
        line = sys._getframe().f_lineno + 1
        images = fn.decoders.image(jpegs)
        pipe.set_outputs(images)
    with pytest.raises(ValueError) as e:
        pipe.run()
    msg = str(e.value)
    assert msg.startswith(f"Error in operator decoders.image (defined at {__file__}:{line}), "
                          f"iteration 0, sample 2 (source '{victim}'): "), msg
    assert "JPEG" in msg
    with pytest.raises(RuntimeError, match="stopped after an earlier error"):
        pipe.run()


def test_missing_folder_is_an_os_error(tmp_path):
    pipe = stoker.Pipeline(batch_size=1)
    with pipe:
        jpegs, _ = fn.readers.file(file_root=str(tmp_path / "nope"))
        pipe.set_outputs(jpegs)
    with pytest.raises(OSError, match="is not a folder"):
        pipe.build()


def test_destroying_mid_epoch_does_not_hang(jpeg_folder):
    script = textwrap.dedent(f"""
        import stoker
        from stoker import fn
        for rep in range(5):
            pipe = stoker.Pipeline(batch_size=8, num_threads=3, prefetch_queue_depth=4, seed=rep)
            with pipe:
                jpegs, _ = fn.readers.file(file_root={jpeg_folder!r}, random_shuffle=True)
                pipe.set_outputs(fn.resize(fn.decoders.image(jpegs), resize_shorter=64))
            pipe.run()
            del pipe
        # an external source that is never fed
        pipe = stoker.Pipeline(batch_size=1)
        with pipe:
            pipe.set_outputs(fn.external_source(lambda: [__import__('numpy').zeros(1)]))
        pipe.build()
        del pipe
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       timeout=120, env=os.environ)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


def test_pipeline_def_overrides_and_seed():
    @stoker.pipeline_def(batch_size=3, seed=5)
    def p(shape):
        return fn.random.uniform(shape=shape)

    a = p([2])
    b = p([2], batch_size=4)
    assert a.batch_size == 3 and b.batch_size == 4
    assert len(a.run()[0]) == 3 and len(b.run()[0]) == 4
    np.testing.assert_array_equal(p([2]).run()[0].as_array(), p([2]).run()[0].as_array())
    r = p([2], seed=-1)
    r.build()
    assert r.seed >= 0


def test_close_stops_the_pipeline_and_keeps_returned_batches():
    pipe = stoker.Pipeline(batch_size=2, num_threads=1, seed=0)
    with pipe:
        pipe.set_outputs(fn.random.uniform(range=(0, 1)))
    (out,) = pipe.run()
    pipe.close()
    assert out.as_array().shape == (2,)  # still readable
    with pytest.raises(RuntimeError, match="the pipeline was closed"):
        pipe.run()
    pipe.close()  # twice is fine


def test_stage_stats_add_up(jpeg_folder):
    """Each stage's busy, starved and blocked time is within the wall time; the CPU stage ran at
    least every delivered iteration; a slow consumer leaves the pipeline blocked, not starved."""
    import time
    pipe = stoker.Pipeline(batch_size=4, num_threads=2, seed=3, prefetch_queue_depth=2)
    with pipe:
        jpegs, _ = fn.readers.file(file_root=jpeg_folder)
        pipe.set_outputs(fn.decoders.image(jpegs))
    t0 = time.perf_counter()
    for _ in range(6):
        pipe.run()
        time.sleep(0.05)  # the consumer is the bottleneck
    wall = time.perf_counter() - t0
    stats = {s["stage"]: s for s in pipe.stage_stats()}
    assert list(stats) == ["cpu", "consumer"]
    cpu, consumer = stats["cpu"], stats["consumer"]
    assert cpu["iterations"] >= 6 and consumer["iterations"] == 6
    for s in stats.values():
        assert 0 <= s["busy"] and 0 <= s["starved"] and 0 <= s["blocked"]
        assert s["busy"] + s["starved"] + s["blocked"] <= wall + 0.01
    assert cpu["busy"] > 0
    assert cpu["blocked"] > 0.1  # waited for the sleeping consumer (5 sleeps of 50 ms at least)


def test_trim_memory_returns_cached_blocks(jpeg_folder):
    import time
    pipe = stoker.Pipeline(batch_size=4, num_threads=2, seed=3, prefetch_queue_depth=2)
    with pipe:
        jpegs, _ = fn.readers.file(file_root=jpeg_folder)
        pipe.set_outputs(fn.resize(fn.decoders.image(jpegs), size=(16, 16)))
    for _ in range(4):
        pipe.run()
    time.sleep(0.3)  # the prefetching threads fill their queues and wait
    before = pipe.memory_stats()["host"]
    assert before["bytes_reserved"] > before["bytes_in_use"]  # decoded images, cached
    pipe.trim_memory()
    after = pipe.memory_stats()["host"]
    assert after["bytes_reserved"] == after["bytes_in_use"] < before["bytes_reserved"]
    (out,) = pipe.run()  # and it goes on, growing again
    assert out[0].numpy().shape == (16, 16, 3)


def test_batches_and_samples_offer_the_array_interfaces():
    data = [np.arange(6, dtype=np.float32).reshape(2, 3) + i for i in range(3)]
    pipe = stoker.Pipeline(batch_size=3)
    with pipe:
        pipe.set_outputs(fn.external_source(lambda: data))
    (b,) = pipe.run()
    whole = np.asarray(b)  # through __array_interface__: the batch's memory
    assert whole.__array_interface__["data"][0] == b.as_array().ctypes.data
    np.testing.assert_array_equal(whole, np.stack(data))
    np.testing.assert_array_equal(np.asarray(b[1]), data[1])
    assert not hasattr(b, "__cuda_array_interface__")  # a CPU batch


def test_readers_take_their_shard_from_a_distributed_environment(monkeypatch, jpeg_folder):
    def meta(**reader):
        pipe = stoker.Pipeline(batch_size=2)
        with pipe:
            jpegs, _ = fn.readers.file(file_root=jpeg_folder, name="r", **reader)
            pipe.set_outputs(jpegs)
        m = pipe.reader_meta("r")
        return m["shard_id"], m["number_of_shards"]

    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert meta() == (0, 1)
    monkeypatch.setenv("RANK", "1")  # as torchrun sets them
    monkeypatch.setenv("WORLD_SIZE", "3")
    assert meta() == (1, 3)
    assert meta(shard_id=0, num_shards=2) == (0, 2)  # given arguments win


def test_gpu_pipelines_take_their_device_from_a_distributed_environment(monkeypatch):
    def gpu_pipe(**kwargs):
        pipe = stoker.Pipeline(batch_size=2, **kwargs)
        with pipe:
            pipe.set_outputs(fn.external_source(lambda: np.zeros((2, 3), np.float32),
                                                device="gpu"))
        return pipe

    monkeypatch.delenv("STOKER_FORCE_CPU", raising=False)
    monkeypatch.setenv("LOCAL_RANK", "5")  # as torchrun sets it; no machine here has 6 GPUs
    pipe = gpu_pipe()
    with pytest.raises(RuntimeError, match="needs CUDA device 5, but [01] device"):
        pipe.build()
    assert pipe.device_id == 5
    with pytest.raises(RuntimeError, match="needs CUDA device 4"):
        gpu_pipe(device_id=4).build()  # a given device wins
    monkeypatch.delenv("LOCAL_RANK")
    with pytest.raises(ValueError, match="has no GPU \\(device_id=None\\)"):
        gpu_pipe().build()
    cpu = stoker.Pipeline(batch_size=2)
    with cpu:
        cpu.set_outputs(fn.external_source(lambda: np.zeros((2, 3), np.float32)))
    monkeypatch.setenv("LOCAL_RANK", "5")
    cpu.build()  # CPU-only pipelines stay on the CPU
    assert cpu.device_id is None


def test_external_source_takes_framework_and_dlpack_arrays():
    class CpuProducer:  # a DLPack producer without __array__
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, **kwargs):
            return self.a.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    class GpuProducer(CpuProducer):
        def __dlpack_device__(self):
            return (2, 0)  # kDLCUDA

    rows = [np.arange(4, dtype=np.float32) + i for i in range(2)]
    sources = [lambda: [CpuProducer(r) for r in rows]]
    torch = None
    try:
        import torch
        sources.append(lambda: [torch.from_numpy(r) for r in rows])
    except ImportError:
        pass
    for source in sources:
        pipe = stoker.Pipeline(batch_size=2)
        with pipe:
            pipe.set_outputs(fn.external_source(source))
        (b,) = pipe.run()
        np.testing.assert_array_equal(b.as_array(), np.stack(rows))
    pipe = stoker.Pipeline(batch_size=2)
    with pipe:
        pipe.set_outputs(fn.external_source(lambda: [GpuProducer(r) for r in rows]))
    with pytest.raises(TypeError, match="runs on the CPU but got GPU data.*device='gpu'"):
        pipe.run()


def test_build_lets_other_python_threads_run(tmp_path):
    """build() releases the GIL while the native pipeline builds (a reader's index of a million
    files, a COCO annotations file): a training process's other threads keep running."""
    import threading
    import time
    listing = tmp_path / "list.txt"
    listing.write_text("".join(f"d{i % 100}/{i:07d}.jpg {i % 1000}\n" for i in range(1_000_000)))
    pipe = stoker.Pipeline(batch_size=2, num_threads=1)
    with pipe:
        _, labels = fn.readers.file(file_root=str(tmp_path), file_list=str(listing))
        pipe.set_outputs(labels)
    stamps, stop = [], threading.Event()

    def tick():
        while not stop.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0.001)
    t = threading.Thread(target=tick)
    t.start()
    time.sleep(0.05)
    t0 = time.perf_counter()
    pipe.build()
    t1 = time.perf_counter()
    time.sleep(0.05)
    stop.set()
    t.join()
    if t1 - t0 < 0.2:
        pytest.skip(f"the build took {t1 - t0:.3f} s: too short to tell")
    gaps = [b - a for a, b in zip(stamps, stamps[1:]) if b > t0 and a < t1]
    assert max(gaps) < 0.5 * (t1 - t0), (max(gaps), t1 - t0)
