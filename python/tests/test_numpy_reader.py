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


def _roi_arrays(tmp_path):
    rng = np.random.default_rng(9)
    arrays = [rng.integers(-100, 100, size=s).astype(np.int16) for s in [(6, 8, 3), (5, 4, 2)]]
    for i, a in enumerate(arrays):
        np.save(tmp_path / f"r{i}.npy", np.asfortranarray(a) if i else a)
    return arrays


def _pad_slice(a, start, end, fill):
    """numpy reference: a[start:end] with positions outside `a` set to `fill`."""
    out = np.full([e - s for s, e in zip(start, end)], fill, a.dtype)
    src = tuple(slice(max(s, 0), min(e, n)) for s, e, n in zip(start, end, a.shape))
    dst = tuple(slice(max(s, 0) - s, max(s, 0) - s + (min(e, n) - max(s, 0)))
                for s, e, n in zip(start, end, a.shape))
    if all(d.stop > d.start for d in dst):
        out[dst] = a[src]
    return out


@pytest.mark.parametrize("case", [
    dict(roi_start=[1, 2], roi_end=[4, 4], roi_axes=[0, 1]),
    dict(roi_start=[1], roi_shape=[1], roi_axes=[2]),
    dict(rel_roi_start=[0.5, 0.25, 0.0], rel_roi_end=[1.0, 0.75, 0.5]),
    dict(rel_roi_start=[0.2], rel_roi_shape=[0.5], roi_axes=[1]),
    dict(roi_end=[3], roi_axes=[0]),
])
def test_roi_constants_match_numpy_slicing(tmp_path, case):
    arrays = _roi_arrays(tmp_path)
    (b,) = _pipe(2, file_root=str(tmp_path), **case).run()
    for i, a in enumerate(arrays):
        axes = case.get("roi_axes") or list(range(a.ndim))
        start, end = [0] * a.ndim, list(a.shape)
        for k, ax in enumerate(axes):
            n = a.shape[ax]
            if "roi_start" in case:
                start[ax] = case["roi_start"][k]
            if "rel_roi_start" in case:
                start[ax] = int(np.floor(case["rel_roi_start"][k] * n + 0.5))
            if "roi_end" in case:
                end[ax] = case["roi_end"][k]
            if "rel_roi_end" in case:
                end[ax] = int(np.floor(case["rel_roi_end"][k] * n + 0.5))
            if "roi_shape" in case:
                end[ax] = start[ax] + case["roi_shape"][k]
            if "rel_roi_shape" in case:
                end[ax] = start[ax] + int(np.floor(case["rel_roi_shape"][k] * n + 0.5))
        expect = a[tuple(slice(s, e) for s, e in zip(start, end))]
        np.testing.assert_array_equal(b[i].numpy(), expect)


def test_roi_out_of_bounds_policies_and_per_sample_arguments(tmp_path):
    arrays = _roi_arrays(tmp_path)
    starts = [np.array([-2, 6], np.int64), np.array([3, -1], np.int64)]
    shapes = [np.array([5, 4], np.int64), np.array([4, 7], np.int64)]

    def run(**kwargs):
        pipe = stoker.Pipeline(batch_size=2, num_threads=2, seed=0)
        with pipe:
            s = fn.external_source(lambda: starts)
            sh = fn.external_source(lambda: shapes)
            pipe.set_outputs(fn.readers.numpy(file_root=str(tmp_path), roi_start=s,
                                              roi_shape=sh, roi_axes=[0, 1], **kwargs))
        return pipe.run()[0]

    b = run(out_of_bounds_policy="pad", fill_value=-5)
    for i, a in enumerate(arrays):
        st = [int(starts[i][0]), int(starts[i][1]), 0]
        en = [st[0] + int(shapes[i][0]), st[1] + int(shapes[i][1]), a.shape[2]]
        np.testing.assert_array_equal(b[i].numpy(), _pad_slice(a, st, en, -5))
    b = run(out_of_bounds_policy="trim_to_shape")
    for i, a in enumerate(arrays):
        st = [int(starts[i][0]), int(starts[i][1])]
        en = [st[0] + int(shapes[i][0]), st[1] + int(shapes[i][1])]
        expect = a[max(st[0], 0):min(en[0], a.shape[0]), max(st[1], 0):min(en[1], a.shape[1])]
        np.testing.assert_array_equal(b[i].numpy(), expect)
    with pytest.raises(ValueError, match="r0.npy'\\): the ROI \\[-2, 3\\) of axis 0 lies outside "
                                         "the array of shape \\(6, 8, 3\\)"):
        run()


