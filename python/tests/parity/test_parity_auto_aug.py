"""stoker.auto_aug against DALI 2.4's nvidia.dali.auto_aug: the same definitions with only the
package changed.

* Every augmentation alone with fixed magnitude bins (both signs where the augmentation negates
  at random; signs from an external source, so that both libraries use the same), compared
  exactly, or within 1 level where the operator underneath resamples or rounds differently
  (warp_affine/rotate bilinear interpolation: float vs double coordinates; saturation: 1 level).
* The policies and suites: names, probabilities, magnitude bins, magnitude ranges, negation and
  every parameter mag_to_param gives, equal to DALI's.
* auto_augment (every policy), rand_augment and trivial_augment_wide on real photos: the same
  output shapes, dtypes and layouts (which augmentation each sample gets is random, and the
  random streams differ by design: docs/dali_differences.md). That each augmentation is picked
  with the policy's frequency is checked on stoker in python/tests/test_auto_aug.py.
* Errors: the same messages for bad magnitudes, policies and arguments."""

import glob
import os
import re
import warnings

import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, run

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

import importlib  # noqa: E402

import stoker  # noqa: E402

PARITY = {}  # the operators underneath are declared where they are compared


def _mods(lib):
    base = "stoker.auto_aug" if lib == "stoker" else "nvidia.dali.auto_aug"
    names = ("augmentations", "auto_augment", "rand_augment", "trivial_augment", "core")
    return {n: importlib.import_module(f"{base}.{n}") for n in names}


def _has_op(name):
    return any(s["name"] == name for s in stoker._stoker.schemas())


def _needs(aug_name):
    """Skips while stoker lacks the operator an augmentation is made of."""
    op = {"equalize": "equalize", "sharpness": "filter"}.get(aug_name)
    if op and not (_has_op(op) or _has_op(f"experimental.{op}")):
        pytest.skip(f"stoker has no fn.experimental.{op} yet (the {aug_name} augmentation)")


