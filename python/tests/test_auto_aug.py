"""stoker.auto_aug on its own (DALI's nvidia.dali.auto_aug; compared with DALI in
parity/test_parity_auto_aug.py): the random choices follow the policies — each sub-policy,
stage and augmentation picked with the policy's frequency, magnitudes negated for half of the
samples, RandAugment's n draws independent, TrivialAugment's bins uniform — observed with marker
augmentations that record what ran; plus the errors stoker adds."""

import numpy as np
import pytest

import stoker
from stoker import fn, types
from stoker.auto_aug import augmentations as a
from stoker.auto_aug import auto_augment, rand_augment, trivial_augment
from stoker.auto_aug.core import Policy, augmentation, select, signed_bin

BATCH = 256
ITERATIONS = 8


def _zeros(info):
    return np.zeros((), np.int32)


def _run(define, batch=BATCH, iterations=ITERATIONS, seed=17):
    @stoker.pipeline_def(batch_size=batch, num_threads=2, device_id=None, seed=seed,
                         enable_conditionals=True)
    def pipe_def():
        return define()

    pipe = pipe_def()
    pipe.build()
    out = []
    for _ in range(iterations):
        (res,) = pipe.run()
        out += [np.array(res.at(i)) for i in range(batch)]
    return np.array(out)


def _marker(k, name=None):
    """An augmentation recording that it ran: data * 100 + k (k < 100)."""
    def mark(data, _):
        return data * 100 + k
    return augmentation(mark, name=name or f"m{k}")


def _check_frequency(observed, expected_p, n, what):
    """|observed - n p| within 5 standard deviations (binomial)."""
    sd = np.sqrt(n * expected_p * (1 - expected_p)) + 1e-9
    assert abs(observed - n * expected_p) <= 5 * sd + 1, \
        f"{what}: {observed} of {n}, expected {n * expected_p:.1f}"


def test_trivial_augment_picks_augmentations_and_bins_uniformly():
    augs = [_marker(k) for k in range(1, 6)]
    recorder = augmentation(lambda data, m: data * 0 + m, mag_range=(0, 30), name="bin")

    out = _run(lambda: trivial_augment.apply_trivial_augment(
        augs, fn.external_source(source=_zeros, batch=False)))
    n = len(out)
    for k in range(1, 6):
        _check_frequency(np.sum(out == k), 1 / 5, n, f"augmentation {k}")
    bins = _run(lambda: trivial_augment.apply_trivial_augment(
        [recorder], fn.external_source(source=_zeros, batch=False), num_magnitude_bins=31))
    counts = np.bincount(bins.astype(int), minlength=31)
    assert len(counts) == 31
    for b in range(31):
        _check_frequency(counts[b], 1 / 31, len(bins), f"bin {b}")


def test_magnitudes_are_negated_for_half_of_the_samples():
    signed = augmentation(lambda data, m: data * 0 + m, mag_range=(1, 1), randomly_negate=True,
                          name="signed")
    out = _run(lambda: rand_augment.apply_rand_augment(
        [signed], fn.external_source(source=_zeros, batch=False), n=1, m=3,
        num_magnitude_bins=5))
    assert set(np.unique(out)) == {-1, 1}
    _check_frequency(np.sum(out < 0), 0.5, len(out), "negated")


