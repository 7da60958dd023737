"""Conditionals (pipeline_def(enable_conditionals=True)): `if`/`elif`/`else`, `and`, `or`,
`not` and `x if c else y` on pipeline values run per sample; every result is checked against
the same rule computed sample by sample in numpy, and every refusal asserts its message
(against DALI: parity/test_parity_conditionals.py)."""

import os

import numpy as np
import pytest

import stoker
from stoker import fn, rewrite, types
from stoker.pipeline import Pipeline, do_not_convert

BATCH = 6


def index(info):
    return np.array(info.idx_in_batch, np.int32)


def image(info):
    i = info.idx_in_batch
    return (np.arange(4 * (i + 2) * 3) % 251).astype(np.uint8).reshape(4, i + 2, 3)


def run(body, batch_size=BATCH, **kwargs):
    @stoker.pipeline_def(enable_conditionals=True, batch_size=batch_size, num_threads=2, seed=5,
                         **kwargs)
    def p():
        x = fn.external_source(source=index, batch=False)
        return body(x)
    outs = p().run()
    return [[np.array(b.at(i)) for i in range(len(b))] for b in outs]


def values(out):
    return [v.item() for v in out]


def test_if_else_runs_each_branch_on_its_samples():
    def body(x):
        if x % 2 == 0:
            y = x * 10
        else:
            y = x + 100
        return y
    assert values(run(body)[0]) == [0, 101, 20, 103, 40, 105]


def nested_elif(x):
    z = x + 1
    if x == 0:
        y = x + 100
    elif x < 3:
        if x == 1:
            y = z * 2
        else:
            y = z * 3
    else:
        y = x
    return y, z


def test_elif_chains_nested_ifs_and_an_unchanged_variable():
    y, z = run(nested_elif)
    assert values(y) == [100, 4, 9, 3, 4, 5]
    assert values(z) == [1, 2, 3, 4, 5, 6]


def test_return_in_both_branches_and_early_return():
    def both(x):
        if x > 2:
            return x * 10
        else:
            return x

    def early(x):
        if x > 2:
            return x * 10, x
        return x, x * 2
    assert values(run(both)[0]) == [0, 1, 2, 30, 40, 50]
    a, b = run(early)
    assert values(a) == [0, 1, 2, 30, 40, 50]
    assert values(b) == [0, 2, 4, 3, 4, 5]


def test_logical_operators_and_conditional_expression():
    def body(x):
        a, b, c = x > 1, x < 4, x == 5
        if a and not b or c:
            y = x * 10
        else:
            y = x
        return y, a and b, a or c, not a, (x * 2 if b else x - 1)
    y, conj, disj, neg, ternary = run(body)
    assert values(y) == [0, 1, 2, 3, 40, 50]
    assert values(conj) == [False, False, True, True, False, False]
    assert values(disj) == [False, False, True, True, True, True]
    assert values(neg) == [True, True, False, False, False, False]
    assert values(ternary) == [0, 2, 4, 6, 3, 4]
    assert neg[0].dtype == np.bool_


