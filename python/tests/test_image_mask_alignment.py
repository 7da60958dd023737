"""Images and masks stay pixel-aligned through one random window, one flip and one resize given
to both (the segmentation pipeline's contract): the mask is drawn from the image's own pixels,
and after the transforms it still equals the same drawing of the transformed image."""
import numpy as np
import pytest

import stoker
from stoker import _stoker, fn, types


def _images(seed=3):
    """Smooth images with large regions (as photos have): a threshold of them has edges, not
    noise."""
    rng = np.random.default_rng(seed)
    out = []
    for h, w in ((120, 160), (97, 64), (200, 133), (64, 64)):
        y, x = np.mgrid[0:h, 0:w]
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        r = np.hypot(x - cx, y - cy)
        base = (np.sin(r / rng.uniform(6, 14)) * 100 + 128 + x * 0.3).astype(np.uint8)
        out.append(np.stack([base, 255 - base, (base // 2) + 60], -1))
    return out


def _mask_of(image):
    return (image[..., :1] > 140).astype(np.uint8) * 7


def _run(device, image_interp):
    images = _images()
    masks = [_mask_of(im) for im in images]
    pipe = stoker.Pipeline(batch_size=len(images), num_threads=2, seed=11,
                           device_id=0 if device == "gpu" else None)
    with pipe:
        im = fn.external_source(lambda: images, layout="HWC", device=device)
        mk = fn.external_source(lambda: masks, layout="HWC", device=device)
        shape = fn.external_source(lambda: [np.int64(i.shape) for i in images])
        anchor, window = fn.random_crop_generator(shape, random_area=[0.2, 0.9])
        flip = fn.random.coin_flip(probability=0.5)
        outs = []
        for x, interp in ((im, image_interp), (mk, types.INTERP_NN)):
            x = fn.slice(x, anchor, window, axes=[0, 1])
            x = fn.flip(x, horizontal=flip)
            outs.append(fn.resize(x, size=[96, 80], interp_type=interp))
        pipe.set_outputs(*outs, flip)
    results = []
    for _ in range(3):
        a, b, f = (o.as_cpu() for o in pipe.run())
        results.append(([np.array(s) for s in a], [np.array(s) for s in b],
                        [int(np.array(s)) for s in f]))
    return results


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_mask_follows_the_image_exactly_with_nearest_neighbour(device):
    if device == "gpu" and not _stoker.cuda_available():
        pytest.skip("no CUDA device: GPU test skipped")
    flips = set()
    for images, masks, f in _run(device, types.INTERP_NN):
        flips.update(f)
        for image, mask in zip(images, masks):
            assert image.shape[:2] == mask.shape[:2] == (96, 80)
            np.testing.assert_array_equal(mask, _mask_of(image))
    assert flips == {0, 1}  # both flip decisions were exercised


def test_mask_follows_a_linearly_resized_image_up_to_its_edges():
    """With a linear resize for the image, the two differ only where the mask has an edge."""
    for images, masks, _ in _run("cpu", types.INTERP_LINEAR):
        for image, mask in zip(images, masks):
            differ = mask != _mask_of(image)
            assert differ.mean() < 0.05
            # a misplaced window or flip would disagree far from the edges
            edge = np.zeros_like(differ)
            m = mask[..., 0] > 0
            e = np.zeros_like(m)
            e[1:, :] |= m[1:, :] != m[:-1, :]
            e[:, 1:] |= m[:, 1:] != m[:, :-1]
            e[:-1, :] |= e[1:, :].copy()
            e[:, :-1] |= e[:, 1:].copy()
            edge[..., 0] = e
            assert not (differ & ~edge).any()
