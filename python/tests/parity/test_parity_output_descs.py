"""Pipeline(output_dtype=, output_ndim=, output_layout=) as DALI 2.4 checks them: the count of
declarations against the outputs at build(), every batch at run(), single values broadcast,
None as a wildcard, wrong types refused when the Pipeline is made — the same pipeline on both
libraries (only the import differs), the same exceptions and messages (DALI's without its
"Assert on ..." prefix). Also DALI's executor enums, which stoker accepts and ignores."""

import pytest

from parity_util import SKIP_REASON, dali

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

import stoker  # noqa: E402


def make(lib, **kw):
    m = stoker if lib == "stoker" else dali
    extra = {"device_id": None} if lib == "dali" else {}

    @m.pipeline_def(batch_size=2, num_threads=1, **extra, **kw)
    def p():
        return (m.fn.constant(fdata=[1.0, 2.0], shape=[2]),
                m.fn.constant(idata=[1], shape=[1, 1], layout="HW"))
    return p()


def outcome(lib, kw):
    """('ok', dtypes) or (stage, exception type, message) of building and running once."""
    m = stoker if lib == "stoker" else dali
    kw = {k: (getattr(m.types, v) if k == "output_dtype" and isinstance(v, str) else
              [getattr(m.types, x) if isinstance(x, str) else x for x in v]
              if k == "output_dtype" and isinstance(v, list) else v) for k, v in kw.items()}
    try:
        pipe = make(lib, **kw)
    except Exception as e:  # noqa: BLE001 (the type is what is compared)
        return ("make", type(e).__name__)
    for stage in ("build", "run"):
        try:
            getattr(pipe, stage)()
        except Exception as e:  # noqa: BLE001
            text = str(e).split(" failed: ", 1)[-1]  # DALI's "Assert on ... failed: " prefix
            return (stage, type(e).__name__, text.split("\n")[0].strip())
    return ("ok",)


CASES = [
    {"output_dtype": ["FLOAT", "INT32"]},
    {"output_dtype": "FLOAT"},
    {"output_dtype": ["FLOAT", None]},
    {"output_dtype": [None, "UINT8"]},
    {"output_dtype": ["FLOAT"] * 3},
    {"output_ndim": [1, 2]},
    {"output_ndim": 1},
    {"output_ndim": [1]},
    {"output_ndim": [None, 3]},
    {"output_layout": "HWC"},
    {"output_layout": ["", "HW"]},
    {"output_layout": [None, "CHW"]},
    {"output_dtype": "FLOAT", "output_ndim": 2},
    {"output_ndim": -1},
    {"output_ndim": [1.5, 2]},
    {"output_layout": 3},
]


@pytest.mark.parametrize("kw", CASES, ids=[str(c) for c in CASES])
def test_output_descriptions_are_checked_as_dali_checks_them(kw):
    ours, theirs = outcome("stoker", dict(kw)), outcome("dali", dict(kw))
    assert ours == theirs


def test_a_string_dtype_is_refused_on_both():
    with pytest.raises(TypeError, match="output_dtype"):
        make("stoker", output_dtype="float")
    with pytest.raises(TypeError, match="output_dtype"):
        make("dali", output_dtype="float")


def test_executor_policies_are_accepted_and_change_nothing():
    from stoker.pipeline import OperatorConcurrency, StreamPolicy
    from nvidia.dali.pipeline import OperatorConcurrency as DaliConcurrency
    from nvidia.dali.pipeline import StreamPolicy as DaliPolicy
    assert list(StreamPolicy.__members__) == list(DaliPolicy.__members__)
    assert list(OperatorConcurrency.__members__) == list(DaliConcurrency.__members__)
    assert stoker.StreamPolicy is StreamPolicy and stoker.OperatorConcurrency is OperatorConcurrency
    plain = make("stoker")
    plain.build()
    tuned = make("stoker", stream_policy=StreamPolicy.PER_OPERATOR,
                 concurrency=OperatorConcurrency.FULL)
    tuned.build()
    a, b = plain.run(), tuned.run()
    assert [x.as_array().tolist() for x in a] == [x.as_array().tolist() for x in b]
    with pytest.raises(TypeError, match="stream_policy"):
        make("stoker", stream_policy="single")


def test_max_batch_size_is_refused_as_dali_refuses_it():
    with pytest.raises(TypeError, match="max_batch_size"):
        make("dali", max_batch_size=4)
    with pytest.raises(TypeError, match="max_batch_size"):
        make("stoker", max_batch_size=4)


def test_debug_mode_checks_the_declarations_too():
    ok = make("stoker", debug=True, output_ndim=[1, 2])
    ok.build()
    assert [b.ndim() for b in ok.run()] == [1, 2]
    wrong = make("stoker", debug=True, output_layout=["", "CHW"])
    wrong.build()
    with pytest.raises(RuntimeError, match="Layout in the output_idx=1 does not match. Expected: "
                       "CHW. Received: HW."):
        wrong.run()
