"""Pipeline methods DALI 2.4 scripts call, on both libraries (only the import differs): run()
feeding external sources by name (and DALI's rule that it needs prefetch_queue_depth=1 or
exec_pipelined=False), empty() through run/schedule_run/outputs, input_feed_count(),
the current-pipeline stack, output_dtype()/output_ndim(), checkpoint()/serialize() to a file,
save_graph_to_dot_file() and enable_api_check()."""

import numpy as np
import pytest

from parity_util import SKIP_REASON, dali

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

import stoker  # noqa: E402


def lib(name):
    return stoker if name == "stoker" else dali


def make(name, **kw):
    m = lib(name)
    extra = {"device_id": None} if name == "dali" else {}

    @m.pipeline_def(batch_size=2, num_threads=1, seed=5, **extra, **kw)
    def p():
        x = m.fn.external_source(name="ext")
        return m.fn.cast(x, dtype=m.types.FLOAT, name="castme"), \
            m.fn.random.uniform(range=[0, 1])
    return p()


def first(batch):
    return np.array(batch.at(0)).tolist()


def batch_of(value):
    return [np.full(3, value, np.uint8)] * 2


@pytest.mark.parametrize("name", ["stoker", "dali"])
def test_run_feeds_external_sources_by_name_with_a_queue_of_one(name):
    pipe = make(name, prefetch_queue_depth=1)
    pipe.build()
    assert first(pipe.run(ext=batch_of(7))[0]) == [7.0, 7.0, 7.0]
    assert first(pipe.run(ext=batch_of(9))[0]) == [9.0, 9.0, 9.0]
    with pytest.raises(KeyError, match='Could not find an input operator with name "nope"'):
        pipe.run(nope=batch_of(1))


@pytest.mark.parametrize("name", ["stoker", "dali"])
def test_run_with_inputs_needs_a_queue_of_one_or_no_pipelining(name):
    pipe = make(name)
    pipe.build()
    with pytest.raises(RuntimeError, match="prefetch_queue_depth=2,\\s+exec_pipelined=True"):
        pipe.run(ext=batch_of(1))
    unpipelined = make(name, prefetch_queue_depth=1, exec_pipelined=False)
    unpipelined.build()
    assert first(unpipelined.run(ext=batch_of(4))[0]) == [4.0, 4.0, 4.0]


def empties(name):
    pipe = make(name)
    pipe.build()
    seen = [pipe.empty()]
    for v in range(4):
        pipe.feed_input("ext", batch_of(v))
    pipe.schedule_run()
    seen.append(pipe.empty())
    pipe.outputs()
    seen.append(pipe.empty())
    pipe.outputs()
    seen.append(pipe.empty())
    pipe.schedule_run()
    seen.append(pipe.empty())
    pipe.outputs()
    seen.append(pipe.empty())
    try:
        pipe.outputs()
        seen.append("another batch")
    except StopIteration:
        seen.append("StopIteration")
    ran = make(name)
    ran.build()
    for v in range(3):
        ran.feed_input("ext", batch_of(v))
    for _ in range(2):
        ran.run()
        seen.append(ran.empty())
    return seen


def test_empty_counts_batches_asked_for_and_not_taken_as_dali_does():
    assert empties("stoker") == empties("dali")


def test_input_feed_count_is_the_queue_depth_and_unknown_names_are_errors():
    for depth in (1, 2, 3, {"cpu_size": 3, "gpu_size": 2}):
        counts = []
        for name in ("stoker", "dali"):
            pipe = make(name, prefetch_queue_depth=depth)
            pipe.build()
            counts.append(pipe.input_feed_count("ext"))
            with pytest.raises(KeyError if name == "stoker" else (KeyError, RuntimeError)):
                pipe.input_feed_count("nope")
        assert counts[0] == counts[1], (depth, counts)


@pytest.mark.parametrize("name", ["stoker", "dali"])
def test_the_current_pipeline_stack(name):
    Pipeline = lib(name).Pipeline
    pipe = make(name)
    assert Pipeline.current() is None
    assert Pipeline.push_current(pipe) is None and Pipeline.current() is pipe
    with make(name) as inner:
        assert Pipeline.current() is inner
    assert Pipeline.current() is pipe
    Pipeline.pop_current()
    assert Pipeline.current() is None


