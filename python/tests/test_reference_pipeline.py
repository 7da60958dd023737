"""The default training pipeline on real photos, every sample checked against independent
references: libjpeg-turbo's djpeg for decoding, numpy for the random crop window, the resize,
the flip and the normalization."""

import os

import numpy as np
import pytest

import stoker
from stoker import fn, types
from reference import RandomStream, djpeg_rgb, resize_reference, round_u8, rrc_window

MEAN = [123.675, 116.28, 103.53]
STD = [58.395, 57.12, 57.375]
SEED = 2024
BATCH = 8


@stoker.pipeline_def
def default_pipeline(root, shuffle=True):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=shuffle, name="Reader")  # 0
    decoded = fn.decoders.image(jpegs, output_type=types.RGB)                             # 1
    cropped = fn.random_resized_crop(decoded, size=(224, 224))                            # 2
    flip = fn.random.coin_flip(probability=0.5)                                           # 3
    out = fn.crop_mirror_normalize(cropped, mirror=flip, mean=MEAN, std=STD,             # 4
                                   dtype=types.FLOAT16, output_layout="CHW")
    return decoded, cropped, flip, out, labels


@pytest.mark.parametrize("shuffle", [False, True])
def test_every_sample_matches_references(shared_data, djpeg, shuffle):
    root = os.path.join(shared_data, "photos", "dali-imagenet-classes")
    pipe = default_pipeline(root, shuffle, batch_size=BATCH, num_threads=3, seed=SEED)
    pipe.build()
    n = pipe.epoch_size()
    assert n == 47
    classes = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
    seen = set()
    for it in range(-(-n // BATCH)):
        decoded, cropped, flips, out, labels = pipe.run()
        for i in range(BATCH):
            path = decoded.source_info(i)
            if it * BATCH + i < n:
                seen.add(path)
            # label = index of the class folder
            assert labels.as_array()[i, 0] == classes.index(os.path.basename(os.path.dirname(path)))
            # decode: bit-exact with libjpeg-turbo's djpeg
            ref = djpeg_rgb(djpeg, path)
            img = decoded[i].numpy()
            np.testing.assert_array_equal(img, ref, err_msg=path)
            # crop window from the pipeline's Philox stream (op instance 2), resize reference
            index = it * BATCH + i
            y, x, h, w = rrc_window(*ref.shape[:2], RandomStream(SEED, 2, index))
            expect = resize_reference(ref[y:y + h, x:x + w], 224, 224)
            got = cropped[i].numpy()
            diff = np.abs(got.astype(int) - round_u8(expect).astype(int))
            assert diff.max() <= 1, (path, diff.max())
            assert (diff == 0).mean() > 0.99
            # flip from op instance 3, normalization in float64 -> float16
            mirror = int(RandomStream(SEED, 3, index).bernoulli(0.5))
            assert flips[i].numpy() == mirror
            src = got[:, ::-1] if mirror else got
            norm = ((src.astype(np.float64) - MEAN) / STD).transpose(2, 0, 1).astype(np.float16)
            np.testing.assert_allclose(out[i].numpy().astype(np.float32), norm.astype(np.float32),
                                       rtol=1e-3, atol=2e-3)
    if shuffle:
        # The shuffle buffer mixes in the next epoch's samples (as DALI's does): some repeat.
        assert len(seen) > 25
    else:
        assert len(seen) == n  # the first epoch visited every photo once


def test_flip_frequency_is_fair(shared_data):
    root = os.path.join(shared_data, "photos", "dali-imagenet-classes")
    pipe = default_pipeline(root, batch_size=BATCH, num_threads=2, seed=7)
    flips = [pipe.run()[2].as_array().sum() for _ in range(4)]
    assert 0 < sum(flips) < 4 * BATCH
