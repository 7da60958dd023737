"""stoker's JAX plugin on the CPU (stoker.plugins.jax; DALI's paths stoker.plugin.jax.*): arrays
from DLPack, epochs and last-batch policies as the torch iterator, two pipelines assembled into
one array sharded over two (host) devices or stacked for jax.pmap, the data_iterator decorator
(one pipeline per device, checkpoints), the peekable iterator (clu) and fn.jax_function. The
multi-device cases run in a subprocess with two host devices (XLA's flag must precede JAX)."""

import subprocess
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="JAX is needed for the jax plugin tests")

import stoker  # noqa: E402
from stoker import fn, types  # noqa: E402
from stoker.plugin.jax import DALIGenericIterator, data_iterator  # noqa: E402
from stoker.plugin.jax import fn as jax_fn  # noqa: E402
from stoker.plugin.jax.clu import (DALIGenericPeekableIterator, get_spec_for_array,  # noqa: E402
                                   peekable_data_iterator)
from stoker.plugins.jax import Iterator, LastBatchPolicy  # noqa: E402


def _pipe(root, **reader):
    pipe = stoker.Pipeline(batch_size=4, num_threads=1, seed=1)
    with pipe:
        data, labels = fn.readers.file(file_root=root, name="reader", **reader)
        pipe.set_outputs(data, fn.cast(labels, dtype=types.INT32))
    return pipe


def _labels(step, name="label"):
    return np.asarray(step[name]).ravel().tolist()


def _two_devices(code, timeout=180):
    """Runs `code` with JAX on two host CPU devices; its stdout."""
    head = ("import os\n"
            "os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=2'\n"
            "os.environ['JAX_PLATFORMS'] = 'cpu'  # two host devices, also where JAX has a GPU\n")
    r = subprocess.run([sys.executable, "-c", head + code], capture_output=True, text=True,
                       timeout=timeout)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout.strip()


def test_stoker_plugins_jax_and_dalis_paths_are_one_implementation():
    import stoker.plugin.jax as dax
    from stoker.plugin.jax import clu, integration, iterator

    assert dax.DALIGenericIterator is Iterator and iterator.DALIGenericIterator is Iterator
    assert iterator.data_iterator is data_iterator and iterator.default_num_threads_value() == 4
    assert dax.fn.jax_function is jax_fn.jax_function
    assert clu.DALIGenericPeekableIterator is DALIGenericPeekableIterator
    assert integration._to_jax_array is not None


def test_arrays_epochs_and_partial_last_batch(ten_files):
    it = Iterator(_pipe(ten_files, pad_last_batch=True), ["data", "label"], reader_name="reader",
                  last_batch_policy=LastBatchPolicy.PARTIAL)
    assert len(it) == 3
    for _ in range(2):
        steps = list(it)
        it.reset()
        assert [_labels(s) for s in steps] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
        assert isinstance(steps[0]["data"], jax.Array) and steps[0]["data"].shape == (4, 3)
        assert np.asarray(steps[0]["data"])[1].tolist() == [1, 1, 1]


def test_fill_and_drop_as_dali_document_them(ten_files):
    # DALI's docstring: data [1..7], batch 2 -> FILL, unpadded: last [7, 1], next epoch [2, 3];
    # DROP, unpadded: last [5, 6], next epoch [2, 3]. Here 10 samples, batch 4.
    it = Iterator(_pipe(ten_files), ["data", "label"], reader_name="reader")
    assert [_labels(s) for s in it] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1]]
    assert [_labels(s) for s in it][0] == [2, 3, 4, 5]  # a new loop: the next epoch
    with pytest.warns(RuntimeWarning, match="drops the next epoch's first samples"):
        it = Iterator(_pipe(ten_files), ["data", "label"], reader_name="reader",
                      last_batch_policy=LastBatchPolicy.DROP)
        assert [_labels(s) for s in it] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert len(it) == 2


def test_two_pipelines_make_one_sharded_array(ten_files):
    out = _two_devices(f"""
import jax, numpy as np, stoker
from jax.sharding import Mesh, NamedSharding, PartitionSpec
from stoker import fn, types
from stoker.plugins.jax import Iterator
pipes = []
for shard in range(2):
    p = stoker.Pipeline(batch_size=2, num_threads=1, seed=1)
    with p:
        data, labels = fn.readers.file(file_root={ten_files!r}, name="reader", shard_id=shard,
                                       num_shards=2, stick_to_shard=True, pad_last_batch=True)
        p.set_outputs(fn.cast(labels, dtype=types.INT32))
    pipes.append(p)
mesh = Mesh(np.array(jax.devices("cpu")), ("batch",))
it = Iterator(pipes, ["label"], reader_name="reader",
              sharding=NamedSharding(mesh, PartitionSpec("batch")))
step = next(it)
a = step["label"]
assert a.shape == (4, 1) and len(a.sharding.device_set) == 2, a.sharding
print(np.asarray(a).ravel().tolist())
""")
    assert out == "[0, 1, 5, 6]"  # shard 0's first two, then shard 1's