def test_right_side_of_and_runs_only_where_needed():
    # The right side reads sample 0's value as a divisor: evaluated there, it would fail.
    def body(x):
        ok = x > 0
        return ok and (100 // x > 30)
    assert values(run(body)[0]) == [False, True, True, True, False, False]


def test_python_values_merge_as_constants_or_stay_python():
    def body(x):
        if x > 2:
            y, n, label = 5, 1, "same"
        else:
            y, n, label = 7, 1, "same"
        assert n == 1 and label == "same"  # equal in both branches: still Python values
        return y
    out = run(body)[0]
    assert values(out) == [7, 7, 7, 5, 5, 5]
    assert out[0].dtype == np.int32


def test_operators_without_inputs_in_a_branch_run_for_the_whole_batch():
    def body(x):
        r = fn.random.uniform(range=[0, 1])
        if x > 2:
            y = fn.random.uniform(range=[10, 11])
            p = fn.random.coin_flip(probability=x * 0.0 + 1.0)  # a per-sample argument
        else:
            y = r
            p = fn.random.coin_flip(probability=0.0)
        return y, p, r
    y, p, r = run(body)
    assert all(10 <= v < 11 for v in values(y)[3:])
    assert values(y)[:3] == values(r)[:3]
    assert values(p) == [0, 0, 0, 1, 1, 1]


def test_images_flipped_where_the_coin_says():
    @stoker.pipeline_def(enable_conditionals=True, batch_size=BATCH, num_threads=2, seed=9)
    def p():
        img = fn.external_source(source=image, batch=False, layout="HWC")
        flip = fn.random.coin_flip(probability=0.5, dtype=types.BOOL)
        if flip:
            out = fn.flip(img, horizontal=1)
        else:
            out = img
        return fn.resize(out, size=(8, 8), antialias=False), flip, img
    outs = [[np.array(b.at(i)) for i in range(len(b))] for b in p().run()]
    resized, flips, images = outs
    assert len(set(values(flips))) == 2  # both branches ran (seed 9)
    for i in range(BATCH):
        src = images[i][:, ::-1] if flips[i] else images[i]
        ref = _resize_like(src)
        np.testing.assert_array_equal(resized[i], ref)


def _resize_like(img):
    @stoker.pipeline_def(batch_size=1, num_threads=1)
    def p():
        x = fn.external_source(source=lambda: [img], layout="HWC")
        return fn.resize(x, size=(8, 8), antialias=False)
    return np.array(p().run()[0].at(0))


def test_helpers_methods_and_closures_are_converted():
    scale = 3

    def helper(v):
        if v > 2:
            return v * scale
        return v

    class Aug:
        def apply(self, v):
            if v < 2:
                v = v + 1000
            return helper(v)

    def method(x):
        return Aug().apply(x)

    class Callable:
        def __call__(self, v):
            if v > 3:
                v = -v
            return v

    assert values(run(method)[0]) == [3000, 3003, 2, 9, 12, 15]
    assert values(run(Callable())[0]) == [0, 1, 2, 3, -4, -5]
    assert values(run(helper)[0]) == [0, 1, 2, 9, 12, 15]


def test_lambdas_and_defaults():
    local = 5

    def helper(v, k=local):  # its default is the function's own, not evaluated again
        if v > 1:
            return v * k
        return v

    assert values(run(lambda x: helper(x) if x > 2 else -x)[0]) == [0, -1, -2, 15, 20, 25]
    assert values(run(lambda x, k=3: not (x > k), batch_size=5)[0]) == [True] * 4 + [False]


def test_a_pipeline_subclass_with_enable_conditionals():
    class Pipe(Pipeline):
        def __init__(self):
            super().__init__(batch_size=4, num_threads=1, enable_conditionals=True)
            self.src = fn.external_source  # noqa: the class API may call fn too

        def define_graph(self):
            x = self.src(source=index, batch=False)
            if x >= 2:
                x = x - 10
            return super().define_graph() if False else x

    pipe = Pipe()
    pipe.build()
    assert [np.array(pipe.run()[0].at(i)).item() for i in range(4)] == [0, 1, -8, -7]


def test_do_not_convert_and_pipeline_values_elsewhere_are_refused():
    @do_not_convert
    def plain(v):
        if v > 1:
            return v
        return v

    def calls_plain(x):
        return plain(x)

    with pytest.raises(TypeError, match=r"a DataNode has no truth value .*enable_conditionals"):
        run(calls_plain)

    with pytest.raises(TypeError, match="`while`, `assert`"):
        def loop(x):
            while x > 5:
                x = x - 1
            return x
        run(loop)
    with pytest.raises(ValueError, match="a pipeline definition cannot be @do_not_convert"):
        stoker.pipeline_def(do_not_convert(lambda: None))


def test_errors_name_the_problem():
    def only_one(x):
        if x > 1:
            y = x
        return y
    with pytest.raises(RuntimeError, match="variable 'y' is set in only one branch of an `if` on "
                                           "a pipeline value; set it in the `else` branch too"):
        run(only_one)

    def structure(x):
        if x > 1:
            y = (x, x)
        else:
            y = x
        return y
    with pytest.raises(ValueError, match=r"variable 'y' has a different structure .*\(\*, \*\) "
                                         r"and \*"):
        run(structure)

    def strings(x):
        name = "a" if x > 1 else "b"
        return x if name else x
    with pytest.raises(TypeError, match="the return value is 'a' in the `if` branch and 'b'"):
        run(strings)

    def breaks(x):
        for _ in range(2):
            if x > 1:
                break
        return x
    with pytest.raises(TypeError, match="an `if` on a pipeline value cannot have "
                                        "break/continue/yield"):
        run(breaks)

    def partial_return(x):
        if x > 2:
            if x > 3:
                return x
        return x
    with pytest.raises(TypeError, match="an `if` on a pipeline value cannot have a return in "
                                        "only some of its paths"):
        run(partial_return)

    def types_differ(x):
        if x > 1:
            y = fn.cast(x, dtype=types.FLOAT)
        else:
            y = x
        return y
    with pytest.raises(ValueError, match=r"_conditional.merge .*type float32 in the `if` branch, "
                                         r"int32 in the `else` branch"):
        run(types_differ)

    def vector(x):
        v = fn.stack(x, x)
        if v:
            v = v + 1
        return v
    with pytest.raises(ValueError, match=r"the condition of an `if` statement must be a scalar "
                                         r"\(0-d tensor\) per sample; sample 0 .* shape \(2,\)"):
        run(vector)

    def logical_int(x):
        return (x > 1) and x
    with pytest.raises(ValueError, match="the right side of `and` must be of type bool; got "
                                         "int32"):
        run(logical_int)

    def leaks(x):
        kept = []
        if x > 1:
            kept.append(x + 1)
            y = x
        else:
            y = x
        return kept[0]
    with pytest.raises(ValueError, match="an expression computed in one branch of an `if` on a "
                                         "pipeline value is used outside that branch"):
        run(leaks)

    def leaks_node(x):
        kept = []
        if x > 1:
            kept.append(fn.cast(x, dtype=types.FLOAT))
            y = x
        else:
            y = x
        return kept[0] + 1
    with pytest.raises(ValueError, match=r"was computed in a branch of an `if` .*assign it to "
                                         r"a variable in both branches"):
        run(leaks_node)


def test_on_error_skip_refuses_replacing_after_a_split():
    @stoker.pipeline_def(enable_conditionals=True, batch_size=4, num_threads=1, seed=1,
                         on_error="skip")
    def p():
        x = fn.random.uniform(range=[0, 10])
        if x > 5:
            y = fn.decoders.image(fn.cast(x, dtype=types.UINT8))  # not encoded data: fails
        else:
            y = fn.decoders.image(fn.cast(x, dtype=types.UINT8))
        return y
    with pytest.raises(ValueError, match="on_error='skip' cannot replace samples in a pipeline "
                                         "whose `if` on pipeline values comes before"):
        p().run()


def test_serialized_conditional_pipeline_runs_the_same():
    @stoker.pipeline_def(enable_conditionals=True, batch_size=4, num_threads=1, seed=2)
    def p():
        x = fn.random.uniform(range=[0, 10])
        if x > 5:
            x = x * -1.0
        return x
    pipe = p()
    first = [np.array(pipe.run()[0].at(i)).item() for i in range(4)]
    again = Pipeline.deserialize(pipe.serialize(), batch_size=4, num_threads=1, seed=2)
    assert [np.array(again.run()[0].at(i)).item() for i in range(4)] == first
    assert all((v < 0) == (abs(v) > 5) for v in first)


def test_types_constant():
    @stoker.pipeline_def(batch_size=2, num_threads=1)
    def p():
        return (types.Constant(3), types.Constant([1.5, 2.5]),
                types.Constant(np.arange(6, dtype=np.uint16).reshape(2, 3), layout="HW"),
                types.Constant(1, dtype=types.INT64, shape=(2, 2)))
    a, b, c, d = p().run()
    assert np.array(a.at(1)).dtype == np.int32 and np.array(a.at(1)).shape == ()
    np.testing.assert_array_equal(np.array(b.at(0)), np.float32([1.5, 2.5]))
    assert c.layout() == "HW" and np.array(c.at(0)).dtype == np.uint16
    np.testing.assert_array_equal(np.array(d.at(0)), np.ones((2, 2), np.int64))
    with pytest.raises(RuntimeError, match="outside a pipeline definition"):
        types.Constant(1)


def test_debug_mode_runs_the_branches_eagerly_with_the_same_results():
    def nested(x):
        y, z = nested_elif(x)
        if x > 100:  # a branch no sample takes
            w = x * 2
        else:
            w = x
        return y, z, w, (x > 1) and (x < 4), not (x > 2), 7 if x > 3 else 5

    def images(x):
        img = fn.external_source(source=image, batch=False, layout="HWC")
        if x % 2 == 0:
            img = fn.flip(img, horizontal=1)
        return fn.resize(img, size=(6, 6), antialias=False)

    for body in (nested, images):
        built = run(body)
        debugged = run(body, debug=True)
        for a, b in zip(built, debugged):
            for x, y in zip(a, b):
                np.testing.assert_array_equal(x, y)

    seen = []

    @stoker.pipeline_def(enable_conditionals=True, debug=True, batch_size=4, num_threads=1)
    def p():
        x = fn.external_source(source=index, batch=False)
        if x > 1:
            y = fn.cast(x * 10, dtype=types.INT32)
            seen.append(repr(y))  # printable, as in any debug pipeline: the branch's samples
        else:
            y = x
        return y
    pipe = p()
    for _ in range(2):
        assert [np.array(s).item() for s in pipe.run()[0]] == [0, 1, 20, 30]
    assert "2 samples" in seen[0]


# -- the rewrite keeps Python's meaning for Python conditions ---------------------------------

def _python_cases(n, flag=True):
    out = []
    total = 0
    for i in range(n):
        if i % 3 == 0:
            continue
        elif i > 7:
            break
        if flag and i % 2 or not flag:
            total += i
        else:
            total -= 1
        out.append(total if i > 2 else -total)
    if (m := len(out)) > 3:
        label = "many"
    else:
        label = "few"
    try:
        if n < 0:
            raise ValueError("negative")
        extra = [v for v in out if v > 0 and v % 2]
    except ValueError:
        extra = None
    return out, label, m, extra, (1 if n else 2), not out, flag and n, flag or n


def _early(n):
    if n > 5:
        if n > 8:
            return "big"
        return "medium"
    x = n * 2
    if x > 4:
        return "small"
    return "tiny"


def test_rewrite_keeps_python_semantics():
    for func in (_python_cases, _early):
        converted = rewrite.convert(func)
        assert converted is not func and converted._stoker_converted
        for n in range(-1, 12):
            assert converted(n) == func(n), (func.__name__, n)
        assert rewrite.convert(_python_cases)(9, flag=False) == _python_cases(9, flag=False)


def test_rewrite_leaves_unreadable_functions_alone():
    namespace = {}
    exec("def f(x):\n    return 1 if x else 2\n", namespace)
    assert rewrite.convert(namespace["f"]) is namespace["f"]
    with pytest.raises(ValueError, match="cannot be read"):
        rewrite.convert(namespace["f"], strict=True)


@pytest.mark.skipif(not stoker._stoker.cuda_available(), reason="no GPU: GPU branches skipped")
def test_gpu_values_split_and_merge_like_the_cpu():
    def body(device, debug=False):
        @stoker.pipeline_def(enable_conditionals=True, batch_size=BATCH, num_threads=2, seed=4,
                             device_id=0, debug=debug)
        def p():
            img = fn.external_source(source=image, batch=False, layout="HWC")
            img = img.gpu() if device == "gpu" else img
            flip = fn.external_source(source=lambda i: np.array(i.idx_in_batch % 3 == 0),
                                      batch=False)
            if flip:
                img = fn.flip(img, horizontal=1)
            elif fn.random.coin_flip(dtype=types.BOOL):
                img = fn.cast(255 - img, dtype=types.UINT8)
            return img
        out = p().run()[0]
        out = out.as_cpu() if device == "gpu" else out
        return [np.array(out.at(i)) for i in range(BATCH)]
    for a, b in zip(body("cpu"), body("gpu")):
        np.testing.assert_array_equal(a, b)
    # Debug mode on the GPU: the deterministic branch (the flip) as the built pipeline has it.
    for i, (a, b) in enumerate(zip(body("gpu"), body("gpu", debug=True))):
        if i % 3 == 0:
            np.testing.assert_array_equal(a, b)


def test_dali_conditionals_tutorial_rotate_pipe(shared_data):
    """DALI's "Conditional execution" tutorial, its pipeline as printed (file_root and
    device_id changed): images rotated with probability 0.25, the others untouched."""
    root = os.path.join(shared_data, "photos")
    gpu = stoker._stoker.cuda_available()

    @stoker.pipeline_def(enable_conditionals=True, batch_size=4, num_threads=4,
                         device_id=0 if gpu else None, seed=42)
    def rotate_pipe():
        jpegs, _ = fn.readers.file(device="cpu", file_root=root)
        images = fn.decoders.image(jpegs, device="mixed" if gpu else "cpu")
        do_rotate = fn.random.coin_flip(probability=0.25, dtype=types.DALIDataType.BOOL)
        angle = fn.random.uniform(range=(10, 30))

        if do_rotate:
            result = fn.rotate(images, angle=angle, fill_value=0)
        else:
            result = images

        resized = fn.resize(result, resize_x=400, resize_y=400)
        return resized, do_rotate, fn.resize(images, resize_x=400, resize_y=400)

    pipe = rotate_pipe()
    rotated = 0
    for _ in range(4):
        out, flags, plain = pipe.run()
        if gpu:
            out, plain = out.as_cpu(), plain.as_cpu()
        for i in range(4):
            a, b = np.array(out.at(i)), np.array(plain.at(i))
            assert a.shape == (400, 400, 3)
            if np.array(flags.at(i)):
                rotated += 1
                assert not np.array_equal(a, b)
            else:
                np.testing.assert_array_equal(a, b)
    assert 0 < rotated < 16
