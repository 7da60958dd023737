"""Independent references for the Python tests, written from stoker's documented conventions:
Philox4x32-10 and stoker's random_stream key derivation, the RandomResizedCrop window
algorithm, the triangle-filter resize (as dense weight matrices), normalization and video frames'
Y'CbCr to RGB."""

import math
import subprocess

import numpy as np

MASK32 = 0xFFFFFFFF
MASK64 = 0xFFFFFFFFFFFFFFFF


def philox4x32_10(ctr, key):
    c0, c1, c2, c3 = ctr
    k0, k1 = key
    for _ in range(10):
        p0 = 0xD2511F53 * c0
        p1 = 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & MASK32, p1 & MASK32, \
            ((p0 >> 32) ^ c3 ^ k1) & MASK32, p0 & MASK32
        k0, k1 = (k0 + 0x9E3779B9) & MASK32, (k1 + 0xBB67AE85) & MASK32
    return [c0, c1, c2, c3]


def mix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


class RandomStream:
    """stoker's random_stream(seed, op_instance, sample_index)."""

    def __init__(self, seed, op_instance, sample_index, epoch=0):
        key = mix64(seed ^ mix64((op_instance + 0x5851F42D4C957F2D) & MASK64))
        self.key = [key & MASK32, key >> 32]
        self.ctr = [0, epoch, sample_index & MASK32, sample_index >> 32]
        self.block, self.pos = None, 4

    def next_u32(self):
        if self.pos == 4:
            self.block = philox4x32_10(self.ctr, self.key)
            self.ctr[0] += 1
            self.pos = 0
        v = self.block[self.pos]
        self.pos += 1
        return v

    def uniform(self):
        return (self.next_u32() >> 8) * (1.0 / 16777216.0)

    def below(self, n):
        limit = (2**32 - n) % n
        while True:
            r = self.next_u32()
            if r >= limit:
                return r % n

    def bernoulli(self, p):
        return np.float32(self.uniform()) < np.float32(p)


def rrc_window(H, W, rng, area=(0.08, 1.0), ratio=(3 / 4, 4 / 3), attempts=10):
    """torchvision's RandomResizedCrop.get_params with stoker's draw order (see
    random_crop_window.hpp). Python's round() is round-half-even, like std::nearbyint."""
    total = H * W
    log_lo, log_hi = math.log(ratio[0]), math.log(ratio[1])
    for _ in range(attempts):
        target = total * (area[0] + (area[1] - area[0]) * rng.uniform())
        aspect = math.exp(log_lo + (log_hi - log_lo) * rng.uniform())
        w = round(math.sqrt(target * aspect))
        h = round(math.sqrt(target / aspect))
        if 0 < w <= W and 0 < h <= H:
            y = rng.below(H - h + 1)
            x = rng.below(W - w + 1)
            return y, x, h, w
    in_ratio = W / H
    w, h = W, H
    if in_ratio < ratio[0]:
        h = round(W / ratio[0])
    elif in_ratio > ratio[1]:
        w = round(H * ratio[1])
    return (H - h) // 2, (W - w) // 2, h, w


def triangle_weights(in_size, out_size, antialias=True):
    scale = in_size / out_size
    radius = scale if (antialias and scale > 1) else 1.0
    centres = (np.arange(out_size) + 0.5) * scale
    d = np.abs((np.arange(in_size) + 0.5)[None, :] - centres[:, None]) / radius
    w = np.maximum(0.0, 1.0 - d)
    return w / w.sum(axis=1, keepdims=True)


def resize_reference(img, out_h, out_w, antialias=True):
    """float64 HWC result of the triangle-filter resize."""
    wy = triangle_weights(img.shape[0], out_h, antialias)
    wx = triangle_weights(img.shape[1], out_w, antialias)
    rows = np.tensordot(wy, img.astype(np.float64), axes=(1, 0))   # (out_h, in_w, c)
    return np.tensordot(rows, wx, axes=(1, 1)).transpose(0, 2, 1)  # (out_h, out_w, c)


def round_u8(x):
    return np.clip(np.floor(x + 0.5), 0, 255).astype(np.uint8)


def djpeg_rgb(djpeg, path):
    """libjpeg-turbo's own decode of `path` (djpeg -ppm), as an HWC uint8 array."""
    ppm = subprocess.run([djpeg, "-ppm", path], check=True, capture_output=True).stdout
    parts, pos = [], 0
    while len(parts) < 4:  # magic, width, height, maxval (no comments in djpeg output)
        while ppm[pos:pos + 1].isspace():
            pos += 1
        end = pos
        while not ppm[end:end + 1].isspace():
            end += 1
        parts.append(ppm[pos:end])
        pos = end
    assert parts[0] == b"P6", parts[0]
    w, h = int(parts[1]), int(parts[2])
    return np.frombuffer(ppm[pos + 1:pos + 1 + w * h * 3], np.uint8).reshape(h, w, 3)


def chroma_upsample(c, width, height, center=False):
    """A subsampled (4:2:0) chroma plane at every luma pixel, bilinearly: chroma sample j sits
    at luma column 2j (H.264's default siting) or 2j + 0.5 (center), and between luma rows 2j
    and 2j + 1; edges repeat. kernels/color/yuv_to_rgb.hpp's definition, in floats."""
    h, w = c.shape
    sx = 0 if w == width else 1
    sy = 0 if h == height else 1
    xs = (np.arange(width) - (0.5 if center and sx else 0.0)) / (1 << sx)
    ys = (np.arange(height) - (0.5 if sy else 0.0)) / (1 << sy)
    x0 = np.floor(xs).astype(int)
    y0 = np.floor(ys).astype(int)
    ax, ay = xs - x0, (ys - y0)[:, None]
    cx = lambda i: np.clip(i, 0, w - 1)  # noqa: E731
    cy = lambda j: np.clip(j, 0, h - 1)  # noqa: E731
    c = c.astype(np.float64)
    top = c[cy(y0)][:, cx(x0)] * (1 - ax) + c[cy(y0)][:, cx(x0 + 1)] * ax
    bottom = c[cy(y0 + 1)][:, cx(x0)] * (1 - ax) + c[cy(y0 + 1)][:, cx(x0 + 1)] * ax
    return top * (1 - ay) + bottom * ay


def ycbcr_to_rgb(y, cb, cr, bt709=False, full_range=False, clip=True):
    """Y'CbCr (8-bit scale) to RGB in 0-255 (clip=False: colours outside the cube keep their
    values), unrounded, from the standard's Kr and Kb."""
    kr, kb = (0.2126, 0.0722) if bt709 else (0.299, 0.114)
    kg = 1 - kr - kb
    yy = y if full_range else (y - 16) * 255 / 219
    s = 1 if full_range else 255 / 224
    u, v = (cb - 128) * s, (cr - 128) * s
    rgb = np.stack([yy + 2 * (1 - kr) * v, yy - 2 * (1 - kb) * kb / kg * u - 2 * (1 - kr) * kr / kg * v,
                    yy + 2 * (1 - kb) * u], -1)
    return np.clip(rgb, 0, 255) if clip else rgb
