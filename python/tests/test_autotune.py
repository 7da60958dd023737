"""num_threads="auto": the tuner changes the working threads while running (fewer while the
consumer is the slower side), outputs do not depend on it, the arguments are checked, and
serialization keeps the setting."""
import time

import numpy as np
import pytest

import stoker
from stoker import fn, types


def _pipe(folder, batch=4, **kw):
    pipe = stoker.Pipeline(batch_size=batch, seed=11, **kw)
    with pipe:
        jpegs, labels = fn.readers.file(file_root=folder, random_shuffle=True, name="reader")
        images = fn.decoders.image_random_crop(jpegs, name="decode")
        images = fn.resize(images, size=(24, 24))
        flip = fn.random.coin_flip()
        pipe.set_outputs(fn.crop_mirror_normalize(images, mirror=flip, dtype=types.FLOAT,
                                                  output_layout="CHW"), labels)
    return pipe


def test_a_slow_consumer_gets_fewer_threads_and_the_same_outputs(jpeg_folder):
    # Batches of 2 every 100 ms: stoker is far ahead even at 1 thread in sanitizer builds.
    fixed = _pipe(jpeg_folder, num_threads=1, batch=2)
    auto = _pipe(jpeg_folder, num_threads="auto", cpu_budget=4, prefetch_queue_depth="auto",
                 batch=2)
    assert auto.autotune()["threads"] == 4 and auto.autotune()["changes"] == []
    t0 = time.monotonic()
    batches = 0
    while time.monotonic() - t0 < 20 and auto.autotune()["threads"] > 1:
        a, b = auto.run(), fixed.run()
        for x, y in zip(a, b):
            for i in range(len(x)):
                np.testing.assert_array_equal(np.asarray(x[i]), np.asarray(y[i]))
        batches += 1
        time.sleep(0.1)  # a training step: stoker is far ahead of it
    tuned = auto.autotune()
    assert tuned["threads"] == 1, tuned
    assert tuned["changes"] and all("fewer" in c["why"] for c in tuned["changes"])
    assert [c["threads"] for c in tuned["changes"]] == [3, 2, 1]
    for c in tuned["changes"]:
        assert c["time"] > 0 and c["rate"] > 0 and 0 <= c["wait"] < 0.03
    assert batches >= 8
    assert "threads (auto): 1 now; changes:" in auto.report()
    # The consumer never waited: the queue keeps its depth.
    assert tuned["prefetch_queue_depth"] == 2 and tuned["prefetch_changes"] == []
    assert auto.stats()["autotune"] == tuned


def test_prefetch_auto_deepens_the_queue_for_bursty_decoding(tmp_path):
    """Every 8th JPEG is large (about 100 ms to decode, the others about 1 ms); on average the
    pipeline is faster than the consumer (a 20 ms step), so between large ones it fills its
    queue and blocks, and during them the consumer waits: a deeper queue absorbs them."""
    from PIL import Image
    rng = np.random.default_rng(0)
    big = Image.fromarray(rng.integers(0, 255, (2400, 3200, 3), dtype=np.uint8))
    small = Image.fromarray(rng.integers(0, 255, (32, 32, 3), dtype=np.uint8))
    (tmp_path / "c").mkdir()
    for i in range(32):
        (big if i % 8 == 7 else small).save(tmp_path / "c" / f"{i:03d}.jpg", quality=90)
    pipe = stoker.Pipeline(batch_size=1, num_threads=1, seed=1, prefetch_queue_depth="auto")
    with pipe:
        jpegs, _ = fn.readers.file(file_root=str(tmp_path))
        pipe.set_outputs(fn.decoders.image(jpegs))
    t0 = time.monotonic()
    n = 0
    while time.monotonic() - t0 < 15 and pipe.autotune()["prefetch_queue_depth"] < 3:
        (out,) = pipe.run()
        assert np.asarray(out[0]).shape[0] == (2400 if n % 8 == 7 else 32)  # order kept
        n += 1
        time.sleep(0.02)
    a = pipe.autotune()
    assert a["prefetch_queue_depth"] >= 3, a
    assert [c["depth"] for c in a["prefetch_changes"]][0] == 3
    assert all(c["wait"] > 0.01 and c["blocked"] > 0.05 for c in a["prefetch_changes"])
    assert next(s for s in pipe.stage_stats() if s["stage"] == "cpu")["queue_capacity"] >= 3
    assert "prefetch queue (auto)" in pipe.report()


def test_arguments_are_checked():
    for bad, msg in [({"num_threads": "many"}, "num_threads must be"),
                     ({"num_threads": 2, "cpu_budget": 2}, "cpu_budget applies to"),
                     ({"num_threads": "auto", "cpu_budget": 0}, "cpu_budget must be"),
                     ({"num_threads": "auto", "cpu_budget": 1.5}, "cpu_budget must be")]:
        with pytest.raises(ValueError, match=msg):
            stoker.Pipeline(batch_size=1, **bad)


def test_fixed_threads_report_their_count(jpeg_folder):
    pipe = _pipe(jpeg_folder, num_threads=2)
    pipe.run()
    assert pipe.autotune() == {"threads": 2, "changes": [], "prefetch_queue_depth": 2,
                               "prefetch_changes": []}


def test_serialization_keeps_auto_and_the_budget(jpeg_folder):
    pipe = _pipe(jpeg_folder, num_threads="auto", cpu_budget=3, prefetch_queue_depth="auto")
    text = pipe.serialize()
    again = stoker.Pipeline.deserialize(text)
    assert again.num_threads == "auto" and again.cpu_budget == 3
    assert again.prefetch_queue_depth == "auto"
    assert again.autotune()["threads"] == 3
    for x, y in zip(pipe.run(), again.run()):
        for i in range(len(x)):
            np.testing.assert_array_equal(np.asarray(x[i]), np.asarray(y[i]))