def test_several_pipelines_without_sharding_are_stacked_for_pmap(ten_files):
    # DALI: no sharding and several pipelines -> a leading device axis; the CPU pipelines'
    # arrays are all on JAX's CPU device, so they are stacked into one array there.
    pipes = [_pipe(ten_files, shard_id=k, num_shards=2) for k in range(2)]
    it = DALIGenericIterator(pipes, ["data", "label"], reader_name="reader")
    step = next(it)
    assert step["label"].shape == (2, 4, 1) and step["data"].shape == (2, 4, 3)
    assert np.asarray(step["label"])[:, :, 0].tolist() == [[0, 1, 2, 3], [5, 6, 7, 8]]
    # pmap_compatible=True on one pipeline: the same leading axis (of one), sharded over it.
    it = DALIGenericIterator(_pipe(ten_files), ["data", "label"], reader_name="reader",
                             pmap_compatible=True)
    a = next(it)["label"]
    assert a.shape == (1, 4, 1) and isinstance(a.sharding, jax.sharding.NamedSharding)
    assert a.sharding.mesh.axis_names == ("device",)


def test_parts_on_two_devices_are_sharded_over_the_device_axis_and_pmap_takes_them():
    out = _two_devices("""
import jax, jax.numpy as jnp, numpy as np
from stoker.plugins.jax import _stack
d = jax.devices()
parts = [jax.device_put(jnp.full((3, 2), k, jnp.float32), d[k]) for k in range(2)]
a = _stack(parts, "x")
assert a.shape == (2, 3, 2) and a.sharding.mesh.axis_names == ("device",), a.sharding
assert [s.device.id for s in a.addressable_shards] == [0, 1]
print(jax.pmap(lambda x: x.sum())(a).tolist())
try:
    _stack([parts[0], parts[0], parts[1]], "x")
except ValueError as e:
    print("error:", e)
""")
    lines = out.splitlines()
    assert lines[0] == "[0.0, 6.0]"
    assert lines[1].startswith("error: output 'x': the pipelines' arrays are on devices")


def test_data_iterator_builds_one_pipeline_per_device(ten_files):
    out = _two_devices(f"""
import jax, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec
from stoker import fn, types
from stoker.plugin.jax import data_iterator

seen = []
def labels(shard_id, num_shards):
    seen.append((shard_id, num_shards))
    _, y = fn.readers.file(file_root={ten_files!r}, name="r", shard_id=shard_id,
                           num_shards=num_shards)
    return fn.cast(y, dtype=types.INT32)

mesh = Mesh(np.array(jax.devices()), ("batch",))
sharded = data_iterator(labels, output_map=["y"], reader_name="r",
                        sharding=NamedSharding(mesh, PartitionSpec("batch")))(batch_size=4)
a = next(sharded)["y"]
print(a.shape, sorted(d.id for d in a.sharding.device_set), np.asarray(a).ravel().tolist())
print(seen, [p.device_id for p in sharded._pipes], [p.batch_size for p in sharded._pipes])
pmapped = data_iterator(labels, output_map=["y"], reader_name="r", devices=jax.devices())(
    batch_size=4)
b = next(pmapped)["y"]
print(b.shape, np.asarray(b)[:, :, 0].tolist(), len(pmapped))
print(jax.pmap(lambda x: x.sum())(b).tolist())
""")
    lines = out.splitlines()
    assert lines[0] == "(4, 1) [0, 1] [0, 1, 5, 6]"  # global batch 4: 2 per device
    assert lines[1] == "[(0, 2), (1, 2)] [0, 1] [2, 2]"
    assert lines[2] == "(2, 2, 1) [[0, 1], [5, 6]] 3"
    assert lines[3] == "[1, 11]"


