# DALI's random number operators, as their operator documentation describes them
# (fn.random.uniform, normal, coin_flip, choice and beta: "range" and "values", "mean" and
# "stddev", "probability", a list with "p" or an int, "alpha" and "beta", with "shape", "dtype"
# or the shape_like input), and the batch operators fn.batch_permutation and fn.permute_batch
# ("out_tensor[i] = in_tensor[indices[i]]"). Written for nvidia.dali.
#
# Random streams differ between implementations, so every distribution draws 8 x 4000 values
# and is compared by its moments; what holds whatever the stream (every draw within range, the
# set of values drawn and their frequencies, dtypes, permutations being permutations) is
# computed here and compared exactly. (DALI's uniform, normal and coin_flip also run with
# device="gpu"; the GPU branch here is permute_batch's, on GPU data.)
import os

import numpy as np

from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn
import nvidia.dali.types as types

device_id = int(os.environ["DROPIN_DEVICE_ID"]) if os.environ.get("DROPIN_DEVICE_ID") else None
batch_size = 8
N = 4000  # draws per sample: 32000 per distribution
RESULTS, COMPARE = {}, {}

# ("moments", rtol) compares the means and the standard deviations within rtol x DALI's
# standard deviation. With n = 32000 draws on each side, the difference of the two means has
# a standard error of sqrt(2 / n) = 0.0079 standard deviations, so 0.05 is 6.3 sigma (the
# standard deviations' difference: 0.0056 sd for normal data, 9 sigma): no chance failure,
# while a wrong range, stddev or probability moves the mean or spread by 0.1 sd or more.
RTOL = 0.05
# Frequencies of discrete values: the difference of two frequencies near 0.4 has a standard
# error of sqrt(2 * 0.24 / n) = 0.0039, so 0.025 is 6.4 sigma; a wrong `p` moves one by 0.1.
FREQ_ATOL = 0.025


