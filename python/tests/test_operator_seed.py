"""The per-operator `seed` (DALI's): operators given the same seed draw the same numbers whatever
the pipeline's seed, which is how an image and its mask get one random window from two
operators; readers given a seed shuffle alike; every random operator takes it."""
import numpy as np
import pytest

import stoker
from stoker import fn


def _outputs(pipe):
    return [[np.asarray(b[i]).copy() for i in range(len(b))] for b in pipe.run()]


def test_the_same_seed_draws_the_same_numbers_whatever_the_pipeline_seed():
    def run(pipeline_seed):
        pipe = stoker.Pipeline(batch_size=8, num_threads=2, seed=pipeline_seed)
        with pipe:
            pipe.set_outputs(fn.random.uniform(range=[0, 1], seed=5),
                             fn.random.uniform(range=[0, 1], seed=5),
                             fn.random.uniform(range=[0, 1], seed=6),
                             fn.random.uniform(range=[0, 1]))
        return _outputs(pipe)

    a, b = run(1), run(2)
    np.testing.assert_array_equal(a[0], a[1])      # same seed, same draws
    np.testing.assert_array_equal(a[0], b[0])      # whatever the pipeline's seed
    assert not np.array_equal(a[0], a[2])          # another seed, other draws
    assert not np.array_equal(a[3], b[3])          # unseeded: the pipeline's seed decides
    assert not np.array_equal(a[0], a[3])


def test_an_image_and_its_mask_get_one_random_window():
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 255, (40 + 3 * i, 50 - 2 * i, 3), dtype=np.uint8) for i in range(4)]
    masks = [im[..., :1] // 64 for im in images]  # the mask is drawn from the image's pixels
    pipe = stoker.Pipeline(batch_size=4, num_threads=2, seed=3)
    with pipe:
        img = fn.external_source(source=lambda: images, batch=True, layout="HWC")
        msk = fn.external_source(source=lambda: masks, batch=True, layout="HWC")
        pipe.set_outputs(
            fn.random_resized_crop(img, size=[24, 24], interp_type="nn", seed=42),
            fn.random_resized_crop(msk, size=[24, 24], interp_type="nn", seed=42),
            fn.random_resized_crop(msk, size=[24, 24], interp_type="nn", seed=43))
    for _ in range(3):
        im, mk, other = _outputs(pipe)
        for a, b in zip(im, mk):
            np.testing.assert_array_equal(a[..., :1] // 64, b)
        assert any(not np.array_equal(a[..., :1] // 64, c) for a, c in zip(im, other))


def test_readers_given_one_seed_shuffle_alike(jpeg_folder):
    def order(pipeline_seed, reader_seed):
        pipe = stoker.Pipeline(batch_size=4, num_threads=1, seed=pipeline_seed)
        with pipe:
            _, labels = fn.readers.file(file_root=jpeg_folder, random_shuffle=True,
                                        initial_fill=8, seed=reader_seed)
            pipe.set_outputs(labels)
        return [int(np.asarray(x).ravel()[0]) for _ in range(3) for x in _outputs(pipe)[0]]

    assert order(1, 77) == order(2, 77)
    assert order(1, -1) != order(2, -1) or order(1, -1) != order(3, -1)


def test_every_random_operator_takes_a_seed_and_bad_seeds_are_refused():
    random_ops = {s["name"] for s in stoker._stoker.schemas()
                  if any(a["name"] == "seed" for a in s["args"])}
    assert {"random.coin_flip", "random.uniform", "random.normal", "random.choice",
            "random_resized_crop", "random_bbox_crop", "random_crop_generator", "roi_random_crop",
            "jitter", "decoders.image_random_crop", "segmentation.random_mask_pixel",
            "segmentation.random_object_bbox", "readers.file", "readers.coco"} <= random_ops
    assert "resize" not in random_ops and "flip" not in random_ops
    pipe = stoker.Pipeline(batch_size=2, num_threads=1, seed=1)
    with pytest.raises((ValueError, RuntimeError), match="seed must be -1 .* got -5"):
        with pipe:
            pipe.set_outputs(fn.random.coin_flip(seed=-5))
        pipe.run()


def test_a_serialized_pipeline_keeps_the_seeds():
    pipe = stoker.Pipeline(batch_size=4, num_threads=1, seed=1)
    with pipe:
        pipe.set_outputs(fn.random.normal(seed=9))
    text = pipe.serialize()
    again = stoker.Pipeline.deserialize(text, seed=2)
    np.testing.assert_array_equal(_outputs(pipe)[0], _outputs(again)[0])