def test_roi_argument_errors(tmp_path):
    _roi_arrays(tmp_path)
    for kwargs, message in [
        (dict(roi_start=[1, 2]), "roi_start has 2 values for 3 ROI axes"),
        (dict(roi_start=[1], rel_roi_start=[0.5], roi_axes=[0]),
         "give roi_start or rel_roi_start, not both"),
        (dict(roi_end=[1], roi_shape=[1], roi_axes=[0]),
         "give one of roi_end, rel_roi_end, roi_shape and rel_roi_shape"),
        (dict(roi_start=[3], roi_end=[1], roi_axes=[0]), "the ROI of axis 0 ends \\(1\\) before "
                                                          "it starts \\(3\\)"),
        (dict(roi_end=[1], roi_axes=[5]), "roi_axes names axis 5 of a 3-D array"),
        (dict(out_of_bounds_policy="wrap"), "out_of_bounds_policy must be 'error', "
                                            "'trim_to_shape' or 'pad', got 'wrap'"),
    ]:
        with pytest.raises(ValueError, match=message):
            _pipe(2, file_root=str(tmp_path), **kwargs).run()


def test_file_list_and_o_direct(tmp_path):
    arrays = [np.arange(k + 2, dtype=np.float32) * k for k in range(4)]
    (tmp_path / "d").mkdir()
    for k, a in enumerate(arrays):
        np.save(tmp_path / "d" / f"x{k}.npy", a)
    # Relative to the list's folder, or to file_root when given; blank lines and spaces dropped.
    (tmp_path / "d" / "list.txt").write_text("x2.npy\n\n  x0.npy \r\nx3.npy\n")
    (tmp_path / "list.txt").write_text("d/x1.npy\n")
    for kwargs, want in [(dict(file_list=str(tmp_path / "d" / "list.txt")), [2, 0, 3]),
                         (dict(file_list=str(tmp_path / "list.txt"), file_root=str(tmp_path)),
                          [1]),
                         (dict(file_root=str(tmp_path / "d"), use_o_direct=True,
                               dont_use_mmap=True), [0, 1, 2, 3])]:
        pipe = _pipe(len(want), **kwargs)
        assert pipe.epoch_size("R") == len(want)
        (b,) = pipe.run()
        for i, k in enumerate(want):
            np.testing.assert_array_equal(b[i].numpy(), arrays[k])


def test_file_list_and_o_direct_errors(tmp_path):
    np.save(tmp_path / "x.npy", np.zeros(2))
    (tmp_path / "empty.txt").write_text("\n \n")
    cases = [(dict(file_root=str(tmp_path), use_o_direct=True),
              "use_o_direct reads with plain file I/O, not a mapping: give dont_use_mmap=True"),
             (dict(file_list=str(tmp_path / "empty.txt")), "file_list '.*empty.txt' names no files"),
             (dict(file_list=str(tmp_path / "missing.txt")), "cannot open file_list '.*missing"),
             (dict(file_list=str(tmp_path / "empty.txt"), files=["x.npy"]),
              "give `files` or `file_list`, not both")]
    for kwargs, message in cases:
        with pytest.raises((ValueError, OSError), match="readers.numpy.*" + message):
            _pipe(1, **kwargs).build()
