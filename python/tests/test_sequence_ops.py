"""element_extract and sequence_rearrange: frames picked from sequences against numpy indexing,
per-sample orders, layouts, errors naming the sample; the GPU backend equal to the CPU one.
DALI 2.4 is compared in parity/test_parity_sequence_ops.py."""

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn


def sequences():
    rng = np.random.default_rng(4)
    return [rng.integers(0, 255, (f, h, w, 3), dtype=np.uint8)
            for f, h, w in ((5, 4, 6), (3, 2, 2), (7, 1, 3))]


def run(build, data, device="cpu", layout="FHWC"):
    pipe = stoker.Pipeline(batch_size=len(data), num_threads=2,
                           device_id=0 if device == "gpu" else None)
    with pipe:
        x = fn.external_source(source=lambda: data, batch=True, layout=layout)
        if device == "gpu":
            x = x.gpu()
        out = build(x)
        pipe.set_outputs(*(out if isinstance(out, (list, tuple)) else [out]))
    pipe.build()
    outs = pipe.run()
    return [(b.layout(), [np.array(s) for s in (b.as_cpu() if device == "gpu" else b)])
            for b in outs]


def test_element_extract_drops_the_frame_dimension():
    data = sequences()
    outs = run(lambda x: fn.element_extract(x, element_map=[2, 0, 2]), data)
    assert len(outs) == 3
    for (layout, samples), k in zip(outs, (2, 0, 2)):
        assert layout == "HWC"
        for got, seq in zip(samples, data):
            assert np.array_equal(got, seq[k])


def test_sequence_rearrange_reorders_repeats_and_drops():
    data = sequences()
    ((layout, samples),) = run(lambda x: fn.sequence_rearrange(x, new_order=[2, 0, 0, 1]), data)
    assert layout == "FHWC"
    for got, seq in zip(samples, data):
        assert np.array_equal(got, seq[[2, 0, 0, 1]])
    # Per-sample orders (a tensor per sample), of different lengths.
    orders = [np.array([4, 3], np.int32), np.array([0], np.int32), np.array([6, 5, 4, 0], np.int32)]
    ((_, samples),) = run(lambda x: fn.sequence_rearrange(
        x, new_order=fn.external_source(source=lambda: orders, batch=True)), data)
    for got, seq, order in zip(samples, data, orders):
        assert np.array_equal(got, seq[order])


def test_other_dtypes_and_no_layout():
    data = [np.arange(4 * 3, dtype=np.float32).reshape(4, 3), np.ones((2, 3), np.float32)]
    ((layout, samples),) = run(lambda x: fn.sequence_rearrange(x, new_order=[1, 0]), data,
                               layout="")
    assert layout == ""
    assert np.array_equal(samples[0], data[0][[1, 0]])


def test_errors_name_the_sample():
    data = sequences()
    with pytest.raises(ValueError, match="sample 1 has 3 frames; frame 3 does not exist"):
        run(lambda x: fn.sequence_rearrange(x, new_order=[0, 3]), data)
    with pytest.raises(ValueError, match="expected sequences \\(a layout starting with F\\), got "
                                         "layout 'HWC'"):
        run(lambda x: fn.element_extract(x, element_map=[0]), [s[0] for s in data], layout="HWC")
    with pytest.raises(ValueError, match="element_map is empty"):
        run(lambda x: fn.element_extract(x, element_map=[]), data)


@pytest.mark.skipif(not _stoker.cuda_available(), reason="no GPU")
def test_gpu_equals_cpu():
    data = sequences()

    def build(x):
        a, b = fn.element_extract(x, element_map=[1, 0])
        return a, b, fn.sequence_rearrange(x, new_order=[2, 1, 1, 0])
    for (lc, c), (lg, g) in zip(run(build, data), run(build, data, device="gpu")):
        assert lc == lg
        assert all(np.array_equal(x, y) for x, y in zip(c, g))
