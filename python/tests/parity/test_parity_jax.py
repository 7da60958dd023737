"""The JAX plugin against DALI 2.4's (nvidia.dali.plugin.jax, which runs here on the CPU): the same
code, written once and run with each library's modules, gives the same steps — arrays' shapes,
dtypes, values and kinds of sharding, epochs, lengths — for data_iterator and DALIGenericIterator
(one pipeline; several stacked for jax.pmap; pmap_compatible), the peekable iterator of
plugin.jax.clu (where CLU is installed: DALI needs it), checkpoints, and fn.jax_function.

Not compared here, because DALI's side needs a GPU: data_iterator with `sharding` or `devices`
(DALI gives pipeline k device_id=k, which a DALI pipeline without CUDA refuses) and a
DALIGenericIterator `sharding` over CPU pipelines (DALI's parts all sit on JAX's CPU device and
make_array_from_single_device_arrays refuses them). test_plugin_jax.py checks stoker's against
what DALI's code defines for them (device_id = index, shard_id = JAX device id, num_shards, the
global batch split over jax.devices(), stacked or global arrays)."""

import importlib

import numpy as np
import pytest

from parity_util import SKIP_REASON, dali

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)
jax = pytest.importorskip("jax", reason="JAX is needed for the jax plugin")

PARITY = {}  # jax_function is the plugin's, not an operator of fn: compared below


def _lib(name):
    """(pipeline_def, fn, types, plugin.jax, its LastBatchPolicy) of stoker or DALI."""
    root = "stoker" if name == "stoker" else "nvidia.dali"
    mod = lambda path: importlib.import_module(f"{root}.{path}")  # noqa: E731
    base = importlib.import_module(root)
    policy = mod("plugin.base_iterator").LastBatchPolicy
    return base.pipeline_def, mod("fn"), mod("types"), mod("plugin.jax"), policy


def _both(scenario):
    """{"stoker": scenario(*stoker's), "dali": scenario(*DALI's)}."""
    return {name: scenario(*_lib(name)) for name in ("stoker", "dali")}


def _plain(step):
    """A step as comparable values: {name: (shape, dtype, values, kind of sharding)}."""
    return {k: (tuple(v.shape), str(v.dtype), np.asarray(v).tolist(), type(v.sharding).__name__)
            for k, v in step.items()}


def _same(out):
    assert out["stoker"] == out["dali"]
    return out["stoker"]


def _labels(fn, types, root, **reader):
    _, labels = fn.readers.file(file_root=root, name="reader", **reader)
    return fn.cast(labels, dtype=types.INT32)


@pytest.mark.parametrize("policy", ["FILL", "DROP"])
@pytest.mark.parametrize("pad", [False, True])
def test_data_iterator_epochs_equal_dalis(ten_files, policy, pad):
    def scenario(pipeline_def, fn, types, dax, lbp):
        @dax.data_iterator(output_map=["y"], reader_name="reader",
                           last_batch_policy=getattr(lbp, policy))
        def iterator_fn():
            return _labels(fn, types, ten_files, pad_last_batch=pad)

        it = iterator_fn(batch_size=4, device_id=None)
        epochs = [[_plain(s) for s in it] for _ in range(3)]  # each `for` an epoch
        return epochs, len(it), it.size

    out = _same(_both(scenario))
    assert out[1] == (2 if policy == "DROP" else 3)


def test_iterator_over_external_source_with_size_equals_dalis():
    def scenario(pipeline_def, fn, types, dax, lbp):
        @pipeline_def(batch_size=3, num_threads=1, device_id=None)
        def pipe():
            x = fn.external_source(source=lambda info: np.full((2,), info.idx_in_epoch,
                                                               np.float32), batch=False)
            return x, x * 2

        it = dax.DALIGenericIterator([pipe()], ["x", "x2"], size=7, auto_reset=True)
        return [[_plain(s) for s in it] for _ in range(2)], len(it)

    _same(_both(scenario))


