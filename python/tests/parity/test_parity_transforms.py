"""transforms.* against DALI 2.4: 2-D translations, scalings, rotations, shears (factors and
angles), crops and their compositions (inputs, reverse_order, combine) equal; 3-D scalings and
shears equal; 3-D rotations within 1e-6 (DALI composes the axis rotation in another order);
translations, scalings and crops of 1 to 6 dimensions (the detection example's 4-D box crop)
equal."""
import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, run

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {name: "exact: 2-D; 3-D rotations within 1e-6" for name in (
    "transforms.translation", "transforms.scale", "transforms.rotation", "transforms.shear",
    "transforms.crop", "transforms.combine")}

_ANGLES = [np.float32(a) for a in (30.0, -75.5, 180.0, 0.25)]


def define(fn, types):
    angle = fn.external_source(source=lambda: _ANGLES, batch=True)
    r = fn.transforms.rotation(angle=angle, center=[0.3, 0.7])
    t = fn.transforms.translation(offset=[0.1, 0.2])
    s = fn.transforms.scale(scale=[2.0, 3.0], center=[0.5, 0.5])
    return (r, t, s,
            fn.transforms.shear(shear=[0.1, 0.2], center=[0.4, 0.6]),
            fn.transforms.shear(angles=[10.0, 20.0]),
            fn.transforms.crop(from_start=[0.1, 0.2], from_end=[0.8, 0.9], to_start=[0.0, 0.0],
                               to_end=[300.0, 300.0]),
            fn.transforms.crop(from_start=[0.9, 0.2], from_end=[0.1, 0.9], absolute=True),
            fn.transforms.combine(t, r, s),
            fn.transforms.combine(t, r, reverse_order=True),
            fn.transforms.translation(r, offset=[0.1, 0.2]),
            fn.transforms.scale(r, scale=[0.5, 2.0], reverse_order=True),
            fn.transforms.scale(scale=2.5, ndim=3),
            fn.transforms.shear(shear=[0.1, 0.2, 0.3, 0.4, 0.5, 0.6], center=[1.0, 2.0, 3.0]))


def test_2d_and_3d_transforms_equal_dali():
    ours, theirs = (run(lib, define, 4)[0] for lib in ("stoker", "dali"))
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert_same(a, b, what=f"output {k}")


def test_3d_rotations_match_dali_closely():
    def rotations(fn, types):
        return (fn.transforms.rotation(angle=47.0, axis=[1.0, 2.0, 0.5], center=[0.1, 0.2, 0.3]),
                fn.transforms.rotation(angle=-120.0, axis=[0.0, 0.0, 1.0]))
    ours, theirs = (run(lib, rotations, 2)[0] for lib in ("stoker", "dali"))
    for a, b in zip(ours, theirs):
        for x, y in zip(a, b):
            assert x.shape == y.shape == (3, 4) and x.dtype == y.dtype
            np.testing.assert_allclose(x, y, atol=1e-6)


def test_1d_to_6d_transforms_equal_dali():
    """Translations, scalings and crops of 1 to 6 dimensions, single values making a 1-D
    transform, and the 4-D crop DALI's detection example maps ltrb boxes with."""
    def define(fn, types):
        t = fn.transforms.translation(offset=[1.0, 2.0, 3.0, 4.0])
        s = fn.transforms.scale(scale=[1.0, 2.0, 3.0, 4.0], center=[0.5, 0.5, 0.5, 0.5])
        crop = fn.transforms.crop(to_start=(0.0, 0.0, 0.0, 0.0),
                                  to_end=(640.0, 480.0, 640.0, 480.0))
        boxes = fn.constant(fdata=[0.1, 0.2, 0.5, 0.75, 0.3, 0.3, 0.9, 1.0], shape=[2, 4])
        return (t, s, crop, fn.transforms.combine(t, s), fn.transforms.combine(t, s,
                                                                              reverse_order=True),
                fn.transforms.crop(from_start=[0.9, 0.1, 0.2, 0.3, 0.4, 0.5],
                                   from_end=[0.1, 0.9, 0.8, 0.7, 0.6, 0.55], absolute=True),
                fn.transforms.translation(offset=3.0), fn.transforms.scale(scale=2.0),
                fn.transforms.scale(scale=2.0, ndim=5), fn.transforms.crop(),
                fn.transforms.crop(from_start=[0.1], to_end=[2.0, 3.0, 4.0]),
                fn.coord_transform(boxes, MT=crop), fn.coord_transform(boxes, MT=t))
    ours, theirs = (run(lib, define, 2)[0] for lib in ("stoker", "dali"))
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert_same(a, b, what=f"output {k}")
