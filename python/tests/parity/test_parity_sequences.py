"""Image operators on sequences (FHWC, FCHW) against DALI 2.4: the same calls as
test_parity_image_ops.py on batches of clips of different lengths and sizes, compared within the
same tolerances (each frame is an image to both libraries); per_frame arguments, one value per
frame or one for all; crop_mirror_normalize's frame-aware output layouts (FCHW, CFHW)."""

import numpy as np
import pytest

from parity_util import SKIP_REASON, _lib, assert_like_dali, dali

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {"per_frame": "exact: the layout it gives, read by the operators it feeds"}


def _clips():
    rng = np.random.default_rng(5)
    out = []
    for frames, h, w in ((5, 37, 53), (3, 20, 31), (4, 50, 50)):
        y, x = np.mgrid[0:h, 0:w]
        clip = []
        for f in range(frames):  # content that moves from frame to frame
            smooth = np.stack([((x + 7 * f) * 255 // (w + 7 * frames)), (y * 255 // h),
                               ((x + y + 5 * f) * 255 // (w + h + 5 * frames))], -1)
            clip.append(np.clip(smooth + rng.integers(-20, 21, (h, w, 3)), 0, 255))
        out.append(np.stack(clip).astype(np.uint8))
    return out


CLIPS = _clips()
FRAMES = [c.shape[0] for c in CLIPS]
_ON_GPU = [False]


def _feed(fn, types, layout="FHWC"):
    clips = CLIPS if layout == "FHWC" else [np.ascontiguousarray(c.transpose(0, 3, 1, 2))
                                            for c in CLIPS]
    x = fn.external_source(source=lambda: [c.copy() for c in clips], batch=True, layout=layout)
    return x.gpu() if _ON_GPU[0] else x


def _per_frame(fn, values):
    """A per-frame float argument: values[i] for clip i (one per frame, or one for all)."""
    data = [np.array(v, dtype=np.float32) for v in values]
    return fn.per_frame(fn.external_source(source=lambda: data, batch=True))


_BRIGHT = [np.linspace(0.5, 1.5, f) for f in FRAMES]

# (id, definition(fn, types) -> node, atol, share of elements allowed beyond atol)
_CASES = [
    ("crop", lambda fn, t: fn.crop(_feed(fn, t), crop=(15, 17), crop_pos_x=0.25,
                                   crop_pos_y=0.75), 0, 0),
    ("crop_fchw", lambda fn, t: fn.crop(_feed(fn, t, "FCHW"), crop=(15, 17)), 0, 0),
    ("flip", lambda fn, t: fn.flip(_feed(fn, t), horizontal=1, vertical=1), 0, 0),
    ("flip_fchw", lambda fn, t: fn.flip(_feed(fn, t, "FCHW"), horizontal=1), 0, 0),
    ("resize_linear", lambda fn, t: fn.resize(_feed(fn, t), size=(24, 40),
                                             interp_type=t.INTERP_LINEAR, antialias=False),
     1, 0),
    ("resize_nn", lambda fn, t: fn.resize(_feed(fn, t), size=(24, 40), interp_type=t.INTERP_NN),
     0, 0),
    ("cmn_fchw", lambda fn, t: fn.crop_mirror_normalize(
        _feed(fn, t), crop=(16, 16), crop_pos_x=0.4, mirror=1, mean=[120.0, 110.0, 100.0],
        std=[60.0, 55.0, 50.0], output_layout="FCHW", dtype=t.FLOAT), 1e-5, 0),
    ("cmn_cfhw", lambda fn, t: fn.crop_mirror_normalize(
        _feed(fn, t), crop=(16, 16), crop_pos_y=0.3, mean=[120.0, 110.0, 100.0],
        std=[60.0, 55.0, 50.0], output_layout="CFHW", dtype=t.FLOAT), 1e-5, 0),
    ("cmn_fhwc", lambda fn, t: fn.crop_mirror_normalize(
        _feed(fn, t), crop=(16, 16), mean=[120.0], std=[60.0], output_layout="FHWC",
        dtype=t.FLOAT), 1e-5, 0),
    ("brightness", lambda fn, t: fn.brightness(_feed(fn, t), brightness=1.3), 0, 0),
    ("brightness_per_frame", lambda fn, t: fn.brightness(
        _feed(fn, t), brightness=_per_frame(fn, _BRIGHT)), 0, 0),
    ("brightness_per_frame_one", lambda fn, t: fn.brightness(
        _feed(fn, t), brightness=_per_frame(fn, [[0.6], [1.2], [1.4]])), 0, 0),
    ("hsv", lambda fn, t: fn.hsv(_feed(fn, t), hue=30, saturation=1.3, value=0.9), 1, 0),
    ("color_twist", lambda fn, t: fn.color_twist(_feed(fn, t), hue=20, saturation=1.2,
                                                 contrast=0.8, brightness=1.1), 1, 0),
    ("color_space_conversion", lambda fn, t: fn.color_space_conversion(
        _feed(fn, t), image_type=t.RGB, output_type=t.GRAY), 1, 0),
    ("gaussian_blur", lambda fn, t: fn.gaussian_blur(_feed(fn, t), sigma=1.5), 1, 0),
    ("rotate", lambda fn, t: fn.rotate(_feed(fn, t), angle=30, fill_value=0), 1, 0.01),
    ("warp_affine", lambda fn, t: fn.warp_affine(_feed(fn, t), matrix=[0.9, 0.1, 2.0,
                                                                       -0.1, 1.1, -3.0],
                                                 fill_value=0), 1, 0.01),
    ("erase", lambda fn, t: fn.erase(_feed(fn, t), anchor=[3, 4], shape=[5, 6], axis_names="HW",
                                     fill_value=11), 0, 0),
]


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("case", _CASES, ids=[c[0] for c in _CASES])
def test_sequences_match_dali(case, device):
    name, define, atol, share = case
    assert_like_dali(define, len(CLIPS), device, atol, share, name,
                     lambda on_gpu: _ON_GPU.__setitem__(0, on_gpu))


def test_layouts_match_dali():
    """The output layouts of sequences: F stays outermost, or where output_layout puts it."""
    def define(fn, types):
        x = _feed(fn, types)
        return (fn.crop(x, crop=(8, 8)), fn.resize(x, size=(9, 9)),
                fn.crop_mirror_normalize(x, output_layout="CFHW"),
                fn.crop_mirror_normalize(x, output_layout="FCHW"),
                fn.color_space_conversion(x, image_type=types.RGB, output_type=types.GRAY))

    layouts = {}
    for lib in ("stoker", "dali"):
        pipeline_def, fn, types, extra = _lib(lib)

        @pipeline_def(batch_size=len(CLIPS), num_threads=1, seed=1, **extra)
        def pipe():
            return define(fn, types)

        p = pipe()
        p.build()
        outs = p.run()
        layouts[lib] = [o.layout() for o in outs]
    assert layouts["stoker"] == layouts["dali"] == ["FHWC", "FHWC", "CFHW", "FCHW", "FHWC"]
