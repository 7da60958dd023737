"""pipeline_def(debug=True): the function runs at every run(), each operator as it is called,
so values print and can be inspected (.get()); the outputs equal the built pipeline's for
deterministic operators; readers, random operators and external sources keep their state from
run to run; calling the operators in another order is an error that says so."""

import numpy as np
import pytest

import stoker
from stoker import fn


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