@pipeline_def(batch_size=batch_size, num_threads=2, device_id=device_id, seed=1234)
def distributions():
    like = fn.external_source(source=lambda: [np.zeros((3, 4), np.uint8)] * batch_size,
                              batch=True, layout="HW")
    return (fn.random.uniform(range=[-2.0, 3.0], shape=N),
            fn.random.uniform(values=[0.5, 1.5, 4.0], shape=N),
            fn.random.uniform(range=[0, 10], shape=N, dtype=types.INT32),
            fn.random.uniform(range=[0.0, 1.0], shape=[N // 4, 4], dtype=types.FLOAT64),
            fn.random.normal(mean=5.0, stddev=2.0, shape=N),
            fn.random.normal(shape=N, dtype=types.FLOAT64),
            fn.random.normal(mean=0.0, stddev=20.0, shape=N, dtype=types.INT16),
            fn.random.coin_flip(probability=0.3, shape=N),
            fn.random.coin_flip(probability=0.8, shape=N, dtype=types.BOOL),
            fn.random.choice([1, 2, 4, 8], p=[0.1, 0.2, 0.3, 0.4], shape=N),
            fn.random.choice(5, shape=N),
            fn.random.beta(alpha=2.0, beta=5.0, shape=N),
            fn.random.beta(alpha=0.5, beta=0.5, shape=N, dtype=types.FLOAT64),
            # one value per sample (no shape), and the shape of an input (shape_like)
            fn.random.coin_flip(),
            fn.random.uniform(range=[0.0, 1.0]),
            fn.random.normal(like),
            fn.random.beta(like, alpha=3.0))


NAMES = ["uniform", "uniform_values", "uniform_int", "uniform_f64", "normal", "normal_f64",
         "normal_int", "coin_flip", "coin_flip_bool", "choice_list", "choice_int", "beta",
         "beta_small", "coin_flip_scalar", "uniform_scalar", "normal_like", "beta_like"]
# the values each discrete distribution can take
DISCRETE = {"uniform_values": [0.5, 1.5, 4.0], "uniform_int": list(range(11)),
            "coin_flip": [0, 1], "coin_flip_bool": [False, True], "choice_list": [1, 2, 4, 8],
            "choice_int": [0, 1, 2, 3, 4]}


def samples(batch):
    return [np.array(batch.as_cpu().at(i)) for i in range(batch_size)]


pipe = distributions()
pipe.build()
draws = {name: samples(b) for name, b in zip(NAMES, pipe.run())}
for name in NAMES[:13]:
    values = np.stack(draws[name])
    RESULTS[name] = values
    COMPARE[name] = ("moments", RTOL)
    RESULTS[name + "_dtype"] = str(values.dtype)
    if name in DISCRETE:
        RESULTS[name + "_set"] = np.unique(values).tolist()  # all of them appear
        RESULTS[name + "_freq"] = np.array([np.mean(values == v) for v in DISCRETE[name]])
        COMPARE[name + "_freq"] = ("tolerance", FREQ_ATOL)
RESULTS["uniform_in_range"] = bool(np.all((RESULTS["uniform"] >= -2) & (RESULTS["uniform"] < 3)))
RESULTS["uniform_f64_in_range"] = bool(np.all((RESULTS["uniform_f64"] >= 0)
                                              & (RESULTS["uniform_f64"] < 1)))
RESULTS["beta_in_range"] = bool(np.all((RESULTS["beta"] >= 0) & (RESULTS["beta"] <= 1)))
RESULTS["beta_small_in_range"] = bool(np.all((RESULTS["beta_small"] >= 0)
                                             & (RESULTS["beta_small"] <= 1)))
for name in NAMES[13:]:  # one draw per sample, or a few: their type and shape
    RESULTS[name] = draws[name]
    COMPARE[name] = "shape"
RESULTS["scalar_in_range"] = [bool(0 <= v < 1) for v in draws["uniform_scalar"]] + \
    [int(v) in (0, 1) for v in draws["coin_flip_scalar"]]


# batch_permutation: a random permutation of the sample indices per iteration (or, with
# no_fixed_points, one moving every sample; with allow_repetitions, any indices), used by
# permute_batch to reorder the batch; permute_batch with fixed indices is exact.
def sample_data():
    return [np.full((2, 3), 10 * k, np.int32) + np.arange(6, dtype=np.int32).reshape(2, 3)
            for k in range(batch_size)]


@pipeline_def(batch_size=batch_size, num_threads=2, device_id=device_id, seed=99)
def permutations():
    data = fn.external_source(source=sample_data, batch=True, layout="AB")
    if device_id is not None:
        data = data.gpu()
    perm = fn.batch_permutation()
    derangement = fn.batch_permutation(no_fixed_points=True)
    repeats = fn.batch_permutation(allow_repetitions=True)
    shuffled = fn.permute_batch(data, indices=perm)
    fixed = fn.permute_batch(data, indices=[7, 0, 0, 3, 5, 6, 1, 2])
    return perm, derangement, repeats, shuffled, fixed


pipe = permutations()
pipe.build()
data = sample_data()
for it in range(3):
    perm_samples, derangement, repeats, shuffled, fixed = [samples(b) for b in pipe.run()]
    RESULTS[f"perm_{it}"] = perm_samples  # int32 scalars, drawn
    COMPARE[f"perm_{it}"] = "shape"
    perm = [int(p) for p in perm_samples]
    derangement = [int(p) for p in derangement]
    RESULTS[f"perm_sorted_{it}"] = sorted(perm)  # == list(range(batch_size))
    RESULTS[f"derangement_sorted_{it}"] = sorted(derangement)
    RESULTS[f"derangement_fixed_points_{it}"] = sum(p == i for i, p in enumerate(derangement))
    RESULTS[f"repeats_in_range_{it}"] = all(0 <= int(p) < batch_size for p in repeats)
    RESULTS[f"shuffled_is_permuted_{it}"] = all(
        np.array_equal(shuffled[i], data[perm[i]]) for i in range(batch_size))
    RESULTS[f"fixed_{it}"] = fixed
