"""io.file.read, decoders.numpy, dump_image and decoders.inflate against DALI 2.4: the same
bytes read, the same arrays decoded (dtype conversions included), the same files written, and
for decoders.inflate — whose only DALI backend is nvCOMP on the GPU — stoker's cpu backend on
what DALI documents (its schema and its docstring's sequence example)."""
import io
import os

import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, run, run_both

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PARITY = {
    "io.file.read": "exact",
    "decoders.numpy": "exact",
    "dump_image": "exact",
    "decoders.inflate": "documented: DALI has only a gpu backend (nvCOMP); stoker's cpu backend "
                        "is compared with DALI's schema and documented example",
}


def _path(p):
    return np.frombuffer(str(p).encode(), dtype=np.uint8)


def _npy(array):
    b = io.BytesIO()
    np.save(b, array)
    return np.frombuffer(b.getvalue(), dtype=np.uint8)


@pytest.mark.parametrize("dont_use_mmap", [False, True])
def test_file_read_equals_dali(tmp_path, dont_use_mmap):
    rng = np.random.default_rng(3)
    # Not an empty file: DALI's mapping fails on one (docs/dali_differences.md).
    paths = []
    for k, n in enumerate([5, 70000, 4096, 1]):
        p = tmp_path / f"f{k}.bin"
        p.write_bytes(rng.integers(0, 256, n, dtype=np.uint8).tobytes())
        paths.append(p)

    def define(fn, types):
        return fn.io.file.read(fn.external_source(lambda: [_path(p) for p in paths]),
                               dont_use_mmap=dont_use_mmap)
    out = run_both(define, len(paths))
    assert_same(out["stoker"][0][0], out["dali"][0][0], what="io.file.read")


_ARRAYS = [np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7.5,
           (np.arange(60, dtype=np.float32).reshape(5, 3, 4) * 1.37 - 20),
           np.zeros((0, 3, 4), np.float32)]


@pytest.mark.parametrize("dtype", ["bool", "uint8", "uint16", "uint32", "uint64", "int8",
                                   "int16", "int32", "int64", "float16", "float32", "float64"])
def test_numpy_decoder_equals_dali(dtype):
    arrays = [a.astype(dtype) for a in _ARRAYS] + [np.ones((1, 1, 1), dtype)]

    def define(fn, types):
        return fn.decoders.numpy(fn.external_source(lambda: [_npy(a) for a in arrays]))
    out = run_both(define, len(arrays))
    assert_same(out["stoker"][0][0], out["dali"][0][0], what=f"decoders.numpy {dtype}")


@pytest.mark.parametrize("to", ["UINT8", "INT16", "FLOAT16", "FLOAT64", "BOOL"])
def test_numpy_decoder_conversions_equal_dali(to):
    # Ties (x.5), negatives and values out of range: rounding and saturation as DALI's.
    arrays = [np.array([-300.0, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.49, 254.5, 1e6], np.float32),
              np.array([-3, 0, 7, 70000], np.int32).astype(np.float32)]

    def define(fn, types):
        return fn.decoders.numpy(fn.external_source(lambda: [_npy(a) for a in arrays]),
                                 dtype=getattr(types, to))
    out = run_both(define, len(arrays))
    assert_same(out["stoker"][0][0], out["dali"][0][0], what=f"decoders.numpy to {to}")


def test_read_then_decode_equals_dali(tmp_path):
    paths = []
    for k, a in enumerate(_ARRAYS[:2]):
        p = tmp_path / f"a{k}.npy"
        np.save(p, a.astype(np.int16))
        paths.append(p)

    def define(fn, types):
        return fn.decoders.numpy(fn.io.file.read(fn.external_source(
            lambda: [_path(p) for p in paths])))
    out = run_both(define, len(paths))
    assert_same(out["stoker"][0][0], out["dali"][0][0], what="io.file.read + decoders.numpy")