def test_several_pipelines_and_pmap_compatible_stack_as_dalis(ten_files):
    def scenario(pipeline_def, fn, types, dax, lbp):
        @pipeline_def(batch_size=2, num_threads=1, device_id=None)
        def pipe(shard_id):
            return _labels(fn, types, ten_files, shard_id=shard_id, num_shards=2)

        stacked = dax.DALIGenericIterator([pipe(0), pipe(1)], ["y"], reader_name="reader")
        one = dax.DALIGenericIterator([pipe(0)], ["y"], reader_name="reader",
                                      pmap_compatible=True)
        return [_plain(s) for s in stacked], [_plain(s) for s in one]

    stacked, one = _same(_both(scenario))
    assert stacked[0]["y"][0] == (2, 2, 1) and one[0]["y"][0] == (1, 2, 1)
    assert one[0]["y"][3] == "NamedSharding"


def test_checkpoints_resume_as_dalis(ten_files):
    def scenario(pipeline_def, fn, types, dax, lbp):
        def make(checkpoints=None):
            @dax.data_iterator(output_map=["y"], reader_name="reader")
            def iterator_fn():
                return _labels(fn, types, ten_files)
            return iterator_fn(batch_size=3, device_id=None, enable_checkpointing=True,
                               checkpoints=checkpoints)

        it = make()
        first = [_plain(next(it)) for _ in range(2)]
        ckpt = it.checkpoints()
        resumed = make(ckpt)
        # the epoch's 2 remaining steps, then the next epoch as a loop
        rest = lambda i: [_plain(next(i)) for _ in range(2)] + [_plain(s) for s in i]  # noqa
        return first, rest(resumed), rest(it)

    for out in _both(scenario).values():
        assert out[1] == out[2]  # the resumed iterator continues as the original
    _same(_both(scenario))


def test_peekable_iterator_equals_dalis(ten_files):
    pytest.importorskip("clu", reason="DALI's plugin.jax.clu needs Google's CLU (pip install "
                                      "clu); stoker's does not")

    def scenario(pipeline_def, fn, types, dax, lbp):
        clu = importlib.import_module(dax.__name__ + ".clu")

        @clu.peekable_data_iterator(output_map=["y"], reader_name="reader")
        def iterator_fn():
            return _labels(fn, types, ten_files, pad_last_batch=True)

        it = iterator_fn(batch_size=4, device_id=None)
        seen = [repr(it.element_spec), _plain(it.peek()), _plain(it.peek_async().result())]
        for step in it:
            seen.append((_plain(step), np.asarray(it.is_nonpadding).tolist()))
        it.reset()
        seen.append(_plain(it.peek()))
        seen.append([_plain(s) for s in it])  # a loop after a peek: that step first
        return seen

    out = _same(_both(scenario))
    assert out[-3][1] == [True, True, False, False]


def test_jax_function_equals_dalis():
    def scenario(pipeline_def, fn, types, dax, lbp):
        @dax.fn.jax_function
        def flip(batch):
            return batch[:, :, ::-1]

        @dax.fn.jax_function(num_outputs=2, output_layouts=["AB", "B"])
        @jax.jit
        @jax.vmap
        def moments(sample):
            return sample - sample.mean(), sample.max(axis=0)

        @pipeline_def(batch_size=3, num_threads=1, device_id=None, exec_async=False,
                      exec_pipelined=False)
        def pipe():
            x = fn.external_source(source=lambda info: np.arange(6, dtype=np.float32).reshape(
                2, 3) * (info.idx_in_batch + 1) + info.iteration, batch=False)
            centred, top = moments(x)
            return flip(x), centred, top

        p = pipe()
        p.build()
        return [[(b.as_array().tolist(), b.layout()) for b in p.run()] for _ in range(2)]

    _same(_both(scenario))