def test_rand_augment_applies_n_independent_draws():
    augs = [_marker(k) for k in range(1, 4)]
    out = _run(lambda: rand_augment.apply_rand_augment(
        augs, fn.external_source(source=_zeros, batch=False), n=3, m=0))
    digits = np.stack([out // 10000 % 100, out // 100 % 100, out % 100], -1)
    assert digits.min() >= 1 and digits.max() <= 3
    for level in range(3):
        for k in range(1, 4):
            _check_frequency(np.sum(digits[:, level] == k), 1 / 3, len(out), f"{level}:{k}")
    # independence: every one of the 27 sequences turns up about 1/27 of the time
    seqs = np.bincount(((digits - 1) * [9, 3, 1]).sum(-1), minlength=27)
    for s in range(27):
        _check_frequency(seqs[s], 1 / 27, len(out), f"sequence {s}")


def test_auto_augment_follows_the_image_net_policys_probabilities():
    """The real ImageNet policy's structure, each augmentation replaced by a marker of the same
    name: each (stage, augmentation) turns up with the policy's frequency."""
    policy = auto_augment.get_image_net_policy()
    ids = {name: k for k, name in enumerate(sorted(policy.augmentations), start=1)}
    markers = {name: _marker(k, name) for name, k in ids.items()}
    marked = Policy("marked", policy.num_magnitude_bins, [
        [(markers[aug.name], p, None) for aug, p, mag in sub] for sub in policy.sub_policies])
    out = _run(lambda: auto_augment.apply_auto_augment(
        marked, fn.external_source(source=_zeros, batch=False)))
    n = len(out)
    expected = {}
    for sub in policy.sub_policies:
        # what a sample of this sub-policy ends with: stages run independently
        outcomes = {(): 1.0}
        for aug, p, _ in sub:
            nxt = {}
            for seq, q in outcomes.items():
                nxt[seq + (ids[aug.name],)] = nxt.get(seq + (ids[aug.name],), 0) + q * p
                nxt[seq] = nxt.get(seq, 0) + q * (1 - p)
            outcomes = nxt
        for seq, q in outcomes.items():
            value = 0
            for k in seq:
                value = value * 100 + k
            expected[value] = expected.get(value, 0) + q / len(policy.sub_policies)
    values, counts = np.unique(out, return_counts=True)
    assert set(values) <= set(expected)
    for value, p in expected.items():
        got = counts[values == value].sum()
        _check_frequency(got, p, n, f"outcome {value}")


def test_auto_augment_magnitude_bins_reach_the_augmentations():
    # (the magnitudes are float32; the samples skipping a stage keep int32)
    recorder = augmentation(lambda data, m: data + fn.cast(m, dtype=types.INT32),
                            mag_range=(0, 10), name="bin")
    other = augmentation(lambda data, m: data + 100 + fn.cast(m, dtype=types.INT32),
                         mag_range=(0, 10), randomly_negate=True, name="neg")
    policy = Policy("bins", 11, [[(recorder, 1.0, 3)], [(recorder, 1.0, 7)],
                                 [(other, 1.0, 5)]])
    out = _run(lambda: auto_augment.apply_auto_augment(
        policy, fn.external_source(source=_zeros, batch=False)), iterations=2)
    values = set(np.unique(out).tolist())
    assert values == {3, 7, 105, 95}


def test_select_applies_the_indexed_augmentation():
    augs = [_marker(k) for k in range(1, 8)]

    def define():
        x = fn.external_source(source=_zeros, batch=False)
        idx = fn.external_source(source=lambda info: np.array(info.idx_in_batch % 7, np.int32),
                                 batch=False)
        return select(augs, idx, x, magnitude_bin=None)

    out = _run(define, batch=14, iterations=1)
    assert out.tolist() == [k % 7 + 1 for k in range(14)]


def test_signed_bin_indexing_and_properties():
    def define():
        bins = types.Constant(np.array([1, 2, 3], np.int32))
        sb = signed_bin(bins, shape=(3,))
        return sb[1].signed_magnitude_idx - 2 * sb[1].bin - sb[1].random_sign

    assert np.all(_run(define, batch=4, iterations=1) == 0)


def test_augmentation_settings_and_repr():
    rotate = a.rotate.augmentation(mag_range=(0, 45), name="rot")
    assert (rotate.mag_range, rotate.randomly_negate, rotate.name) == ((0, 45), True, "rot")
    assert rotate.op is a.rotate.op and a.rotate.mag_range == (0, 30)
    assert "mag_range=(0, 45)" in repr(rotate) and "randomly_negate=True" in repr(rotate)
    assert a.translate_x_no_shape.name == "translate_x"
    assert a.invert.mag_range is None and a.invert.param_device == "cpu"
    assert a.sharpness.param_device == "auto"
    policy = auto_augment.get_image_net_policy()
    assert "ImageNetPolicy" in repr(policy) and len(policy.sub_policies) == 25
    assert sorted(policy.augmentations) == [
        "auto_contrast", "color", "equalize", "invert", "posterize", "rotate", "shear_x",
        "shear_y", "solarize", "solarize_add", "translate_y"]


def test_same_names_are_made_unique_in_a_policy():
    r1 = a.rotate.augmentation((0, 10))
    r2 = a.rotate.augmentation((0, 20))
    policy = Policy("twice", 11, [[(r1, 0.5, 1), (r2, 0.5, 2)], [(a.invert, 1.0, None)]])
    assert [aug.name for aug, _, _ in policy.sub_policies[0]] == ["0__rotate", "1__rotate"]
    assert policy.sub_policies[1][0][0].name == "2__invert"


def test_policy_warnings():
    with pytest.warns(UserWarning, match="probability 0"):
        Policy("w", 11, [[(a.rotate, 0, 3)]])
    with pytest.warns(UserWarning, match="will be ignored"):
        Policy("w", 11, [[(a.invert, 0.5, 3)]])


def test_unsigned_bin_for_negated_augmentation_warns():
    def define():
        x = fn.external_source(source=lambda info: np.full((4, 4, 3), 9, np.uint8),
                               batch=False, layout="HWC")
        return a.rotate(x, magnitude_bin=3, num_magnitude_bins=11)

    with pytest.warns(Warning, match="random_negate=True"):
        _run(define, batch=2, iterations=1)


def test_select_without_conditionals_says_what_to_do():
    @stoker.pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe_def():
        x = fn.external_source(source=lambda info: np.full((4, 4, 3), 9, np.uint8), batch=False,
                               layout="HWC")
        return trivial_augment.trivial_augment_wide(x)

    with pytest.raises(TypeError, match=r"enable_conditionals=True"):
        pipe_def().build()


@pytest.mark.parametrize("bad, message", [
    (lambda: augmentation(5), "is not callable"),
    (lambda: augmentation(a.rotate), "already decorated Augmentation"),
    (lambda: augmentation(lambda data: data), "must accept at least two"),
    (lambda: signed_bin(1.5), "must be an int or _DataNode"),
    (lambda: a.solarize_add_shift(128), "accepts shifts from 0 to 128"),
    (lambda: auto_augment.get_image_net_policy(use_shape="yes"), "`use_shape` is a flag"),
    (lambda: rand_augment.get_rand_augment_suite(max_translate_rel=0.2),
     "cannot be used without image shapes"),
    (lambda: Policy("p", 11, [[(lambda x, y: x, 0.5, 1)]]),
     "Did you forget to use `@augmentation`"),
])
def test_errors_outside_pipelines(bad, message):
    with pytest.raises(Exception, match=message):
        bad()


def test_mag_to_param_must_not_use_operators():
    bad = a.brightness.augmentation(mag_to_param=lambda m: fn.random.uniform(range=[0, m]))

    @stoker.pipeline_def(batch_size=2, num_threads=1, device_id=None, enable_conditionals=True)
    def pipe_def():
        x = fn.external_source(source=lambda info: np.full((4, 4, 3), 9, np.uint8), batch=False,
                               layout="HWC")
        return bad(x, magnitude_bin=signed_bin(2), num_magnitude_bins=5)

    with pytest.raises(Exception, match="returned `DataNode`"):
        pipe_def().build()


def test_mag_to_param_outputs_must_agree():
    bad = a.posterize.augmentation(mag_to_param=lambda m: np.zeros(int(m) + 1, np.uint8))

    @stoker.pipeline_def(batch_size=2, num_threads=1, device_id=None, enable_conditionals=True)
    def pipe_def():
        x = fn.external_source(source=lambda info: np.full((4, 4, 3), 9, np.uint8), batch=False,
                               layout="HWC")
        bins = fn.external_source(source=lambda info: np.array(1, np.int32), batch=False)
        return bad(x, magnitude_bin=bins, num_magnitude_bins=5)

    with pytest.raises(Exception, match="same type and shape"):
        pipe_def().build()