def _images():
    rng = np.random.default_rng(7)
    out = []
    for h, w in ((37, 53), (64, 48), (20, 31), (50, 50)):
        y, x = np.mgrid[0:h, 0:w]
        smooth = np.stack([(x * 255 // w), (y * 255 // h), ((x + y) * 255 // (w + h))], -1)
        img = np.clip(smooth + rng.integers(-20, 21, (h, w, 3)), 0, 255).astype(np.uint8)
        out.append(img)
    out[2][..., 1] = 77  # a constant channel (auto_contrast keeps it)
    out[3] = out[3] // 3 + 60  # a low-contrast image
    return out


IMAGES = _images()


def _image(info):
    return IMAGES[info.idx_in_batch]


def _sign(info):
    return np.array(info.idx_in_batch % 2, np.int32)  # samples 0, 2: +m; 1, 3: -m


def _run_aug(lib, name, magnitude_bin, num_bins=11, **kwargs):
    aug = getattr(_mods(lib)["augmentations"], name)
    core = _mods(lib)["core"]

    def define(fn, types):
        images = fn.external_source(source=_image, batch=False, layout="HWC")
        mag = magnitude_bin
        if aug.randomly_negate:
            mag = core.signed_bin(magnitude_bin,
                                  random_sign=fn.external_source(source=_sign, batch=False))
        return aug(images, magnitude_bin=mag, num_magnitude_bins=num_bins, **kwargs)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return run(lib, define, len(IMAGES))[0][0]


# augmentation -> (atol, share of elements allowed to differ by atol); exact unless listed
_TOLERANCE = {
    "shear_x": (1, 0.05), "shear_y": (1, 0.05),  # bilinear: float vs double coordinates
    "rotate": (1, 0.01),
    "color": (1, 0.2),  # saturation: 1 level
}
_AUGS = ["shear_x", "shear_y", "translate_x_no_shape", "translate_y_no_shape", "rotate",
         "brightness", "contrast", "color", "sharpness", "posterize", "solarize", "solarize_add",
         "invert", "equalize", "auto_contrast", "identity"]


@pytest.mark.parametrize("magnitude_bin", [0, 4, 10])
@pytest.mark.parametrize("name", _AUGS)
def test_augmentation_with_fixed_magnitude_matches_dali(name, magnitude_bin):
    _needs(name)
    atol, share = _TOLERANCE.get(name, (0, 0))
    ours = _run_aug("stoker", name, magnitude_bin)
    theirs = _run_aug("dali", name, magnitude_bin)
    assert_same(ours, theirs, atol=atol, max_mismatch=share, what=f"{name} bin {magnitude_bin}")


@pytest.mark.parametrize("name", ["translate_x", "translate_y"])
@pytest.mark.parametrize("shape", [(40, 60), "per_sample"])
def test_translation_relative_to_shape_matches_dali(name, shape):
    def both(lib):
        aug = getattr(_mods(lib)["augmentations"], name)
        core = _mods(lib)["core"]

        def define(fn, types):
            images = fn.external_source(source=_image, batch=False, layout="HWC")
            sh = shape if shape != "per_sample" else images.shape()
            mag = core.signed_bin(7, random_sign=fn.external_source(source=_sign, batch=False))
            return aug(images, magnitude_bin=mag, num_magnitude_bins=11, shape=sh)

        return run(lib, define, len(IMAGES))[0][0]

    # fractional offsets (0.7 of an odd extent) are interpolated: 1 level, float vs double
    assert_same(both("stoker"), both("dali"), atol=1, max_mismatch=0.01, what=name)


@pytest.mark.parametrize("name", ["shear_x", "rotate", "translate_y_no_shape"])
@pytest.mark.parametrize("extra", [{"fill_value": None}, {"fill_value": 7},
                                   {"interp_type": "nn"}])
def test_warp_arguments_match_dali(name, extra):
    """fill_value=None (border replicated), another fill, nearest-neighbour interpolation."""
    def kwargs(lib):
        if "interp_type" in extra:
            types = stoker.types if lib == "stoker" else dali.types
            return {"interp_type": types.INTERP_NN}
        return dict(extra)

    ours = _run_aug("stoker", name, 6, **kwargs("stoker"))
    theirs = _run_aug("dali", name, 6, **kwargs("dali"))
    atol, share = (0, 0) if "interp_type" in extra else _TOLERANCE.get(name, (0, 0))
    # NN rotation: taps on pixel boundaries break ties differently (float vs double)
    share = 0.01 if name == "rotate" and "interp_type" in extra else share
    atol = 255 if name == "rotate" and "interp_type" in extra else atol
    assert_same(ours, theirs, atol=atol, max_mismatch=share, what=f"{name} {extra}")


def test_per_sample_magnitude_bins_match_dali():
    """Bins as a batch (a DataNode), as trivial_augment draws them: every bin of 31."""
    def both(lib):
        m = _mods(lib)
        aug = m["augmentations"].solarize.augmentation((256, 0))
        neg = m["augmentations"].brightness.augmentation((0.01, 0.99), True,
                                                         m["augmentations"].shift_enhance_range)

        def define(fn, types):
            images = fn.external_source(source=_image, batch=False, layout="HWC")
            bins = fn.external_source(source=lambda info: np.array(
                info.idx_in_batch * 9 % 31, np.int32), batch=False)
            signed = m["core"].signed_bin(bins, random_sign=fn.external_source(
                source=_sign, batch=False))
            return (aug(images, magnitude_bin=bins, num_magnitude_bins=31),
                    neg(images, magnitude_bin=signed, num_magnitude_bins=31))

        return run(lib, define, len(IMAGES))[0]

    ours, theirs = both("stoker"), both("dali")
    for k in range(2):
        assert_same(ours[k], theirs[k], what=f"output {k}")


# -- policies and suites -------------------------------------------------------------------------

def _describe_aug(aug, num_bins):
    """Everything that decides what an augmentation does with each magnitude bin."""
    params = None
    if aug.mag_range is not None:
        mags = aug._get_magnitudes(num_bins)
        if aug.randomly_negate:
            mags = np.concatenate([mags, -np.asarray(mags)])
        params = aug._map_mags_to_params(mags)
    return (aug.name, aug.op.__name__, None if aug.mag_range is None else
            np.asarray(aug.mag_range).tolist(), aug.randomly_negate, aug.param_device,
            None if params is None else (params.dtype.str, params.tolist()))


def _describe_policy(policy):
    subs = [[(aug.name, p, mag) for aug, p, mag in sub] for sub in policy.sub_policies]
    augs = {name: _describe_aug(aug, policy.num_magnitude_bins)
            for name, aug in policy.augmentations.items()}
    return policy.name, policy.num_magnitude_bins, subs, augs


_POLICY_ARGS = [{}, {"use_shape": True}, {"max_translate_abs": (100, 50)},
                {"use_shape": True, "max_translate_rel": 0.5}]


@pytest.mark.parametrize("args", _POLICY_ARGS, ids=str)
@pytest.mark.parametrize("getter", ["get_image_net_policy", "get_svhn_policy",
                                    "get_reduced_cifar10_policy", "get_reduced_image_net_policy"])
def test_policies_equal_dalis(getter, args):
    if getter == "get_reduced_image_net_policy" and args:
        pytest.skip("no translation arguments")
    ours = getattr(_mods("stoker")["auto_augment"], getter)(**args)
    theirs = getattr(_mods("dali")["auto_augment"], getter)(**args)
    assert _describe_policy(ours) == _describe_policy(theirs)
    # the per-stage augmentation lists and the sub-policy -> augmentation index table
    mine = _mods("stoker")["auto_augment"]._sub_policy_to_augmentation_matrix_map(ours)
    dalis = _mods("dali")["auto_augment"]._sub_policy_to_augmentation_matrix_map(theirs)
    np.testing.assert_array_equal(mine[0], dalis[0])
    assert [[a.name for a in stage] for stage in mine[1]] == \
        [[a.name for a in stage] for stage in dalis[1]]


@pytest.mark.parametrize("args", _POLICY_ARGS, ids=str)
@pytest.mark.parametrize("module,getter", [
    ("rand_augment", "get_rand_augment_suite"),
    ("rand_augment", "get_rand_augment_non_monotonic_suite"),
    ("trivial_augment", "get_trivial_augment_wide_suite")])
@pytest.mark.parametrize("num_bins", [11, 31])
def test_suites_equal_dalis(module, getter, args, num_bins):
    ours = getattr(_mods("stoker")[module], getter)(**args)
    theirs = getattr(_mods("dali")[module], getter)(**args)
    assert [_describe_aug(a, num_bins) for a in ours] == \
        [_describe_aug(a, num_bins) for a in theirs]


def test_augmentations_module_equals_dalis():
    ours, theirs = _mods("stoker")["augmentations"], _mods("dali")["augmentations"]
    names = [n for n in dir(theirs) if isinstance(getattr(theirs, n), type(theirs.rotate))]
    assert len(names) == 18
    for name in names:
        assert _describe_aug(getattr(ours, name), 11) == _describe_aug(getattr(theirs, name), 11)
    for fn_name in ("warp_x_param", "warp_y_param", "shift_enhance_range", "sharpness_kernel",
                    "sharpness_kernel_shifted", "poster_mask_uint8", "solarize_add_shift"):
        for mag in np.linspace(0, 8, 33, dtype=np.float32):
            if fn_name == "solarize_add_shift":
                mag = mag * 10
            a = np.asarray(getattr(ours, fn_name)(mag))
            b = np.asarray(getattr(theirs, fn_name)(mag))
            assert a.dtype == b.dtype and np.array_equal(a, b), (fn_name, mag)


def test_public_names_equal_dalis():
    for module in ("augmentations", "auto_augment", "rand_augment", "trivial_augment", "core"):
        theirs = {n for n in dir(_mods("dali")[module]) if not n.startswith("__")}
        theirs -= {"np", "npt", "fn", "types", "warnings", "List", "Optional", "Tuple", "Union",
                   "a", "_DataNode"}
        missing = theirs - set(dir(_mods("stoker")[module]))
        assert not missing, f"{module}: {sorted(missing)}"


# -- whole pipelines on real photos --------------------------------------------------------------

def _photo_pipeline(lib, root, augment, batch_size=8, iterations=2, seed=5):
    m = _mods(lib)

    def define(fn, types):
        jpegs, labels = fn.readers.file(file_root=root)
        shapes = fn.peek_image_shape(jpegs)
        images = fn.decoders.image(jpegs, device="cpu", output_type=types.RGB)
        images = fn.resize(images, resize_shorter=96)
        return augment(m, images, shapes), images

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipeline_def, fn, types = ((stoker.pipeline_def, stoker.fn, stoker.types)
                                   if lib == "stoker" else
                                   (dali.pipeline_def, dali.fn, dali.types))
        extra = {} if lib == "stoker" else {"device_id": None}

        @pipeline_def(batch_size=batch_size, num_threads=2, seed=seed, enable_conditionals=True,
                      **extra)
        def pipe_def():
            return define(fn, types)

        pipe = pipe_def()
        pipe.build()
        out = []
        for _ in range(iterations):
            augmented, images = pipe.run()
            out.append((augmented.layout(),
                        [np.array(augmented.at(i)) for i in range(batch_size)],
                        [np.array(images.at(i)) for i in range(batch_size)]))
        return out


_PIPELINES = {
    "auto_augment_image_net": lambda m, x, s: m["auto_augment"].auto_augment_image_net(
        x, shape=s),
    "auto_augment_svhn": lambda m, x, s: m["auto_augment"].auto_augment(x, "svhn"),
    "auto_augment_reduced_image_net": lambda m, x, s: m["auto_augment"].auto_augment(
        x, "reduced_image_net", fill_value=None),
    "auto_augment_reduced_cifar10": lambda m, x, s: m["auto_augment"].auto_augment(
        x, "reduced_cifar10", shape=s, max_translate_rel=0.3),
    "rand_augment": lambda m, x, s: m["rand_augment"].rand_augment(x, n=2, m=9, shape=s),
    "rand_augment_n1_non_monotonic": lambda m, x, s: m["rand_augment"].rand_augment(
        x, n=1, m=20, monotonic_mag=False, excluded=["rotate"]),
    "trivial_augment_wide": lambda m, x, s: m["trivial_augment"].trivial_augment_wide(
        x, shape=s),
    "trivial_augment_wide_abs": lambda m, x, s: m["trivial_augment"].trivial_augment_wide(
        x, num_magnitude_bins=11, max_translate_abs=20, interp_type=None),
}


@pytest.mark.parametrize("name", sorted(_PIPELINES))
def test_pipelines_on_photos_agree_with_dali(name, shared_data):
    root = os.path.join(shared_data, "photos", "dali-imagenet-classes")
    if not glob.glob(os.path.join(root, "*", "*")):
        pytest.skip(f"no photos in {root}")
    _needs("equalize")
    _needs("sharpness")
    ours = _photo_pipeline("stoker", root, _PIPELINES[name])
    theirs = _photo_pipeline("dali", root, _PIPELINES[name])
    changed = 0
    for (layout, out, images), (dlayout, dout, dimages) in zip(ours, theirs):
        assert layout == dlayout == "HWC"
        for a, b, x in zip(out, dout, images):
            assert a.shape == b.shape == x.shape and a.dtype == b.dtype == np.uint8
            changed += int(not np.array_equal(a, x))
    assert changed > 0  # something was augmented


# -- errors --------------------------------------------------------------------------------------

def _error(lib, make):
    """The message of the exception `make(modules, fn, types)` raises while a pipeline is
    defined (None: none)."""
    m = _mods(lib)
    pipeline_def, fn, types = ((stoker.pipeline_def, stoker.fn, stoker.types) if lib == "stoker"
                               else (dali.pipeline_def, dali.fn, dali.types))
    extra = {} if lib == "stoker" else {"device_id": None}

    @pipeline_def(batch_size=2, num_threads=1, enable_conditionals=True, **extra)
    def pipe_def():
        images = fn.external_source(source=_image, batch=False, layout="HWC")
        return make(m, images, fn, types)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipe_def().build()
    except Exception as e:  # noqa: BLE001
        # (function addresses in reprs differ; DALI puts its conversion's traceback first
        # and indents the message's lines)
        return " ".join(re.sub(r" at 0x[0-9a-f]+", "", str(e)).split())
    return None


_ERRORS = {
    "policy_name": lambda m, x, fn, t: m["auto_augment"].auto_augment(x, "cifar"),
    "reduced_with_shape": lambda m, x, fn, t: m["auto_augment"].auto_augment(
        x, "reduced_image_net", shape=(10, 10)),
    "abs_with_shape": lambda m, x, fn, t: m["auto_augment"].auto_augment(
        x, shape=(10, 10), max_translate_abs=3),
    "rel_without_shape": lambda m, x, fn, t: m["trivial_augment"].trivial_augment_wide(
        x, max_translate_rel=0.5),
    "use_shape_not_bool": lambda m, x, fn, t: m["auto_augment"].get_image_net_policy(
        use_shape=1),
    "rand_n": lambda m, x, fn, t: m["rand_augment"].rand_augment(x, n=-1, m=3),
    "rand_m": lambda m, x, fn, t: m["rand_augment"].rand_augment(x, n=2, m=31),
    "rand_m_float": lambda m, x, fn, t: m["rand_augment"].rand_augment(x, n=2, m=3.0),
    "rand_bins": lambda m, x, fn, t: m["rand_augment"].rand_augment(
        x, n=2, m=3, num_magnitude_bins=0),
    "rand_empty": lambda m, x, fn, t: m["rand_augment"].apply_rand_augment([], x, n=2, m=3),
    "rand_excluded": lambda m, x, fn, t: m["rand_augment"].rand_augment(
        x, n=1, m=3, excluded=["blur"]).name.startswith("Z"),
    "trivial_bins": lambda m, x, fn, t: m["trivial_augment"].trivial_augment_wide(
        x, num_magnitude_bins=-2),
    "trivial_empty": lambda m, x, fn, t: m["trivial_augment"].apply_trivial_augment([], x),
    "unused_kwarg": lambda m, x, fn, t: m["trivial_augment"].apply_trivial_augment(
        [m["augmentations"].invert, m["augmentations"].solarize], x, fill_value=3),
    "unused_kwargs": lambda m, x, fn, t: m["rand_augment"].apply_rand_augment(
        [m["augmentations"].invert], x, n=1, m=3, fill_value=3, shape=(1, 2)),
    "translate_needs_shape": lambda m, x, fn, t: m["rand_augment"].apply_rand_augment(
        [m["augmentations"].translate_x, m["augmentations"].invert], x, n=1, m=3),
    "aa_needs_shape": lambda m, x, fn, t: m["auto_augment"].apply_auto_augment(
        m["core"].Policy("t", 11, [[(m["augmentations"].translate_y, 0.5, 3)],
                                   [(m["augmentations"].invert, 0.5, None)]]), x),
    "empty_policy": lambda m, x, fn, t: m["auto_augment"].apply_auto_augment(
        m["core"].Policy("empty", 11, []), x),
    "policy_bins": lambda m, x, fn, t: m["core"].Policy("p", 0, []),
    "policy_not_list": lambda m, x, fn, t: m["core"].Policy("p", 11, "abc"),
    "policy_prob": lambda m, x, fn, t: m["core"].Policy(
        "p", 11, [[(m["augmentations"].rotate, 1.5, 3)]]),
    "policy_magnitude": lambda m, x, fn, t: m["core"].Policy(
        "p", 11, [[(m["augmentations"].rotate, 0.5, 11)]]),
    "policy_magnitude_none": lambda m, x, fn, t: m["core"].Policy(
        "p", 11, [[(m["augmentations"].rotate, 0.5, None)]]),
    "policy_triple": lambda m, x, fn, t: m["core"].Policy(
        "p", 11, [[(m["augmentations"].rotate, 0.5)]]),
    "policy_sub_not_list": lambda m, x, fn, t: m["core"].Policy("p", 11, [5]),
    "missing_bins": lambda m, x, fn, t: m["augmentations"].posterize(x, magnitude_bin=2),
    "missing_bin": lambda m, x, fn, t: m["augmentations"].posterize(x, num_magnitude_bins=5),
    "solarize_add_shift": lambda m, x, fn, t: m["augmentations"].solarize_add.augmentation(
        (0, 200))(x, magnitude_bin=10, num_magnitude_bins=11),
    "custom_magnitudes_len": lambda m, x, fn, t: m["augmentations"].posterize.augmentation(
        np.array([1, 2, 3]))(x, magnitude_bin=1, num_magnitude_bins=5),
    "signed_bin_float": lambda m, x, fn, t: m["core"].signed_bin(1.5),
}


@pytest.mark.parametrize("case", sorted(_ERRORS))
def test_errors_say_what_dalis_say(case):
    ours, theirs = _error("stoker", _ERRORS[case]), _error("dali", _ERRORS[case])
    assert theirs is not None and ours is not None, (ours, theirs)
    assert theirs.endswith(ours) and ours, (ours, theirs)