def test_data_iterator_one_pipeline_arguments_epochs_and_errors(ten_files):
    @data_iterator(output_map=["data", "label"], reader_name="reader")
    def iterator_fn(root):
        data, labels = fn.readers.file(file_root=root, name="reader")
        return data, fn.cast(labels, dtype=types.INT32)

    it = iterator_fn(ten_files, batch_size=5)
    pipe = it._pipes[0]
    assert pipe.num_threads == 4 and pipe.device_id == 0  # DALI's defaults for the call
    assert isinstance(it, DALIGenericIterator) and len(it) == 2
    epochs = [[_labels(s) for s in it] for _ in range(2)]
    assert epochs == [[[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]] * 2
    # the functional form and the decorator's own errors
    it = data_iterator(lambda: fn.readers.file(file_root=ten_files, name="r")[1],
                       output_map=["y"], reader_name="r")(batch_size=2, num_threads=1)
    assert it._pipes[0].num_threads == 1 and next(it)["y"].shape == (2, 1)
    dev = jax.devices()
    with pytest.raises(ValueError, match="Only one of `sharding` and `devices`"):
        data_iterator(output_map=["y"], devices=dev,
                      sharding=jax.sharding.SingleDeviceSharding(dev[0]))
    with pytest.raises(TypeError, match="give batch_size"):
        data_iterator(lambda shard_id, num_shards: fn.readers.file(
            file_root=ten_files, shard_id=shard_id, num_shards=num_shards)[1],
            output_map=["y"], devices=dev)()


def test_iterator_argument_errors(ten_files):
    with pytest.raises(TypeError, match="`sharding` should be an instance"):
        Iterator(_pipe(ten_files), ["data", "label"], sharding="batch")
    with pytest.raises(ValueError, match="PARTIAL is not supported with several pipelines"):
        Iterator([_pipe(ten_files), _pipe(ten_files)], ["data", "label"], reader_name="reader",
                 last_batch_policy=LastBatchPolicy.PARTIAL)
    with pytest.raises(ValueError, match="PARTIAL is not supported"):
        Iterator(_pipe(ten_files), ["data", "label"], reader_name="reader",
                 last_batch_policy=LastBatchPolicy.PARTIAL, pmap_compatible=True)


def test_checkpoints_continue_where_the_iterator_was(ten_files):
    def make(checkpoints=None):
        @data_iterator(output_map=["y"], reader_name="r")
        def labels():
            _, y = fn.readers.file(file_root=ten_files, name="r", random_shuffle=True)
            return fn.cast(y, dtype=types.INT32)
        return labels(batch_size=3, seed=7, checkpoints=checkpoints)

    it = make()
    next(it), next(it)
    ckpt = it.checkpoints()
    assert isinstance(ckpt, list) and len(ckpt) == 1 and isinstance(ckpt[0], str)
    # (next(), not a new `for` loop: a loop over an iterator that has given steps starts the
    # next epoch, and before the epoch's end that reset is ignored with a warning, as in DALI.)
    rest = [_labels(next(it), "y") for _ in range(2)] + [_labels(s, "y") for s in it]
    again = make(ckpt)
    assert [_labels(next(again), "y") for _ in range(2)] + [
        _labels(s, "y") for s in again] == rest
    assert len(rest) == 2 + 3  # the next epoch: its first 2 samples came in the last batch


def test_peekable_iterator_peeks_without_advancing(ten_files):
    @peekable_data_iterator(output_map=["data", "label"], reader_name="reader")
    def iterator_fn():
        data, labels = fn.readers.file(file_root=ten_files, name="reader", pad_last_batch=True)
        return data, fn.cast(labels, dtype=types.INT32)

    it = iterator_fn(batch_size=4, device_id=None)
    assert isinstance(it, DALIGenericPeekableIterator)
    spec = it.element_spec  # from a peeked step
    assert spec["label"] == get_spec_for_array(jax.numpy.zeros((4, 1), jax.numpy.int32))
    assert str(spec["data"]) == "uint8[4, 3]"
    assert _labels(it.peek()) == [0, 1, 2, 3] and _labels(it.peek()) == [0, 1, 2, 3]
    with pytest.raises(RuntimeError, match="Checkpointing is not supported for peekable"):
        it.checkpoints()
    assert _labels(next(it)) == [0, 1, 2, 3]
    assert it.is_nonpadding.tolist() == [True] * 4
    assert _labels(it.peek_async().result()) == [4, 5, 6, 7]
    assert _labels(next(it)) == [4, 5, 6, 7] and _labels(next(it)) == [8, 9, 9, 9]
    assert it.is_nonpadding.tolist() == [True, True, False, False]
    with pytest.raises(StopIteration):
        next(it)
    it.reset()
    peeked = it.peek()
    assert [_labels(s) for s in it][0] == _labels(peeked)  # a loop after a peek keeps it


def test_peekable_iterator_refuses_a_changing_shape():
    sizes = iter([2, 2, 3])

    @peekable_data_iterator(output_map=["x"])
    def iterator_fn():
        return fn.external_source(source=lambda: [np.zeros(next(sizes), np.float32)] * 2)

    it = iterator_fn(batch_size=2, device_id=None)
    next(it)
    next(it)
    with pytest.raises(ValueError, match="The shape or type of the output changed"):
        next(it)


def _source(layout="HW"):
    """Batches of two 2x3 float samples: sample i of iteration k is arange(6) + 10 k + i."""
    return fn.external_source(
        source=lambda info: np.arange(6, dtype=np.float32).reshape(2, 3) + 10 *
        info.iteration + info.idx_in_batch, batch=False, layout=layout)


def _run(define, batch_size=2):
    pipe = stoker.Pipeline(batch_size=batch_size, num_threads=1, seed=1)
    with pipe:
        pipe.set_outputs(*define())
    pipe.build()
    return pipe.run()


def test_jax_function_sees_the_batch_as_one_jax_array():
    seen = []

    @jax_fn.jax_function
    def flip(batch):
        seen.append((type(batch), batch.shape))
        return batch[:, :, ::-1] + 1

    @jax_fn.jax_function(num_outputs=2, output_layouts=("HW", "W"))
    @jax.jit
    @jax.vmap
    def two(sample):
        return sample * 2, sample.sum(axis=0)

    def define():
        doubled, sums = two(_source())
        return flip(_source()), doubled, sums

    flipped, doubled, sums = _run(define)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert seen and issubclass(seen[0][0], jax.Array) and seen[0][1] == (2, 2, 3)
    assert np.array_equal(flipped.as_array()[1], x[:, ::-1] + 2)
    assert np.array_equal(doubled.as_array()[0], x * 2) and doubled.layout() == "HW"
    assert np.array_equal(sums.as_array()[1], (x + 1).sum(axis=0)) and sums.layout() == "W"


def test_jax_function_in_a_data_iterator_and_a_one_tuple_return():
    @jax_fn.jax_function
    def negate(batch):
        return (-batch,)  # DALI takes a lone array or a tuple for one output

    @data_iterator(output_map=["x", "neg"], size=4)
    def iterator_fn():
        x = _source()
        return x, negate(x)

    steps = list(iterator_fn(batch_size=2, device_id=None))
    assert len(steps) == 2
    assert np.array_equal(np.asarray(steps[1]["neg"]), -np.asarray(steps[1]["x"]))


def test_jax_function_with_a_one_device_sharding_sees_global_arrays():
    # A CPU pipeline's function computes on JAX's CPU device: its sharding is over that device
    # (on a machine whose JAX defaults to a GPU too).
    mesh = jax.sharding.Mesh(np.array(jax.devices("cpu")[:1]), ("batch",))
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("batch"))
    seen = []

    @jax_fn.jax_function(sharding=sharding)
    def global_mean(batch):
        seen.append(batch.sharding)
        return batch - batch.mean()

    (out,) = _run(lambda: (global_mean(_source()),))
    assert seen and all(s.mesh == mesh and s.spec == sharding.spec for s in seen)
    a = out.as_array()
    assert abs(float(a.mean())) < 1e-5


