"""transforms.*: matrices against numpy (float64 references), compositions in both orders,
per-sample angles, a rotation that warp_affine applies as the matrix says, and errors."""
import numpy as np
import pytest

import stoker
from stoker import fn


def _run(define, batch=1):
    pipe = stoker.Pipeline(batch_size=batch, num_threads=1, seed=1)
    with pipe:
        pipe.set_outputs(*define())
    return [[np.array(s) for s in b] for b in pipe.run()]


def _h(m):
    """The homogeneous square form of an n x (n+1) matrix."""
    n = m.shape[0]
    return np.vstack([m, np.eye(n + 1)[-1]])


def _about(lin, c):
    c = np.asarray(c, float)
    return np.hstack([lin, (c - lin @ c)[:, None]])


def test_matrices_match_their_definitions():
    a = np.deg2rad(30)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    outs = _run(lambda: (
        fn.transforms.translation(offset=[0.1, 0.2]),
        fn.transforms.scale(scale=[2.0, 3.0], center=[0.5, 0.5]),
        fn.transforms.rotation(angle=30.0, center=[0.3, 0.7]),
        fn.transforms.shear(angles=[10.0, 20.0]),
        fn.transforms.crop(from_start=[0.1, 0.2], from_end=[0.8, 0.9], to_end=[300.0, 300.0]),
        fn.transforms.rotation(angle=90.0, axis=[0.0, 0.0, 1.0])))
    refs = [np.array([[1, 0, 0.1], [0, 1, 0.2]]),
            _about(np.diag([2.0, 3.0]), [0.5, 0.5]),
            _about(rot, [0.3, 0.7]),
            np.array([[1, np.tan(np.deg2rad(10)), 0], [np.tan(np.deg2rad(20)), 1, 0]]),
            np.array([[300 / 0.7, 0, -0.1 * 300 / 0.7], [0, 300 / 0.7, -0.2 * 300 / 0.7]]),
            np.array([[0, -1, 0, 0], [1, 0, 0, 0], [0, 0, 1, 0]])]
    for (got,), ref in zip(outs, refs):
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=2e-6)


def test_compositions_apply_in_order():
    t_then_r = _run(lambda: (fn.transforms.rotation(fn.transforms.translation(offset=[1.0, 0.0]),
                                                    angle=90.0),
                             fn.transforms.combine(fn.transforms.translation(offset=[1.0, 0.0]),
                                                   fn.transforms.rotation(angle=90.0)),
                             fn.transforms.rotation(fn.transforms.translation(offset=[1.0, 0.0]),
                                                    angle=90.0, reverse_order=True)))
    shift = _h(np.array([[1, 0, 1.0], [0, 1, 0]]))
    rot = _h(np.array([[0, -1, 0], [1, 0, 0.0]]))
    np.testing.assert_allclose(t_then_r[0][0], (rot @ shift)[:2], atol=1e-6)
    np.testing.assert_allclose(t_then_r[1][0], (rot @ shift)[:2], atol=1e-6)
    np.testing.assert_allclose(t_then_r[2][0], (shift @ rot)[:2], atol=1e-6)


def test_per_sample_angles_drive_warp_affine():
    angles = [np.float32(a) for a in (0.0, 90.0, 180.0)]
    image = np.arange(4 * 4 * 1, dtype=np.uint8).reshape(4, 4, 1)
    pipe = stoker.Pipeline(batch_size=3, num_threads=1, seed=1)
    with pipe:
        a = fn.external_source(lambda: angles)
        im = fn.external_source(lambda: [image] * 3, layout="HWC")
        m = fn.transforms.rotation(angle=a, center=[2.0, 2.0])
        pipe.set_outputs(m, fn.warp_affine(im, matrix=m, inverse_map=False,
                                           interp_type=stoker.types.INTERP_NN))
    mats, warped = pipe.run()
    for k, angle in enumerate((0, 90, 180)):
        r = np.deg2rad(angle)
        lin = np.array([[np.cos(r), -np.sin(r)], [np.sin(r), np.cos(r)]])
        np.testing.assert_allclose(np.array(mats[k]), _about(lin, [2, 2]), atol=1e-5)
    np.testing.assert_array_equal(np.array(warped[0]), image)
    # (pixel centres at +0.5: half a turn about (2, 2) maps column x to 3 - x)
    np.testing.assert_array_equal(np.array(warped[2]), image[::-1, ::-1])