@pytest.mark.parametrize("samples", [
    [2],                  # .npy format version 2
    [0, 1],               # float32 then int32 without `dtype`
    [0, 3],               # 3-D then 1-D
    [4],                  # not a .npy file
])
def test_numpy_decoder_refuses_what_dali_refuses(samples):
    a = np.arange(6, dtype=np.float32).reshape(2, 3, 1)
    b = io.BytesIO()
    np.lib.format.write_array(b, a, version=(2, 0))
    table = [_npy(a), _npy(a.astype(np.int32)), np.frombuffer(b.getvalue(), np.uint8),
             _npy(a.ravel()), np.frombuffer(b"not an npy file at all", np.uint8)]
    for lib in ("stoker", "dali"):
        def define(fn, types):
            return fn.decoders.numpy(fn.external_source(lambda: [table[k] for k in samples]))
        with pytest.raises((RuntimeError, ValueError, TypeError)):
            run(lib, define, len(samples))


def test_dump_image_writes_the_files_dali_writes(tmp_path, monkeypatch):
    rng = np.random.default_rng(9)
    imgs = [rng.integers(0, 256, (4, 5, 3), dtype=np.uint8),
            rng.integers(0, 256, (3, 2, 1), dtype=np.uint8)]
    written = {}
    for lib in ("stoker", "dali"):
        folder = tmp_path / lib
        folder.mkdir()
        monkeypatch.chdir(folder)

        def define(fn, types):
            return fn.dump_image(fn.external_source(lambda: imgs, layout="HWC"), suffix="s")
        out = run(lib, define, len(imgs), prefetch_queue_depth=1)
        assert_same(out[0][0], imgs, what=f"dump_image output ({lib})")
        written[lib] = {f: (folder / f).read_bytes() for f in sorted(os.listdir(folder))}
    assert list(written["stoker"]) == ["0-s-0.ppm", "1-s-0.ppm"]
    assert written["stoker"] == written["dali"]


def test_inflate_arguments_are_dalis():
    schema = dali.backend.GetSchema("decoders__Inflate")
    import stoker
    ours = {s["name"]: s for s in stoker._stoker.schemas()}["decoders.inflate"]
    our_args = {a["name"]: a for a in ours["args"]}
    theirs = set(schema.GetArgumentNames()) - {"bytes_per_sample_hint", "preserve"}
    assert set(our_args) == theirs
    for name, default in [("algorithm", "LZ4"), ("layout", ""), ("sequence_axis_name", "F"),
                          ("check_output_size", False)]:
        assert schema.GetArgumentDefaultValueString(name).strip("'") == str(default)
    old = dali.backend.GetSchema("experimental__Inflate")
    assert old.IsDeprecated() and old.DeprecatedInFavorOf() == "decoders__Inflate"
    assert ours["deprecated_names"] == ["experimental.inflate"]


def test_inflate_runs_dalis_documented_sequence_example():
    """DALI's docstring: each frame compressed on its own, the frames of a sequence
    concatenated, fn.decoders.inflate(..., chunk_sizes=..., shape=HWC, layout="HWC",
    sequence_axis_name="F") gives the FHWC sequences."""
    lz4_block = pytest.importorskip("lz4.block")
    import stoker
    rng = np.random.default_rng(11)
    seqs = [rng.integers(0, 5, (n, 4, 6, 3), dtype=np.uint8) for n in (3, 1, 2)]
    blocks = [[lz4_block.compress(f.tobytes(), store_size=False) for f in s] for s in seqs]
    data = [np.frombuffer(b"".join(b), np.uint8) for b in blocks]
    sizes = [np.array([len(x) for x in b], np.int32) for b in blocks]
    shapes = [np.array([4, 6, 3], np.int32)] * 3

    @stoker.pipeline_def(batch_size=3, num_threads=2, device_id=None)
    def inflate_sequence_pipeline():
        compres_seq = stoker.fn.external_source(lambda: data)
        uncompres_hwc_shape = stoker.fn.external_source(lambda: shapes)
        compres_chunk_sizes = stoker.fn.external_source(lambda: sizes)
        return stoker.fn.decoders.inflate(compres_seq, chunk_sizes=compres_chunk_sizes,
                                          shape=uncompres_hwc_shape, layout="HWC",
                                          sequence_axis_name="F")
    pipe = inflate_sequence_pipeline()
    pipe.build()
    (out,) = pipe.run()
    assert out.layout() == "FHWC"
    for k, s in enumerate(seqs):
        np.testing.assert_array_equal(np.array(out.at(k)), s)
