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
    with pytest.raises(ValueError, match="define_graph"):
        pipe.serialize(define_graph=lambda: stoker.fn.random.uniform())
    with pytest.raises(ValueError, match="not both"):
        pipe.serialize(filename=str(tmp_path / "a"), path=str(tmp_path / "b"))
