"""Test images for the decoders' GPU paths: a gradient with a block of noise (so that a window
or a swapped sample shows), of any channel count, the same for a given seed."""

import numpy as np


def gradient_image(h, w, channels, seed):
    y, x = np.mgrid[0:h, 0:w]
    rng = np.random.default_rng(seed)
    planes = [x * 3 + seed, y * 5, (x + y) * 2, rng.integers(0, 256, (h, w))][:channels]
    img = (np.stack(planes, -1) % 256).astype(np.uint8)
    img[h // 2:, w // 2:] = rng.integers(0, 256, (h - h // 2, w - w // 2, channels))
    return img[..., 0] if channels == 1 else img
