"""experimental.remap against DALI 2.4's, which exists only on the GPU (NPP's nppiRemap): so the
comparison runs only where there is a GPU (the GPU machine), stoker's cpu and gpu backends each
against DALI's gpu one; here the tests skip, and python/tests/test_remap.py holds the CPU backend
to a NumPy reference of NPP's rule instead.

NPP writes no output pixel whose point lies outside the image (DALI's output keeps whatever its
buffer held there; stoker writes 0, the border DALI documents): such pixels are left out of every
comparison. Inside, nearest is exact on points away from the rounding ties, linear and cubic
within a level (integer types) or 1e-3 of the value range (float32). Two tests hold stoker's
reading of what NPP's documentation leaves open: ties of nearest round up, and taps past the
last row or column take the edge pixel."""

import numpy as np
import pytest

from parity_util import SKIP_REASON, dali, has_gpu, run

PARITY = {
    "experimental.remap": (
        "tolerance: GPU machine only (DALI's remap is GPU-only, NPP): nearest exact, linear and "
        "cubic within a level (float32: 1e-3 of the range), on points inside the image"),
}

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

F32 = np.float32
TYPES = {"u8": np.uint8, "u16": np.uint16, "i16": np.int16, "f32": np.float32}
RANGES = {"u8": (0, 256), "u16": (0, 60000), "i16": (-3000, 3000), "f32": (-20, 300)}


def _needs_gpu():
    if not has_gpu():  # (not at module level: the coverage test imports this module)
        pytest.skip("DALI's experimental.remap runs only on the GPU (NPP): compared on the GPU "
                    "machine; test_remap.py checks the CPU backend against NPP's rule here")


def _images(kind, channels, seed, sizes=((37, 53), (64, 48), (4, 4), (50, 50), (5, 6))):
    rng = np.random.default_rng(seed)
    lo, hi = RANGES[kind]
    out = []
    for h, w in sizes:
        img = rng.integers(lo, hi, (h, w, channels))
        out.append((img + (rng.random(img.shape) if kind == "f32" else 0)).astype(TYPES[kind]))
    return out


def _maps(images, origin, lo, hi, seed):
    """Random points in [lo, w - hi) x [lo, h - hi) (in NPP's convention, pixel centres at
    integers), written for `origin`; none within 0.05 of a rounding tie (moved to .3)."""
    rng = np.random.default_rng(seed)
    shift = 0.5 if origin == "corner" else 0.0
    mapsx, mapsy = [], []
    for img in images:
        h, w = img.shape[:2]
        pts = []
        for extent in (w, h):
            p = rng.uniform(lo, max(lo, extent - hi), (h, w))
            frac = p - np.floor(p)
            p = np.where(np.abs(frac - 0.5) < 0.05, np.floor(p) + 0.3, p)
            pts.append(p.astype(F32) + F32(shift))
        mapsx.append(pts[0]), mapsy.append(pts[1])
    return mapsx, mapsy


def _inside(img, mx, my, origin):
    shift = F32(-0.5) if origin == "corner" else F32(0)
    h, w = img.shape[:2]
    px, py = mx.reshape(h, w) + shift, my.reshape(h, w) + shift
    return (px >= 0) & (px < w) & (py >= 0) & (py < h)


def _compare(images, mapsx, mapsy, origin, interp, atol, what, layouts=("HWC", "HW", "HW")):
    """stoker's cpu and gpu backends against DALI's gpu one, on the pixels NPP writes."""
    _needs_gpu()

    def define(on_gpu):
        def build(fn, types):
            # A closure per input: a defaulted parameter (lambda d=d) would be given the
            # iteration number, as DALI gives it.
            ins = [fn.external_source(source=(lambda d: lambda: [a.copy() for a in d])(d),
                                      batch=True, layout=layout)
                   for d, layout in zip((images, mapsx, mapsy), layouts)]
            if on_gpu:
                ins = [x.gpu() for x in ins]
            return fn.experimental.remap(*ins, interp=getattr(types, interp), pixel_origin=origin)
        return build

    theirs = run("dali", define(True), len(images), device_id=0)[0][0]
    for device in ("cpu", "gpu"):
        ours = run("stoker", define(device == "gpu"), len(images), device_id=0)[0][0]
        for i, (a, b, img) in enumerate(zip(ours, theirs, images)):
            assert a.shape == b.shape and a.dtype == b.dtype, f"{what} sample {i}"
            mx, my = mapsx[i], mapsy[i]
            if mx.ndim == 3 and img.ndim == 4:  # per-frame maps of a sequence
                keep = np.stack([_inside(img[f], mx[f], my[f], origin) for f in range(len(img))])
            elif img.ndim == 4:
                keep = np.broadcast_to(_inside(img[0], mx, my, origin), img.shape[:3])
            else:
                keep = _inside(img, mx, my, origin)
            diff = np.abs(a.astype(np.float64) - b.astype(np.float64))[keep]
            assert diff.size == 0 or diff.max() <= atol, (
                f"{what} ({device}) sample {i}: {np.mean(diff > atol):.3%} of the values inside "
                f"differ by more than {atol} (max {diff.max()})")