def test_warp_affine_takes_the_matrix_as_its_second_input():
    angles = [np.float32(a) for a in (10.0, -35.0)]
    rng = np.random.default_rng(2)
    images = [rng.integers(0, 255, (9, 12, 3), dtype=np.uint8) for _ in angles]
    pipe = stoker.Pipeline(batch_size=2, num_threads=1, seed=1)
    with pipe:
        a = fn.external_source(lambda: angles)
        im = fn.external_source(lambda: images, layout="HWC")
        m = fn.transforms.rotation(angle=a, center=[6.0, 4.5])
        pipe.set_outputs(fn.warp_affine(im, m, fill_value=[0]),
                         fn.warp_affine(im, matrix=m, fill_value=[0]))
    positional, keyword = pipe.run()
    for k in range(2):
        np.testing.assert_array_equal(np.array(positional[k]), np.array(keyword[k]))
    for kw, message in (({"matrix": [1.0, 0, 0, 0, 1, 0]}, "not both"), ({}, "one of them")):
        bad = stoker.Pipeline(batch_size=1, num_threads=1, seed=1)
        with pytest.raises((ValueError, RuntimeError), match=message):
            with bad:
                im = fn.external_source(lambda: images[:1], layout="HWC")
                args = (fn.transforms.rotation(angle=5.0),) if kw else ()
                bad.set_outputs(fn.warp_affine(im, *args, **kw))
            bad.run()


def test_errors_name_what_is_wrong():
    with pytest.raises(ValueError, match="give `shear` or `angles`"):
        _run(lambda: (fn.transforms.shear(shear=[0.1, 0.2], angles=[1.0, 2.0]),))
    with pytest.raises(ValueError, match=r"`offset` has 7 values: not a 1-D to 6-D transform"):
        _run(lambda: (fn.transforms.translation(offset=[1.0] * 7),))
    with pytest.raises(ValueError, match=r"`center` has 4 values: not a 2-D or 3-D transform"):
        _run(lambda: (fn.transforms.rotation(angle=5.0, center=[1.0] * 4),))
    with pytest.raises(ValueError, match="input 1 is 3-D, input 0 2-D"):
        _run(lambda: (fn.transforms.combine(fn.transforms.translation(offset=[1.0, 2.0]),
                                            fn.transforms.translation(offset=[1.0, 2.0, 3.0])),))
    with pytest.raises(ValueError, match="the `from` window has no extent along axis 0"):
        _run(lambda: (fn.transforms.crop(from_start=[0.5, 0.0], from_end=[0.5, 1.0]),))


def test_one_to_six_dimensions_as_dali():
    """Translations, scalings and crops have 1 to 6 dimensions (DALI's detection example maps
    ltrb boxes with a 4-D crop); single values make a 1-D transform unless `ndim` or an input
    says otherwise."""
    outs = _run(lambda: (
        fn.transforms.crop(to_start=[0.0] * 4, to_end=[640.0, 480.0, 640.0, 480.0]),
        fn.transforms.translation(offset=[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
        fn.transforms.scale(scale=2.0),
        fn.transforms.scale(scale=2.0, ndim=4),
        fn.transforms.crop(from_start=[0.2], from_end=[0.7], to_start=[1.0], to_end=[3.0]),
        fn.transforms.combine(fn.transforms.translation(offset=[1.0]),
                              fn.transforms.scale(scale=[3.0])),
        fn.coord_transform(fn.constant(fdata=[0.1, 0.2, 0.5, 0.75], shape=[1, 4]),
                           MT=fn.transforms.crop(to_end=[640.0, 480.0, 640.0, 480.0]))))
    refs = [np.hstack([np.diag([640.0, 480.0, 640.0, 480.0]), np.zeros((4, 1))]),
            np.hstack([np.eye(6), np.arange(1.0, 7.0)[:, None]]),
            np.array([[2.0, 0.0]]),
            np.hstack([2 * np.eye(4), np.zeros((4, 1))]),
            np.array([[4.0, 0.2]]),
            np.array([[3.0, 3.0]]),
            np.array([[64.0, 96.0, 320.0, 360.0]])]
    for (got,), ref in zip(outs, refs):
        assert got.dtype == np.float32 and got.shape == ref.shape
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-6)
