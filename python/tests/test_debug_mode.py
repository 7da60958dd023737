"""pipeline_def(debug=True): the function runs at every run(), each operator as it is called,
so values print and can be inspected (.get()); the outputs equal the built pipeline's for
deterministic operators; readers, random operators and external sources keep their state from
run to run; calling the operators in another order is an error that says so."""

import numpy as np
import pytest

import stoker
from stoker import fn, types
from stoker.pipeline import experimental


def test_debug_outputs_equal_the_pipelines_and_values_print(jpeg_folder, capsys):
    def body():
        jpegs, labels = fn.readers.file(file_root=jpeg_folder)
        images = fn.decoders.image(jpegs)
        print(images)
        images = fn.resize(images, size=(16, 12))
        return images, labels, images // 2 + 1

    debug = stoker.pipeline_def(body, batch_size=4, num_threads=1, seed=5, debug=True)()
    built = stoker.pipeline_def(body, batch_size=4, num_threads=1, seed=5)()
    built.build()
    for _ in range(3):
        got, want = debug.run(), built.run()
        assert all(np.array_equal(a.as_array(), b.as_array()) for a, b in zip(got, want))
    out = capsys.readouterr().out
    assert out.count("DataNodeDebug(decoders.image_1: 4 samples, uint8 HWC on the CPU, "
                     "shapes [(") == 3
    assert "sample 0: min " in out


def test_random_operators_arguments_and_external_sources_keep_their_state():
    seen = []

    def body():
        x = fn.external_source(lambda i: [np.full(3, i, np.float32)] * 4)
        coin = fn.random.coin_flip()
        y = fn.cast(x, dtype="int32")
        value = y.get()
        seen.append(int(value.at(0)[0]))
        return fn.flip(fn.reshape(x, shape=[1, 3, 1], layout="HWC"), horizontal=coin), coin

    pipe = stoker.pipeline_def(body, batch_size=4, num_threads=1, seed=3, debug=True)()
    coins = [tuple(int(c) for c in pipe.run()[1].as_array().ravel()) for _ in range(4)]
    assert seen == [0, 1, 2, 3]  # the source's iterations go on
    assert len(set(coins)) > 1  # the coin keeps drawing


def test_changing_the_order_of_operators_is_refused():
    runs = []

    def body():
        runs.append(1)
        x = fn.external_source(lambda: [np.zeros(2, np.float32)] * 2)
        return fn.cast(x, dtype="int32") if len(runs) == 1 else fn.reshape(x, shape=[2])

    pipe = stoker.pipeline_def(body, batch_size=2, num_threads=1, debug=True)()
    pipe.run()
    with pytest.raises(RuntimeError, match=r"call 1 of the pipeline function is reshape in this "
                                           r"run but was cast before"):
        pipe.run()


def test_dalis_experimental_pipeline_def_takes_debug():
    # DALI's nvidia.dali.pipeline.experimental.pipeline_def: the variant with debug=, at the
    # same path (a module inside the pipeline module) and taking it when called as well.
    from stoker.pipeline.experimental import pipeline_def
    import stoker.pipeline.experimental as experimental

    assert experimental.pipeline_def is pipeline_def and pipeline_def.__name__ == "pipeline_def"

    kinds = []

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, debug=True)
    def doubled():
        x = fn.external_source(source=lambda: [np.arange(3, dtype=np.float32)] * 2, batch=True)
        kinds.append(type(x).__name__)
        return x * 2

    np.testing.assert_array_equal(doubled().run()[0].as_array(), [[0, 2, 4]] * 2)
    assert kinds == ["DataNodeDebug"]  # the operators ran as the function called them
    built = doubled(debug=False)  # the call's debug= wins, as in DALI: traced once
    built.build()
    np.testing.assert_array_equal(built.run()[0].as_array(), [[0, 2, 4]] * 2)
    assert kinds == ["DataNodeDebug", "DataNode"]


def test_external_sources_fed_by_name_take_one_batch_per_run():
    """DALI's debug-mode feed_input: batches wait under the source's name, one per run, fed
    before the first run too; run(name=batch) feeds and runs. With nothing fed, stoker says so
    (DALI waits for ever); a source with a callable refuses feeds with DALI's message."""
    @experimental.pipeline_def(batch_size=2, num_threads=1, device_id=None, debug=True)
    def fed():
        x = fn.external_source(name="x")
        return fn.cast(x, dtype=types.FLOAT) + 1

    pipe = fed()
    pipe.build()
    pipe.feed_input("x", [np.array([1]), np.array([2])])
    pipe.feed_input("x", [np.array([3]), np.array([4])])
    assert [np.array(s).tolist() for s in pipe.run()[0]] == [[2.0], [3.0]]
    assert [np.array(s).tolist() for s in pipe.run()[0]] == [[4.0], [5.0]]
    out = pipe.run(x=[np.array([5]), np.array([6]), np.array([7])])[0]
    assert [np.array(s).tolist() for s in out] == [[6.0], [7.0], [8.0]]
    with pytest.raises(RuntimeError, match="external source 'x' has no batch fed for this run"):
        pipe.run()

    @experimental.pipeline_def(batch_size=2, num_threads=1, device_id=None, debug=True)
    def sourced():
        return fn.external_source(source=lambda: [np.array([1]), np.array([2])], name="y",
                                  batch=True)

    pipe = sourced()
    pipe.feed_input("y", [np.array([1]), np.array([2])])
    with pytest.raises(RuntimeError, match="Cannot use `feed_input` on the external source 'y' "
                                           "with a `source` argument specified"):
        pipe.run()
