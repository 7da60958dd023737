"""erase: regions in pixels and fractions, centred anchors, several regions, per-channel fill,
per-sample regions, clipping, errors."""

import numpy as np
import pytest

import stoker
from stoker import fn
from op_util import run_op


def _run(images, **kwargs):
    return run_op("erase", images, **kwargs)


def test_regions():
    img = np.random.default_rng(1).integers(1, 255, (10, 20, 3), dtype=np.uint8)
    (g,) = _run([img], anchor=[2, 3, 7, 15], shape=[3, 4, 10, 10], fill_value=[0, 128, 255])
    ref = img.copy()
    ref[2:5, 3:7] = [0, 128, 255]
    ref[7:10, 15:20] = [0, 128, 255]  # cut to the image
    np.testing.assert_array_equal(g, ref)
    (g,) = _run([img], anchor=[0.5, 0.5], shape=[0.2, 0.1], normalized=True,
                centered_anchor=True)
    ref = img.copy()
    ref[4:6, 9:11] = 0
    np.testing.assert_array_equal(g, ref)
    (g,) = _run([img], anchor=[5], shape=[2], axes=[1])  # all rows, columns 5..6
    ref = img.copy()
    ref[:, 5:7] = 0
    np.testing.assert_array_equal(g, ref)


def test_per_sample_regions_and_errors():
    imgs = [np.ones((6, 6, 1), np.float32) for _ in range(2)]
    anchors = [np.array([0, 0], np.float32), np.array([3, 3], np.float32)]
    pipe = stoker.Pipeline(batch_size=2, num_threads=2, seed=0)
    with pipe:
        x = fn.external_source(lambda: imgs, layout="HWC")
        a = fn.external_source(lambda: anchors)
        pipe.set_outputs(fn.erase(x, anchor=a, shape=[2, 2], fill_value=-1))
    (out,) = pipe.run()
    assert out[0].numpy()[:2, :2].min() == -1 and out[0].numpy()[3:, 3:].min() == 1
    assert out[1].numpy()[3:5, 3:5].max() == -1
    with pytest.raises(ValueError, match="anchor and shape need the same number of values"):
        _run(imgs, anchor=[1, 2, 3], shape=[1, 2, 3])
    with pytest.raises(ValueError, match="fill_value needs 1 or 1 values, got 3"):
        _run(imgs, anchor=[1, 2], shape=[1, 2], fill_value=[1, 2, 3])
