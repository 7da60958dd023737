"""CPU lanes: a pipeline with many threads runs two iterations at once in its CPU stage
(pipeline/cpu_stage.cpp), also when it feeds the GPU, unless a mixed operator prepares on the
host (nvJPEG decoding). The batches, checkpoints, errors and statistics must be those of one
lane (cpu_lanes=1); cpu_lanes=2 turns lanes on below 8 threads."""
import shutil

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn, types

needs_gpu = pytest.mark.skipif(not _stoker.cuda_available(),
                               reason="needs a CUDA device (pipelines that feed the GPU)")


def _train(root, threads=3, **kw):
    pipe = stoker.Pipeline(batch_size=8, num_threads=threads, seed=11, prefetch_queue_depth=2,
                           **kw)
    with pipe:
        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="reader")
        mirror = fn.random.coin_flip()
        images = fn.resize(fn.decoders.image_random_crop(jpegs), size=(20, 20))
        noise = fn.random.uniform(range=(0.0, 1.0))  # a random op after the decoder
        out = fn.crop_mirror_normalize(images, mirror=mirror, dtype=types.FLOAT16)
        pipe.set_outputs(out, labels, noise)
    return pipe


def _arrays(pipe, runs):
    """`runs` batches as host arrays (GPU outputs copied back)."""
    return [[np.asarray(o.as_cpu().as_array() if hasattr(o, "as_cpu") else o.as_array())
             for o in pipe.run()] for _ in range(runs)]


def _expect_lanes_agree(make):
    """make(**kw) -> pipeline: one and two lanes give the same batches past an epoch and the
    same checkpoint, and a two-lane checkpoint resumes as one lane goes on, with either."""
    runs = {}
    for lanes in (1, 2):
        pipe = make(cpu_lanes=lanes)
        first = _arrays(pipe, 7)  # past an epoch of 24 samples
        state = pipe.checkpoint()
        runs[lanes] = (first, state, _arrays(pipe, 3))
        assert pipe.stage_stats()[0]["threads"] == lanes
    for a, b in zip(runs[1][0] + runs[1][2], runs[2][0] + runs[2][2]):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
    assert runs[1][1] == runs[2][1]
    for lanes in (1, 2):
        resumed = make(checkpoint=runs[2][1], cpu_lanes=lanes)
        for a, b in zip(runs[1][2], _arrays(resumed, 3)):
            for x, y in zip(a, b):
                np.testing.assert_array_equal(x, y)


def test_two_lanes_give_the_same_batches_and_checkpoints(jpeg_folder):
    _expect_lanes_agree(lambda **kw: _train(jpeg_folder, **kw))


def test_lanes_are_chosen_for_cpu_only_pipelines_with_many_threads(jpeg_folder):
    def lanes(**kw):
        pipe = _train(jpeg_folder, **kw)
        pipe.run()
        return pipe.stage_stats()[0]["threads"]

    assert lanes(threads=8) == 2
    assert lanes(threads=4) == 1  # little idle time to fill
    assert lanes(threads=8, on_error="skip") == 1  # replacements re-run the reader
    assert lanes(threads=8, cpu_lanes=1) == 1
    assert lanes(threads=2, cpu_lanes=2) == 2
    pipe = stoker.Pipeline(batch_size=2, num_threads=2, cpu_lanes=2)
    with pipe:  # an external source may end an epoch mid-way: one lane
        pipe.set_outputs(fn.external_source(lambda: [np.zeros(3, np.uint8)] * 2))
    pipe.run()
    assert pipe.stage_stats()[0]["threads"] == 1


def test_an_error_stops_the_lanes_in_order(tmp_path, jpeg_folder):
    root = tmp_path / "data"
    shutil.copytree(jpeg_folder, root)
    bad = sorted((root / "class_2").iterdir())[1]
    bad.write_bytes(b"\xff\xd8\xff\xe0 not a JPEG")
    messages = {}
    for lanes in (1, 2):
        pipe = _train(str(root), cpu_lanes=lanes)
        good = 0
        with pytest.raises(ValueError) as e:
            for _ in range(6):
                pipe.run()
                good += 1
        messages[lanes] = (good, str(e.value))
        # Nothing after the failed batch, on either lane.
        with pytest.raises(RuntimeError, match="stopped after an earlier error"):
            pipe.run()
    assert messages[1] == messages[2]
    assert f"(source '{bad}')" in messages[2][1]


def test_lanes_share_the_threads_and_report_both(jpeg_folder):
    pipe = _train(jpeg_folder, threads=2, cpu_lanes=2)
    for _ in range(10):
        pipe.run()
    cpu = pipe.stage_stats()[0]
    assert cpu["threads"] == 2 and cpu["iterations"] >= 10
    assert 0 < cpu["busy"] and cpu["cpu"] > 0
    decoder = next(t for t in pipe.operator_times() if t["op"] == "decoders.image_random_crop")
    assert decoder["runs"] >= 10 and decoder["samples"] == 8 * decoder["runs"]
    assert "\ncpu x2 " in "\n" + pipe.report()  # the stage's row names its lanes


def test_cpu_lanes_takes_0_1_or_2():
    pipe = stoker.Pipeline(batch_size=2, cpu_lanes=3)
    with pipe:
        pipe.set_outputs(fn.random.coin_flip())
    with pytest.raises(ValueError, match="cpu_lanes must be 0 \\(automatic\\), 1 or 2, got 3"):
        pipe.build()


def _to_gpu(root, threads=8, mixed=False, **kw):
    """CPU decoding and resizing, then the GPU (or nvJPEG decoding with `mixed`)."""
    pipe = stoker.Pipeline(batch_size=8, num_threads=threads, device_id=0, seed=11,
                           prefetch_queue_depth=2, **kw)
    with pipe:
        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="reader")
        if mixed:
            images = fn.decoders.image(jpegs, device="mixed")
        else:
            images = fn.resize(fn.decoders.image_random_crop(jpegs), size=(20, 20)).gpu()
        out = fn.crop_mirror_normalize(fn.resize(images, size=(16, 16)),
                                       mirror=fn.random.coin_flip(), dtype=types.FLOAT16)
        pipe.set_outputs(out, labels.gpu(), fn.random.uniform(range=(0.0, 1.0)))
    return pipe


@needs_gpu
def test_lanes_feeding_the_gpu_give_one_lanes_batches_and_checkpoints(jpeg_folder):
    _expect_lanes_agree(lambda **kw: _to_gpu(jpeg_folder, **kw))


@needs_gpu
def test_lanes_feeding_the_gpu_are_chosen_unless_a_decoder_prepares_on_the_host(jpeg_folder):
    def lanes(**kw):
        pipe = _to_gpu(jpeg_folder, **kw)
        pipe.run()
        return pipe.stage_stats()[0]["threads"]

    assert lanes(threads=8) == 2
    assert lanes(threads=4) == 1
    # nvJPEG's host part runs in the CPU stage with per-thread decoders shared with the mixed
    # stage: one lane, even when asked for two.
    assert lanes(threads=8, mixed=True) == 1
    assert lanes(threads=8, mixed=True, cpu_lanes=2) == 1