def test_declared_output_types_and_dimensions():
    got = []
    for name in ("stoker", "dali"):
        t = lib(name).types
        pipe = make(name, output_dtype=[t.FLOAT, None], output_ndim=1)
        got.append(([x.name if x is not None else None for x in pipe.output_dtype()],
                     pipe.output_ndim()))
        plain = make(name)
        got.append((plain.output_dtype(), plain.output_ndim()))
    assert got[0] == got[2] and got[1] == got[3], got


@pytest.mark.parametrize("name", ["stoker", "dali"])
def test_checkpoint_and_serialize_write_what_they_return(name, tmp_path):
    m = lib(name)
    extra = {"device_id": None} if name == "dali" else {}

    @m.pipeline_def(batch_size=2, num_threads=1, seed=5, enable_checkpointing=True, **extra)
    def p():
        return m.fn.random.uniform(range=[0, 1])
    pipe = p()
    pipe.build()
    pipe.run()
    state = pipe.checkpoint(str(tmp_path / "ckpt"))
    mode = "rb" if isinstance(state, bytes) else "r"
    assert open(tmp_path / "ckpt", mode).read() == state
    text = pipe.serialize(filename=str(tmp_path / "def"))
    mode = "rb" if isinstance(text, bytes) else "r"
    assert open(tmp_path / "def", mode).read() == text


@pytest.mark.parametrize("name", ["stoker", "dali"])
def test_graph_to_dot_file_names_the_operators_the_outputs_need(name, tmp_path):
    pipe = make(name)
    pipe.build()
    path = tmp_path / "g.dot"
    pipe.save_graph_to_dot_file(str(path), show_tensors=True, use_colors=True)
    text = path.read_text()
    assert text.startswith("digraph") and text.rstrip().endswith("}")
    assert "ext" in text and "castme" in text
    with pytest.warns(DeprecationWarning, match="show_ids"):
        pipe.save_graph_to_dot_file(str(path), show_ids=True)
    pipe.enable_api_check(False)  # accepted by both


def test_serialize_takes_dalis_define_graph_and_stokers_positional_path(tmp_path):
    pipe = stoker.Pipeline(batch_size=2, num_threads=1)
    text = pipe.serialize(define_graph=lambda: stoker.fn.random.uniform(range=[0, 1]))
    assert '"random.uniform"' in text
    assert pipe.serialize(tmp_path / "p.json") == (tmp_path / "p.json").read_text()
    with pytest.raises(ValueError, match="not both"):
        pipe.serialize(filename=str(tmp_path / "a"), path=str(tmp_path / "b"))


def source_pipeline(name, batches, **kw):
    m = lib(name)
    extra = {"device_id": None} if name == "dali" else {}
    data = [[np.full(2, v, np.int32)] * 2 for v in range(batches)]

    @m.pipeline_def(batch_size=2, num_threads=1, seed=5, **extra, **kw)
    def p():
        return m.fn.external_source(source=data, name="src")
    return p()


def end_of_data(name, **kw):
    """(value, empty()) for each run() of a 3-batch source, then what schedule_run x3 and
    outputs() leave."""
    pipe = source_pipeline(name, 3, **kw)
    pipe.build()
    seen = []
    while True:
        try:
            seen.append((int(np.array(pipe.run()[0].at(0))[0]), pipe.empty()))
        except StopIteration:
            seen.append("StopIteration")
            break
    if not kw.get("exec_pipelined", True):
        return seen  # (DALI's unpipelined schedule_run x3 waits for ever)
    sched = source_pipeline(name, 3, **kw)
    sched.build()
    for _ in range(3):
        sched.schedule_run()
    for _ in range(3):
        sched.outputs()
        seen.append(sched.empty())
    return seen


@pytest.mark.parametrize("kw", [{}, {"prefetch_queue_depth": 1}, {"exec_pipelined": False,
                                                                   "exec_async": False}],
                         ids=["depth 2", "depth 1", "not pipelined"])
def test_empty_at_the_end_of_a_sources_data_as_dali(kw):
    assert end_of_data("stoker", **kw) == end_of_data("dali", **kw)


