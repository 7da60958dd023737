"""ops.Compose against DALI 2.4: DALI's docstring example (an image decoder chained with a
resize), a Compose nested in another, the call's keyword arguments going to the first operator
only, and an operator of two outputs feeding the next one's two inputs give DALI's samples.
PythonFunction needs exec_async=False and exec_pipelined=False in DALI; stoker ignores them."""

import importlib

import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, run_both

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)


def _ops(fn):
    """The ops module of the library whose fn module `fn` is (stoker.ops or nvidia.dali.ops)."""
    return importlib.import_module(fn.__name__.rsplit(".", 1)[0] + ".ops")


def _swap(a, b):
    return b, a


def test_compose_equals_dali(jpeg_folder):
    def define(fn, types):
        ops = _ops(fn)
        # DALI's docstring example, on the CPU and with a fixed size (NN: exact in both).
        decode_and_resize = ops.Compose([
            ops.decoders.Image(device="cpu"),
            ops.Resize(size=(24, 40), interp_type=types.INTERP_NN),
        ])
        nested = ops.Compose([ops.Compose([ops.decoders.Image()]),
                              ops.Compose([ops.Flip(horizontal=1), ops.Cast(dtype=types.FLOAT)])])
        # Two outputs (the reader's) go to the next operator as its two inputs.
        read_swapped = ops.Compose([ops.readers.File(file_root=jpeg_folder),
                                    ops.PythonFunction(function=_swap, num_outputs=2)])
        labels, jpegs = read_swapped()
        gray = decode_and_resize(jpegs, output_type=types.GRAY)  # the decoder's argument
        return decode_and_resize(jpegs), gray, nested(jpegs), labels

    out = run_both(define, 4, iterations=2, exec_async=False, exec_pipelined=False)
    for it in range(2):
        for k, what in enumerate(("decode+resize", "gray", "nested", "labels")):
            assert_same(out["stoker"][it][k], out["dali"][it][k], what=f"{what}, step {it}")
    assert out["stoker"][0][1][0].shape == (24, 40, 1)
    assert out["stoker"][0][2][0].dtype == np.float32


def test_compose_of_one_operator_is_the_operator():
    for ops in (dali.ops, importlib.import_module("stoker.ops")):
        flip = ops.Flip()
        assert ops.Compose([flip]) is flip
