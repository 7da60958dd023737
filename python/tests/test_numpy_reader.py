"""readers.numpy against files written by numpy itself."""

import numpy as np
import pytest

import stoker
from stoker import fn


def _pipe(batch, **kwargs):
    pipe = stoker.Pipeline(batch_size=batch, num_threads=2, seed=0)
    with pipe:
        pipe.set_outputs(fn.readers.numpy(name="R", **kwargs))
    return pipe


@pytest.mark.parametrize("dtype", ["uint8", "int16", "int64", "float16", "float32", "float64",
                                   "bool"])
def test_arrays_match_what_numpy_saved(tmp_path, dtype):
    rng = np.random.default_rng(1)
    arrays = []
    for i, shape in enumerate([(3, 4), (2, 5, 3), (7,), (), (0, 3), (4, 3)]):
        a = (rng.normal(size=shape) * 50).astype(dtype)
        if i % 2:
            a = np.asfortranarray(a)  # saved with fortran_order=True
        np.save(tmp_path / f"a{i}.npy", a)
        arrays.append(a)
    (tmp_path / "skip.txt").write_text("not an array")
    pipe = _pipe(6, file_root=str(tmp_path))
    assert pipe.epoch_size("R") == 6
    (b,) = pipe.run()
    for i, a in enumerate(arrays):
        got = b[i].numpy()
        assert got.shape == a.shape and got.dtype == a.dtype
        np.testing.assert_array_equal(got, a)
    assert b.source_info(2).endswith("a2.npy")


def test_version_2_headers_and_explicit_files(tmp_path):
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    with open(tmp_path / "v2.npy", "wb") as f:
        np.lib.format.write_array(f, a, version=(2, 0))
    (b,) = _pipe(1, files=["v2.npy"], file_root=str(tmp_path)).run()
    np.testing.assert_array_equal(b.at(0), a)


def test_bad_files_are_reported(tmp_path):
    np.save(tmp_path / "a.npy", np.zeros(3, np.float32))
    np.save(tmp_path / "b.npy", np.zeros(3, np.int64))
    (tmp_path / "c.npy").write_bytes(b"\x93NUMPY\x01\x00\x10\x00{'descr': '>f4'")
    pipe = _pipe(3, file_root=str(tmp_path))
    with pytest.raises(TypeError, match=r"sample 1 \(source '.*b.npy'\): the array has dtype "
                                        r"int64, but the first file of the dataset has float32"):
        pipe.run()
    big = np.zeros(3, ">f4")
    np.save(tmp_path / "big.npy", big)
    pipe = _pipe(1, files=[str(tmp_path / "big.npy")])
    with pytest.raises(ValueError, match="big-endian .npy data .* is not supported"):
        pipe.build()
    (tmp_path / "trunc.npy").write_bytes((tmp_path / "a.npy").read_bytes()[:-4])
    pipe = _pipe(1, files=[str(tmp_path / "trunc.npy")])
    with pytest.raises(ValueError, match=r"trunc.npy: .npy data truncated \(8 of 12 bytes\)"):
        pipe.build()