def test_a_failed_run_still_takes_its_batch_from_the_account():
    seen = {}
    for name in ("stoker", "dali"):
        pipe = source_pipeline(name, 4, output_dtype=lib(name).types.FLOAT)
        pipe.build()
        states = []
        for _ in range(2):
            with pytest.raises(RuntimeError, match="Data type"):
                pipe.run()
            states.append(pipe.empty())
        seen[name] = states
    assert seen["stoker"] == seen["dali"]


@pytest.mark.parametrize("kw", [{"output_layout": ""}, {"output_layout": ["", None, "X"]},
                                {"output_ndim": True}], ids=str)
def test_declarations_dali_takes_as_no_constraint(kw):
    got = []
    for name in ("stoker", "dali"):
        pipe = source_pipeline(name, 2, **kw)
        pipe.build()
        got.append(int(np.array(pipe.run()[0].at(0))[0]))
    assert got == [0, 0]


def test_debug_mode_takes_dalis_split_run():
    @stoker.pipeline_def(batch_size=2, num_threads=1, debug=True)
    def p():
        return stoker.fn.random.uniform(shape=[2], seed=1)
    pipe = p()
    pipe.schedule_run()
    (a,) = pipe.outputs()
    assert len(a) == 2


def test_deserialize_takes_pipelines_own_arguments(tmp_path):
    @stoker.pipeline_def(batch_size=2, num_threads=1, seed=3)
    def p():
        return stoker.fn.random.uniform(shape=[2])
    text = p().serialize()
    pipe = stoker.Pipeline.deserialize(text, output_dtype=stoker.types.FLOAT, output_ndim=1,
                                       stream_policy=stoker.StreamPolicy.SINGLE,
                                       exec_pipelined=False)
    assert pipe.output_dtype() == [stoker.types.FLOAT] and pipe._exec_pipelined is False
    wrong = stoker.Pipeline.deserialize(text, output_dtype=stoker.types.INT32)
    with pytest.raises(RuntimeError, match="Data type in the output_idx=0"):
        wrong.run()


def test_a_checkpoint_file_read_as_bytes_restores_as_in_dali(tmp_path):
    @stoker.pipeline_def(batch_size=2, num_threads=1, seed=3, enable_checkpointing=True)
    def p():
        return stoker.fn.random.uniform(shape=[2])
    a = p()
    a.build()
    a.run()
    a.checkpoint(str(tmp_path / "ck"))
    expected = a.run()[0].as_array().tolist()
    b = p(checkpoint=open(tmp_path / "ck", "rb").read())
    b.build()
    assert b.run()[0].as_array().tolist() == expected


def test_serialize_defines_a_class_based_pipeline_and_keeps_its_graph(tmp_path):
    class Uniform(stoker.Pipeline):
        def define_graph(self):
            return stoker.fn.random.uniform(shape=[1])
    assert '"random.uniform"' in Uniform(batch_size=2, num_threads=1).serialize()
    pipe = stoker.Pipeline(batch_size=2, num_threads=1)

    def broken():
        stoker.fn.random.normal(shape=[1])
        raise ZeroDivisionError
    with pytest.raises(ZeroDivisionError):
        pipe.serialize(define_graph=broken)
    assert pipe._nodes == []  # what the failed function recorded is gone
    text = pipe.serialize(define_graph=lambda: stoker.fn.random.uniform(shape=[1]))
    assert pipe.serialize(define_graph=lambda: stoker.fn.zeros(shape=[1])) == text  # ignored


def test_threads_building_one_pipeline_build_it_once(monkeypatch, tmp_path):
    import threading
    builds = []
    real = stoker._stoker.Pipeline.build

    def counting(*args):
        builds.append(1)
        return real(*args)
    monkeypatch.setattr(stoker._stoker.Pipeline, "build", staticmethod(counting))
    listing = tmp_path / "list.txt"
    listing.write_text("".join(f"d/{i}.jpg {i % 10}\n" for i in range(200_000)))
    pipe = stoker.Pipeline(batch_size=2, num_threads=1)
    with pipe:
        pipe.set_outputs(stoker.fn.readers.file(file_root=str(tmp_path),
                                                file_list=str(listing))[1])
    threads = [threading.Thread(target=pipe.build) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(builds) == 1