def test_jax_function_output_layouts_equal_dalis():
    # Without output_layouts output i takes input i's layout where the dimensions agree; given
    # layouts are taken as they are ('' included); the inputs' batches are views in both.
    def scenario(pipeline_def, fn, types, dax, lbp):
        @dax.fn.jax_function(num_outputs=3)
        def three(a, b):
            return a * 2, b[..., 0], a[:, 0]

        @dax.fn.jax_function(num_outputs=2)
        def swapped(a, b):
            return b, a

        @dax.fn.jax_function(num_outputs=2, output_layouts=("", "XY"))
        def given(a):
            return a, a

        @pipeline_def(batch_size=3, num_threads=1, device_id=None, exec_async=False,
                      exec_pipelined=False)
        def pipe():
            x = fn.external_source(source=lambda info: np.arange(6, dtype=np.float32).reshape(
                2, 3) * (info.idx_in_batch + 1), batch=False, layout="HW")
            v = fn.external_source(source=lambda info: np.ones((2, 3, 1), np.uint8) *
                                   info.idx_in_batch, batch=False, layout="HWC")
            return (*three(x, v), *swapped(x, v), *given(x),
                    dax.fn.jax_function(lambda a: a + 1)(fn.reshape(x, layout="")))

        p = pipe()
        p.build()
        return [[(b.as_array().tolist(), b.layout()) for b in p.run()] for _ in range(2)]

    out = _same(_both(scenario))
    assert [layout for _, layout in out[0]] == ["HW", "", "", "", "", "", "XY", ""]


def test_jax_function_layout_count_errors_as_dalis():
    # A list of output_layouts must have one entry per output in both.
    for name in ("stoker", "dali"):
        pipeline_def, fn, types, dax, lbp = _lib(name)

        @pipeline_def(batch_size=2, num_threads=1, device_id=None, exec_async=False,
                      exec_pipelined=False)
        def pipe():
            x = fn.external_source(source=lambda: [np.zeros(3, np.float32)] * 2, batch=True)
            return tuple(dax.fn.jax_function(lambda a: (a, a), num_outputs=2,
                                             output_layouts=["X"])(x))

        with pytest.raises(Exception, match="output_layouts"):
            p = pipe()
            p.build()
            p.run()


def test_jax_function_with_sharding_equals_dalis():
    # CPU pipelines: the sharding is over JAX's CPU device (also where JAX defaults to a GPU).
    mesh = jax.sharding.Mesh(np.array(jax.devices("cpu")[:1]), ("batch",))
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("batch"))

    def scenario(pipeline_def, fn, types, dax, lbp):
        @dax.fn.jax_function(sharding=sharding)
        def normalise(batch):
            return (batch - batch.mean()) / batch.std()

        @pipeline_def(batch_size=4, num_threads=1, device_id=None, exec_async=False,
                      exec_pipelined=False)
        def pipe():
            x = fn.external_source(source=lambda info: np.arange(
                3, dtype=np.float32) ** (info.idx_in_batch + 1), batch=False)
            return normalise(x)

        p = pipe()
        p.build()
        return p.run()[0].as_array()

    out = _both(scenario)
    np.testing.assert_allclose(out["stoker"], out["dali"], rtol=1e-6)


def test_decorator_argument_errors_as_dalis():
    for name in ("stoker", "dali"):
        dax = _lib(name)[3]
        with pytest.raises(ValueError, match="Only one of `sharding` and `devices`"):
            dax.data_iterator(output_map=["y"], devices=jax.devices(),
                              sharding=jax.sharding.SingleDeviceSharding(jax.devices()[0]))


@pytest.mark.parametrize("path", ["plugin.jax.DALIGenericIterator", "plugin.jax.data_iterator",
                                  "plugin.jax.fn.jax_function",
                                  "plugin.jax.iterator.default_num_threads_value",
                                  "plugin.jax.clu.DALIGenericPeekableIterator",
                                  "plugin.jax.clu.peekable_data_iterator"])
def test_signatures_are_dalis(path):
    import inspect

    if ".clu." in path:
        pytest.importorskip("clu", reason="DALI's plugin.jax.clu needs Google's CLU")
    module, _, name = path.rpartition(".")

    def params(root):
        obj = getattr(importlib.import_module(f"{root}.{module}"), name)
        return [(p.name, p.kind, repr(p.default))
                for p in inspect.signature(obj).parameters.values()]

    assert params("stoker") == params("nvidia.dali")
