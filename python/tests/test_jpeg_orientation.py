"""decoders.image applies the EXIF orientation of JPEGs (adjust_orientation, default on) as
PIL's ImageOps.exif_transpose does: DALI's orientation references (PIL decode, then the
orientation applied) and the exif-orientation-examples set (pre-rotated pixels, so every
orientation shows the same upright picture)."""

import glob
import os

import numpy as np
import pytest

import stoker
from stoker import fn


def _decode(paths, **kwargs):
    pipe = stoker.Pipeline(batch_size=len(paths), num_threads=2, seed=0)
    with pipe:
        jpegs, _ = fn.readers.file(files=paths)
        pipe.set_outputs(fn.decoders.image(jpegs, **kwargs))
    (out,) = pipe.run()
    return [out[i].numpy() for i in range(len(paths))]


def test_dali_orientation_references(shared_data):
    files = sorted(glob.glob(os.path.join(shared_data, "jpeg", "dali", "orientation", "*.jpg")))
    assert len(files) == 10
    for f, got in zip(files, _decode(files)):
        np.testing.assert_array_equal(got, np.load(f[:-4] + ".npy"), err_msg=f)
    # Without adjust_orientation the stored pixels come out: all the same size as stored.
    plain = _decode(files, adjust_orientation=False)
    assert len({a.shape for a in plain}) == 1


def test_every_orientation_shows_the_same_picture(shared_data):
    d = os.path.join(shared_data, "jpeg", "exif-orientation")
    for kind in ("Landscape", "Portrait"):
        files = [os.path.join(d, f"{kind}_{k}.jpg") for k in range(9)]
        images = _decode(files)
        upright = images[1].astype(np.int16)
        for k, img in enumerate(images):  # _0 has the invalid value 0: treated as 1
            assert img.shape == upright.shape, (kind, k)
            # The files were re-encoded per orientation: equal up to JPEG noise (a mean error
            # of ~3), far from the picture mirrored (the nearest wrong answer).
            assert np.abs(img.astype(np.int16) - upright).mean() < 6, (kind, k)
            assert np.abs(img[:, ::-1].astype(np.int16) - upright).mean() > 20, (kind, k)


def test_orientation_with_pil_exif_transpose(tmp_path):
    PIL = pytest.importorskip("PIL.Image")
    from PIL import ImageOps

    rng = np.random.default_rng(2)
    base = PIL.fromarray(rng.integers(0, 256, (24, 40, 3), dtype=np.uint8))
    paths = []
    for o in range(1, 9):
        exif = PIL.Exif()
        exif[0x0112] = o
        path = str(tmp_path / f"o{o}.jpg")
        base.save(path, quality=95, exif=exif.tobytes())
        paths.append(path)
    for o, (path, got) in enumerate(zip(paths, _decode(paths)), start=1):
        expect = np.asarray(ImageOps.exif_transpose(PIL.open(path)).convert("RGB"))
        np.testing.assert_array_equal(got, expect, err_msg=f"orientation {o}")
