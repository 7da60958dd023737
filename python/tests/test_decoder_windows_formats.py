"""Windows of WebP and TIFF images (decoders.image_crop): libwebp decodes a crop widened by the
chroma its upsampler reads and stops below it, libtiff only the strips and tiles under it, so
every window must equal the same window of a full decode — lossy and lossless WebP, alpha,
animations, TIFF strips of a few rows, tiles, and the kinds decoded whole first (planar,
16-bit, palettes)."""

import io

import numpy as np
import pytest

import stoker
from stoker import fn

PIL = pytest.importorskip("PIL.Image")
tifffile = pytest.importorskip("tifffile", reason="tifffile writes the tiled and striped TIFFs")

WINDOWS = [((17, 23), 0.3, 0.7), ((1, 1), 1.0, 0.0), ((31, 8), 0.0, 1.0), ((9, 16), 0.5, 0.5),
           ((40, 60), 0.77, 0.33), ((2, 3), 0.51, 0.49), ((77, 101), 0.0, 0.0)]


def _photo(h=77, w=101, channels=3, seed=3):
    # Smooth gradients with texture: chroma that differs between neighbours, so upsampling at
    # a crop's edge would show.
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([(x * 255 // w), (y * 255 // h), ((x + y) * 127 // (h + w))], -1)
    img = np.clip(base + rng.integers(-40, 40, (h, w, 3)), 0, 255).astype(np.uint8)
    if channels == 4:
        img = np.concatenate([img, rng.integers(0, 256, (h, w, 1), dtype=np.uint8)], -1)
    return img


def _pil(array, fmt, **kw):
    buf = io.BytesIO()
    mode = {1: "L", 3: "RGB", 4: "RGBA"}[array.shape[-1] if array.ndim == 3 else 1]
    PIL.fromarray(array, mode).save(buf, fmt, **kw)
    return np.frombuffer(buf.getvalue(), np.uint8)


def _tf(array, **kw):
    buf = io.BytesIO()
    tifffile.imwrite(buf, array, **kw)
    return np.frombuffer(buf.getvalue(), np.uint8)


def _animation():
    frames = [PIL.fromarray(_photo(seed=s)) for s in (1, 2)]
    buf = io.BytesIO()
    frames[0].save(buf, "WEBP", save_all=True, append_images=frames[1:], quality=80)
    return np.frombuffer(buf.getvalue(), np.uint8)


def _palette():
    img = PIL.fromarray(_photo()).convert("P", palette=PIL.Palette.ADAPTIVE, colors=64)
    buf = io.BytesIO()
    img.save(buf, "TIFF")
    return np.frombuffer(buf.getvalue(), np.uint8)


IMAGES = {
    "webp_lossy": lambda: _pil(_photo(), "WEBP", quality=80),
    "webp_lossy_alpha": lambda: _pil(_photo(channels=4), "WEBP", quality=80),
    "webp_lossless": lambda: _pil(_photo(), "WEBP", lossless=True),
    "webp_lossless_alpha": lambda: _pil(_photo(channels=4), "WEBP", lossless=True),
    "webp_animated": _animation,
    "tiff_lzw": lambda: _pil(_photo(), "TIFF", compression="tiff_lzw"),
    "tiff_strips_of_7_rows": lambda: _tf(_photo(), photometric="rgb", rowsperstrip=7,
                                         compression="zlib"),
    "tiff_rgba_strips": lambda: _tf(_photo(channels=4), photometric="rgb", rowsperstrip=5,
                                    extrasamples=[2]),
    "tiff_gray_strips": lambda: _tf(_photo()[..., 0], photometric="minisblack", rowsperstrip=3),
    "tiff_tiled": lambda: _tf(_photo(), photometric="rgb", tile=(16, 32), compression="zlib"),
    "tiff_jpeg": lambda: _pil(_photo(), "TIFF", compression="jpeg"),
    "tiff_planar": lambda: _tf(np.moveaxis(_photo(), -1, 0).copy(), photometric="rgb",
                               planarconfig="separate"),
    "tiff_16bit": lambda: _tf((_photo().astype(np.uint16) * 257), photometric="rgb",
                              rowsperstrip=4),
    "tiff_palette": _palette,
}


def _decode(blob, op="image", **kwargs):
    pipe = stoker.Pipeline(batch_size=1, num_threads=1, seed=0)
    with pipe:
        data = fn.external_source(lambda: [blob])
        pipe.set_outputs(getattr(fn.decoders, op)(data, **kwargs))
    (out,) = pipe.run()
    return out[0].numpy()


@pytest.mark.parametrize("name", sorted(IMAGES))
@pytest.mark.parametrize("output_type", ["RGB", "GRAY", "ANY_DATA", "BGR"])
def test_windows_equal_the_window_of_the_full_decode(name, output_type):
    blob = IMAGES[name]()
    try:
        full = _decode(blob, output_type=output_type)
    except RuntimeError as e:  # a build without libwebp / libtiff refuses the format by name
        if "built without" in str(e):
            pytest.skip(str(e))
        raise
    H, W = full.shape[:2]
    assert (H, W) == (77, 101)
    for crop, px, py in WINDOWS:
        got = _decode(blob, "image_crop", crop=crop, crop_pos_x=px, crop_pos_y=py,
                      output_type=output_type)
        y = int(np.floor(py * (H - crop[0]) + 0.5))
        x = int(np.floor(px * (W - crop[1]) + 0.5))
        np.testing.assert_array_equal(got, full[y:y + crop[0], x:x + crop[1]],
                                      err_msg=f"{name} {output_type} window {crop} at {y},{x}")