def _atol(kind, interp):
    if interp == "INTERP_NN":
        return 0
    return 1e-3 * (RANGES["f32"][1] - RANGES["f32"][0]) if kind == "f32" else 1


@pytest.mark.parametrize("origin", ["corner", "center"])
@pytest.mark.parametrize("channels", [1, 3])
@pytest.mark.parametrize("interp", ["INTERP_NN", "INTERP_LINEAR", "INTERP_CUBIC"])
@pytest.mark.parametrize("kind", list(TYPES))
def test_interior_points_match_dali(kind, interp, channels, origin):
    """Points whose every tap (cubic's 4x4) lies inside the image."""
    images = _images(kind, channels, 7)
    mapsx, mapsy = _maps(images, origin, 1, 2.05, 8)
    _compare(images, mapsx, mapsy, origin, interp, _atol(kind, interp),
             f"remap {kind} {interp} {channels}ch {origin}")


@pytest.mark.parametrize("interp", ["INTERP_NN", "INTERP_LINEAR", "INTERP_CUBIC"])
def test_points_anywhere_match_dali_where_npp_writes(interp):
    """Points past every edge and in the edge pixels' last fraction: taps past the last row or
    column take the edge pixel (stoker's reading of NPP)."""
    # No side of 1: NPP refuses such an image (DALI: "npp error (-57): Size of the rectangle
    # region is less than or equal to 1"); test_remap.py remaps them.
    images = _images("u8", 3, 9, sizes=((37, 53), (2, 2), (2, 9), (9, 2), (20, 20)))
    mapsx, mapsy = _maps(images, "center", -2, -2, 10)
    _compare(images, mapsx, mapsy, "center", interp, _atol("u8", interp), f"remap edges {interp}")


def test_nearest_ties_round_up_as_dali():
    """Integer 'corner' maps put every point on a tie (x.5): stoker rounds it up, so the
    identity map of 'corner' is the identity (its first row and column lie outside: -0.5)."""
    images = _images("u8", 3, 11)
    mapsx = [np.tile(np.arange(im.shape[1], dtype=F32), (im.shape[0], 1)) for im in images]
    mapsy = [np.tile(np.arange(im.shape[0], dtype=F32)[:, None], (1, im.shape[1]))
             for im in images]
    _compare(images, mapsx, mapsy, "corner", "INTERP_NN", 0, "remap nearest ties")


def test_sequences_match_dali():
    """FHWC clips with per-frame maps (FHW) and with one pair of maps for all frames (HW)."""
    rng = np.random.default_rng(12)
    clips = [rng.integers(0, 256, (f, 20, 30, 3)).astype(np.uint8) for f in (3, 1, 2)]
    frames = [list(c) for c in clips]
    per_frame = [_maps(f, "center", 1, 2.05, 13 + k) for k, f in enumerate(frames)]
    mapsx = [np.stack(m[0]) for m in per_frame]
    mapsy = [np.stack(m[1]) for m in per_frame]
    _compare(clips, mapsx, mapsy, "center", "INTERP_LINEAR", 1, "remap per-frame maps",
             layouts=("FHWC", "FHW", "FHW"))
    _compare(clips, [m[0] for m in mapsx], [m[0] for m in mapsy], "center", "INTERP_NN", 0,
             "remap shared maps", layouts=("FHWC", "HW", "HW"))