def test_jax_function_errors():
    @jax_fn.jax_function
    def identity(batch):
        return batch

    ragged = lambda: fn.external_source(  # noqa: E731
        source=lambda: [np.zeros(2, np.float32), np.zeros(3, np.float32)])
    # The function's errors come out of run() as the operator's RuntimeError, with its text.
    with pytest.raises(RuntimeError, match="input 0 has samples of different shapes"):
        _run(lambda: (identity(ragged()),))

    @jax_fn.jax_function(num_outputs=2)
    def one(batch):
        return batch

    with pytest.raises(RuntimeError, match="num_outputs=2, the function returned 1 arrays"):
        _run(lambda: one(_source()))
    with pytest.raises(ValueError, match="num_outputs must be a whole number"):
        jax_fn.jax_function(identity, num_outputs=-1)
    with pytest.raises(TypeError, match="function must be callable"):
        jax_fn.jax_function(3)
    with pytest.raises(RuntimeError, match="outside a pipeline definition"):
        identity(np.zeros(3))
    with pytest.raises(ValueError, match="num_outputs=0"):
        _run(lambda: (jax_fn.jax_function(identity, num_outputs=0)(_source()), _source()))


def test_clu_module_works_without_googles_clu():
    # DALI's plugin.jax.clu imports CLU's ArraySpec; stoker's has its own when CLU is absent.
    r = subprocess.run([sys.executable, "-c", """
import sys
sys.modules["clu"] = None  # as if CLU were not installed
import numpy as np
from stoker import fn
from stoker.plugin.jax.clu import ArraySpec, peekable_data_iterator
source = lambda: [np.zeros((2, 3), np.int16)] * 4
it = peekable_data_iterator(lambda: fn.external_source(source=source), output_map=["x"])(
    batch_size=4, device_id=None)
spec = it.element_spec["x"]
print(ArraySpec.__module__, repr(spec), str(spec), spec == ArraySpec(np.int16, (4, 2, 3)))
"""], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["stoker.plugins.jax_clu", "ArraySpec(dtype=int16,",
                                "shape=(4,", "2,", "3))", "int16[4,", "2,", "3]", "True"]


def test_jax_function_output_layouts_follow_dalis_rule():
    # Without output_layouts output i takes input i's layout where the dimensions agree (DALI's
    # rule, decided per batch); given ones are taken as they are ('' for none).
    @jax_fn.jax_function(num_outputs=3)
    def three(a, b):
        # input 0's dimensions (HW); fewer than input 1's (HWC); an output without an input
        return a + 1, b[..., 0], a[:, 0]

    @jax_fn.jax_function(num_outputs=2, output_layouts=["", "XY"])
    def given(a):
        return a, a

    @jax_fn.jax_function(num_outputs=2, output_layouts="AB")
    def every(a):
        return a, a

    def define():
        volume = fn.expand_dims(_source(), axes=[2], new_axis_names="C")  # HWC, 2x3x1
        return (*three(_source(), volume), *given(_source()), *every(_source()))

    outs = _run(define)
    assert [o.layout() for o in outs] == ["HW", "", "", "", "XY", "AB", "AB"]
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert np.array_equal(outs[1].as_array()[0], x) and outs[2].as_array().shape == (2, 3)
    assert outs[0].as_array().shape == (2, 2, 3)


def test_jax_function_output_layout_errors():
    identity = lambda batch: batch  # noqa: E731
    with pytest.raises(ValueError, match="output_layouts has 1 entries for num_outputs=2"):
        _run(lambda: jax_fn.jax_function(lambda b: (b, b), num_outputs=2,
                                         output_layouts=["HW"])(_source()))
    with pytest.raises(ValueError, match="output_layouts has 0 entries for num_outputs=1"):
        _run(lambda: (jax_fn.jax_function(identity, output_layouts=[])(_source()),))
    with pytest.raises(TypeError, match="output_layouts must be a layout string"):
        _run(lambda: (jax_fn.jax_function(identity, output_layouts=3)(_source()),))
    with pytest.raises(TypeError, match="output_layouts must be a layout string"):
        _run(lambda: (jax_fn.jax_function(identity, output_layouts=[None])(_source()),))
    # A layout of the wrong length fails when the batch shows it (DALI: when it is used).
    with pytest.raises(ValueError, match="the layout 'ABC', but its samples have 2 dim"):
        _run(lambda: (jax_fn.jax_function(identity, output_layouts="ABC")(_source()),))


def test_jax_function_views_the_batch_without_a_copy():
    seen = []

    @jax_fn.jax_function
    def plus_one(batch):
        seen.append(batch.unsafe_buffer_pointer())
        return batch + 1

    # An operator's output lies back to back: the function gets a view of it (DALI's too).
    x, y = _run(lambda: (lambda x: (x, plus_one(x)))(fn.copy(_source())))
    assert seen[0] == x.data_ptr(0) and y.layout() == "HW"  # iteration 0's call
    assert np.array_equal(y.as_array(), x.as_array() + 1)
    # python_function's per-sample outputs are the arrays it returned, apart in memory: they
    # are stacked (a copy), with the same values.
    apart = lambda: fn.python_function(_source(), function=lambda a: a * 1)  # noqa: E731
    seen.clear()
    x, y = _run(lambda: (lambda x: (x, plus_one(x)))(apart()))
    assert not x.is_contiguous() and seen[0] != x.data_ptr(0)
    assert np.array_equal(y.as_array(), x.as_array() + 1)
