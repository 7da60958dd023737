"""Small synthetic datasets for demos and tests: folders of JPEGs laid out as readers.file
expects, and of video clips as readers.video expects (one sub-folder per class). Seeded, so the
same call writes the same content."""

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


def make_video_folder(root, num_videos=16, num_classes=2, seed=0, frames=48, size=(64, 80),
                      rate=25, codec="libx264"):
    """Writes `num_videos` H.264 MP4 clips into root/class_<k>/, returns their paths: bright
    squares moving over photo-like backgrounds, up in class 0, down in class 1, still in class 2
    (further classes move up or down at their own speeds). The class shows only in the motion
    (a horizontal flip keeps it), so a video model must look across frames to learn it. Needs
    PyAV (`pip install av`)."""
    import av

    rng = np.random.default_rng(seed)
    h, w = size
    paths = []
    for i in range(num_videos):
        k = i % num_classes
        folder = os.path.join(root, f"class_{k}")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"clip_{i:05d}.mp4")
        speed = 0 if k == 2 else (1 + k // 3) * (1 if k % 2 else -1)  # rows per frame
        background = _image(rng, h, w).astype(np.int16)
        side = max(4, min(h, w) // 4)
        x0 = int(rng.integers(0, w - side))
        y0 = int(rng.integers(0, h))
        with av.open(path, "w") as container:
            stream = container.add_stream(codec, rate=rate)
            stream.width, stream.height, stream.pix_fmt = w, h, "yuv420p"
            stream.options = {"g": "12", "bf": "2", "crf": "18"}
            for f in range(frames):
                frame = background.copy()
                y = (y0 + speed * f) % h
                rows = (np.arange(side) + y) % h  # the square wraps around the frame
                frame[rows, x0:x0 + side] = 235
                image = np.clip(frame + rng.normal(0, 3, frame.shape), 0, 255).astype(np.uint8)
                for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
                    container.mux(packet)
            for packet in stream.encode():
                container.mux(packet)
        paths.append(path)
    return paths
