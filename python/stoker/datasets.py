"""Small synthetic datasets for demos and tests: folders of JPEGs laid out as readers.file
expects (one sub-folder per class). Seeded, so the same call writes the same bytes."""

import os

import numpy as np


def _image(rng, height, width):
    """A smooth, photo-like image: colour gradients, a few soft blobs and sensor-like noise."""
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    img = np.empty((height, width, 3), np.float32)
    for c in range(3):
        a, b, p = rng.uniform(-1, 1, 3)
        img[..., c] = 128 + 60 * np.sin(a * x / 40 + p) * np.cos(b * y / 50 - p)
    for _ in range(rng.integers(3, 7)):
        cy, cx = rng.uniform(0, height), rng.uniform(0, width)
        r = rng.uniform(0.05, 0.3) * min(height, width)
        blob = np.exp(-((y - cy) ** 2 + (x - cx) ** 2) / (2 * r * r))
        img += blob[..., None] * rng.uniform(-90, 90, 3)
    img += rng.normal(0, 4, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def make_jpeg_folder(root, num_images=256, num_classes=4, seed=0, quality=(80, 95),
                     separable=False):
    """Writes `num_images` JPEGs (mostly 500x375 and 375x500, some larger) into
    root/class_<k>/, returns the list of paths. With `separable`, each class has its own
    colour cast, so a model can learn the classes in a few steps (examples, tests). Needs
    Pillow."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    paths = []
    for i in range(num_images):
        k = i % num_classes
        folder = os.path.join(root, f"class_{k}")
        os.makedirs(folder, exist_ok=True)
        shape = [(375, 500), (500, 375), (480, 640), (333, 500)][rng.choice(4, p=[.45, .35, .1, .1])]
        path = os.path.join(folder, f"img_{i:05d}.jpg")
        image = _image(rng, *shape)
        if separable:  # a strong per-class tint over the photo-like content
            tint = np.array([(k * 97) % 256, (k * 53 + 80) % 256, (k * 151 + 160) % 256])
            image = (0.4 * image + 0.6 * tint).astype(np.uint8)
        Image.fromarray(image).save(
            path, quality=int(rng.integers(quality[0], quality[1] + 1)), subsampling=2)
        paths.append(path)
    return paths
