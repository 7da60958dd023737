"""io.file.read, decoders.numpy, decoders.inflate and dump_image: values against independent
writers (numpy's .npy writer, the lz4 package's LZ4 blocks, the Netpbm text DALI writes), every
error message, and the GPU backends against the CPU ones (skipped without a GPU)."""
import io
import os
import re

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn, types

lz4_block = pytest.importorskip("lz4.block")

needs_gpu = pytest.mark.skipif(not _stoker.cuda_available(),
                               reason="no CUDA device: GPU test skipped")


def _run(define, batch_size, device="cpu", iterations=1):
    """Builds define(device) -> outputs and runs it: [iteration][output] -> numpy samples."""
    pipe = stoker.Pipeline(batch_size=batch_size, num_threads=2, seed=3,
                           device_id=0 if device == "gpu" else None)
    with pipe:
        out = define(device)
        pipe.set_outputs(*(out if isinstance(out, (list, tuple)) else [out]))
    res = []
    for _ in range(iterations):
        res.append([[np.array(s) for s in b.as_cpu()] for b in pipe.run()])
    return res[0] if iterations == 1 else res


def _source(samples, device="cpu"):
    return fn.external_source(lambda: samples, device=device)


def _raises(kind, message, define, batch_size=1, device="cpu"):
    with pytest.raises(kind, match=re.escape(message)):
        _run(define, batch_size, device)


def _path(p):
    return np.frombuffer(str(p).encode(), dtype=np.uint8)


def _npy(array, version=None):
    b = io.BytesIO()
    np.lib.format.write_array(b, array, version=version)
    return np.frombuffer(b.getvalue(), dtype=np.uint8)


def _lz4(array):
    raw = np.ascontiguousarray(array).tobytes()
    return np.frombuffer(lz4_block.compress(raw, store_size=False), dtype=np.uint8)


# ---- io.file.read ------------------------------------------------------------------------------

@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(1)
    contents = [b"hello", b"", rng.integers(0, 256, 70000, dtype=np.uint8).tobytes(), b"x" * 4096]
    paths = []
    for k, c in enumerate(contents):
        p = tmp_path / f"f{k}.bin"
        p.write_bytes(c)
        paths.append(p)
    return paths, contents


@pytest.mark.parametrize("kwargs", [{}, {"dont_use_mmap": True},
                                    {"dont_use_mmap": True, "use_o_direct": True},
                                    {"use_o_direct": True}])
def test_file_read_gives_each_files_bytes(files, kwargs):
    paths, contents = files
    (out,) = _run(lambda d: fn.io.file.read(_source([_path(p) for p in paths]), **kwargs),
                  len(paths))
    for got, want in zip(out, contents):
        assert got.dtype == np.uint8 and got.shape == (len(want),)
        assert got.tobytes() == want


def test_file_read_paths_end_at_nul_take_int8_and_may_be_relative(files, monkeypatch):
    paths, contents = files
    monkeypatch.chdir(paths[0].parent)
    padded = np.zeros(300, np.uint8)
    padded[:len(str(paths[3]))] = _path(paths[3])
    samples = [padded, _path(paths[0]), _path("f2.bin")]
    (out,) = _run(lambda d: fn.io.file.read(_source(samples)), 3)
    assert [o.tobytes() for o in out] == [contents[3], contents[0], contents[2]]
    (out,) = _run(lambda d: fn.io.file.read(_source([_path(paths[0]).astype(np.int8)])), 1)
    assert out[0].tobytes() == contents[0]


def test_file_read_then_decode_names_the_file_in_errors(files):
    paths, _ = files
    define = lambda d: fn.decoders.numpy(fn.io.file.read(_source([_path(paths[0])])))  # noqa
    _raises(ValueError, f"(source '{paths[0]}')", define)
    _raises(ValueError, "decoders.numpy: not a .npy file (bad magic)", define)


def test_file_read_errors(tmp_path):
    missing = tmp_path / "missing.bin"
    _raises(IOError, f"io.file.read: cannot open '{missing}': No such file or directory",
            lambda d: fn.io.file.read(_source([_path(missing)])))
    _raises(IOError, f"io.file.read: '{tmp_path}' is a folder, not a file",
            lambda d: fn.io.file.read(_source([_path(tmp_path)])))
    _raises(TypeError, "io.file.read: the file paths must be uint8 or int8 tensors (each path's "
            "UTF-8 bytes), got int32",
            lambda d: fn.io.file.read(_source([_path(missing).astype(np.int32)])))
    _raises(ValueError, "io.file.read: a path must be a 1-D tensor of bytes, got shape (1, 4)",
            lambda d: fn.io.file.read(_source([np.zeros((1, 4), np.uint8) + 65])))
    _raises(ValueError, "io.file.read: the path is empty",
            lambda d: fn.io.file.read(_source([np.zeros(3, np.uint8)])))


# ---- decoders.numpy --------------------------------------------------------------------------

_DTYPES = ["bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
           "float16", "float32", "float64"]


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("fortran", [False, True])
def test_numpy_decodes_every_dtype_and_order(dtype, fortran):
    rng = np.random.default_rng(2)
    arrays = [(rng.random(s) * 100).astype(dtype) for s in [(2, 3, 4), (5, 1, 7), (0, 2, 3)]]
    if fortran:
        arrays = [np.asfortranarray(a) for a in arrays]
    (out,) = _run(lambda d: fn.decoders.numpy(_source([_npy(a) for a in arrays])), 3)
    for got, want in zip(out, arrays):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_numpy_scalars_and_many_dimensions():
    arrays = [np.array(7, np.int16), np.array(-3, np.int16)]
    (out,) = _run(lambda d: fn.decoders.numpy(_source([_npy(a) for a in arrays])), 2)
    assert [o.shape for o in out] == [(), ()] and [int(o) for o in out] == [7, -3]
    deep = np.arange(2 ** 6, dtype=np.uint8).reshape((2,) * 6, order="F")
    deep = np.asfortranarray(deep)
    (out,) = _run(lambda d: fn.decoders.numpy(_source([_npy(deep)])), 1)
    np.testing.assert_array_equal(out[0], deep)


def test_numpy_bools_of_any_byte_read_as_numpy_reads_them():
    # A file may hold any byte in a bool array (the fuzzer's find: 255); numpy reads nonzero as
    # True, and so does the decoder, also when converting.
    raw = bytearray(_npy(np.array([True, False, True])))
    raw[-3], raw[-1] = 255, 2
    (plain,) = _run(lambda d: fn.decoders.numpy(_source([np.frombuffer(bytes(raw), np.uint8)])),
                    1)
    (ints,) = _run(lambda d: fn.decoders.numpy(_source([np.frombuffer(bytes(raw), np.uint8)]),
                                               dtype=types.INT32), 1)
    assert plain[0].view(np.uint8).tolist() == [1, 0, 1] and ints[0].tolist() == [1, 0, 1]


def test_numpy_dtype_converts_as_cast():
    arrays = [np.array([-1.6, 0.4, 1.6, 300.0], np.float32), np.array([7, -9], np.int32)]
    (out,) = _run(lambda d: fn.decoders.numpy(_source([_npy(a) for a in arrays]),
                                              dtype=types.UINT8), 2)
    assert all(o.dtype == np.uint8 for o in out)
    np.testing.assert_array_equal(out[0], [0, 0, 2, 255])
    np.testing.assert_array_equal(out[1], [7, 0])
    (ref,) = _run(lambda d: fn.cast(_source([np.array([-1.6, 0.4, 1.6, 300.0], np.float32)]),
                                    dtype=types.UINT8), 1)
    np.testing.assert_array_equal(out[0], ref[0])


def test_numpy_errors():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    dec = fn.decoders.numpy

    def check(kind, message, samples, **kwargs):
        _raises(kind, message, lambda d: dec(_source(samples), **kwargs), len(samples))

    check(ValueError, "decoders.numpy: the input sample is empty; expected the bytes of a .npy "
          "file", [np.zeros(0, np.uint8)])
    check(ValueError, "decoders.numpy: not a .npy file (bad magic)",
          [np.frombuffer(b"hello world, not numpy", np.uint8)])
    check(ValueError, "decoders.numpy: .npy format version 2 is not supported; decoders.numpy "
          "reads version 1 only (as DALI's)", [_npy(a, (2, 0))])
    check(ValueError, "decoders.numpy: big-endian .npy data ('>f4') is not supported; save it "
          "little-endian", [_npy(a.astype(">f4"))])
    check(ValueError, "decoders.numpy: unsupported .npy dtype '<c16'", [_npy(a.astype(complex))])
    check(ValueError, "decoders.numpy: .npy data truncated (20 of 24 bytes)", [_npy(a)[:-4]])
    check(TypeError, "decoders.numpy: sample 1 holds int32 data but sample 0 holds float32 (a "
          "batch has one dtype; give `dtype` to convert)", [_npy(a), _npy(a.astype(np.int32))])
    check(ValueError, "decoders.numpy: sample 1 has 1 dimensions but sample 0 has 2 (all samples "
          "of a batch have the same number)", [_npy(a), _npy(a.ravel())], dtype=types.FLOAT)
    check(TypeError, "decoders.numpy: the input must be the bytes of .npy files (uint8 or int8), "
          "got float32", [a.ravel()])
    with pytest.raises(TypeError, match=re.escape(
            "decoders.numpy: dtype bfloat16 is not a .npy type (bool, integers, "
            "float16/32/64)")):
        _run(lambda d: dec(_source([_npy(a)]), dtype=types.BFLOAT16), 1)


# ---- decoders.inflate --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["uint8", "int16", "float32", "float64", "bool"])
def test_inflate_single_chunks_equal_lz4(dtype):
    rng = np.random.default_rng(4)
    arrays = [(rng.random(s) * 50).astype(dtype) for s in [(4, 6), (2, 9), (1, 1)]]
    arrays[0][:2] = arrays[0][0]  # something to match
    shapes = [np.array(a.shape, np.int32) for a in arrays]
    (out,) = _run(lambda d: fn.decoders.inflate(
        _source([_lz4(a) for a in arrays]), shape=_source(shapes), dtype=np.dtype(dtype).name,
        layout="HW"), 3)
    for got, want in zip(out, arrays):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def _sequence(frames):
    blocks = [_lz4(f) for f in frames]
    sizes = np.array([len(b) for b in blocks], np.int32)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int32)
    return np.concatenate(blocks) if blocks else np.zeros(0, np.uint8), offsets, sizes


@pytest.mark.parametrize("given", ["offsets", "sizes", "both"])
def test_inflate_sequences_of_chunks(given):
    rng = np.random.default_rng(5)
    seqs = [rng.integers(0, 9, (n, 3, 2, 3), dtype=np.uint8) for n in (3, 1, 5)]
    packed = [_sequence(s) for s in seqs]
    data = [p[0] for p in packed]
    pipe = stoker.Pipeline(batch_size=3, num_threads=2, seed=1)
    with pipe:
        kw = {}
        if given in ("offsets", "both"):
            kw["chunk_offsets"] = _source([p[1] for p in packed])
        if given in ("sizes", "both"):
            kw["chunk_sizes"] = _source([p[2] for p in packed])
        pipe.set_outputs(fn.decoders.inflate(_source(data), shape=[3, 2, 3], layout="HWC",
                                             sequence_axis_name="Z", **kw))
    (out,) = pipe.run()
    assert out.layout() == "ZHWC"
    for k, s in enumerate(seqs):
        np.testing.assert_array_equal(np.array(out.as_cpu()[k]), s)


def test_inflate_no_chunks_tail_zeros_and_the_deprecated_name():
    frame = np.arange(10, dtype=np.uint8)
    block = _lz4(frame)
    (out,) = _run(lambda d: fn.decoders.inflate(_source([block]), shape=[2, 8],
                                                chunk_offsets=[]), 1)
    assert out[0].shape == (0, 2, 8)
    (out,) = _run(lambda d: fn.decoders.inflate(_source([block]), shape=[16]), 1)
    np.testing.assert_array_equal(out[0], np.concatenate([frame, np.zeros(6, np.uint8)]))
    with pytest.warns(DeprecationWarning, match="decoders.inflate"):
        (old,) = _run(lambda d: fn.experimental.inflate(_source([block]), shape=[16]), 1)
    np.testing.assert_array_equal(old[0], out[0])


def test_inflate_errors():
    block = _lz4(np.arange(40, dtype=np.uint8))
    inf = fn.decoders.inflate

    def check(kind, message, samples, **kwargs):
        _raises(kind, message, lambda d: inf(_source(samples), **kwargs), len(samples))

    check(TypeError, "decoders.inflate: the input must be compressed bytes, a 1-D uint8 tensor "
          "per sample; got int8", [block.astype(np.int8)], shape=[40])
    check(ValueError, "decoders.inflate: the input must be a 1-D uint8 tensor per sample; sample "
          "0 has shape (1, 12)", [np.zeros((1, 12), np.uint8)], shape=[4])
    check(ValueError, "decoders.inflate: sample 1 is empty (0 bytes)",
          [block, np.zeros(0, np.uint8)], shape=[40])
    check(ValueError, "decoders.inflate: the shape of sample 0 has a negative extent (-4)",
          [block], shape=[-4])
    _raises(ValueError, "decoders.inflate: the shape of sample 1 has 1 extents but that of sample "
            "0 has 2 (all samples have the same number)",
            lambda d: inf(_source([block, block]), shape=_source(
                [np.array([4, 10], np.int32), np.array([40], np.int32)])), 2)
    check(ValueError, "decoders.inflate: the layout 'HWC' has 3 dimensions but the shape has 1",
          [block], shape=[40], layout="HWC")
    check(ValueError, "decoders.inflate: unknown algorithm 'zstd' (LZ4 is the only one)",
          [block], shape=[40], algorithm="zstd")
    check(ValueError, "decoders.inflate: sequence_axis_name must be a single character, got "
          "'FF'", [block], shape=[40], sequence_axis_name="FF")
    n = len(block)
    check(ValueError, "decoders.inflate: chunk offsets must not be negative; sample 0 has -1",
          [block], shape=[40], chunk_offsets=[-1])
    check(ValueError, f"decoders.inflate: chunk offset {n} of sample 0 is past its last byte "
          f"(the sample has {n} bytes)", [block], shape=[40], chunk_offsets=[n])
    check(ValueError, "decoders.inflate: chunk sizes must be positive; sample 0 has 0",
          [block], shape=[40], chunk_sizes=[0])
    check(ValueError, f"decoders.inflate: chunk size {n + 1} of sample 0 exceeds the sample's "
          f"{n} bytes", [block], shape=[40], chunk_sizes=[n + 1])
    check(ValueError, "decoders.inflate: sample 0 has 2 chunk_offsets but 1 chunk_sizes",
          [block], shape=[40], chunk_offsets=[0, 1], chunk_sizes=[1])
    check(ValueError, f"decoders.inflate: chunk 0 of sample 0 (offset 1, size {n}) ends past "
          f"the sample's {n} bytes", [block], shape=[40], chunk_offsets=[1], chunk_sizes=[n])
    check(ValueError, "decoders.inflate: without chunk_sizes the chunk_offsets must increase "
          "strictly; those of sample 0 do not", [block], shape=[40], chunk_offsets=[2, 2])
    check(ValueError, f"decoders.inflate: the chunk_sizes of sample 0 add up to {n + 2} bytes, "
          f"more than the sample's {n}", [block], shape=[40], chunk_sizes=[n - 1, 3])
    check(ValueError, "decoders.inflate: chunk 0 inflates to more than the 39 bytes of an output "
          "chunk (`shape` and `dtype` give its size)", [block], shape=[39])
    check(ValueError, f"decoders.inflate: chunk 0 (bytes 0 to {n - 2} of the sample) is not a "
          "valid LZ4 block", [block[:-2].copy()], shape=[40])


@needs_gpu
def test_inflate_gpu_equals_cpu():
    rng = np.random.default_rng(6)
    seqs = [rng.integers(0, 4, (n, 5, 7), dtype=np.uint8) for n in (2, 4, 1)]
    packed = [_sequence(s) for s in seqs]

    def define(device):
        data = _source([p[0] for p in packed])
        data = data.gpu() if device == "gpu" else data
        return fn.decoders.inflate(data, shape=[5, 8], chunk_sizes=_source([p[2] for p in packed]),
                                   layout="HW", device=device)
    cpu, = _run(define, 3)
    gpu, = _run(define, 3, device="gpu")
    for c, g in zip(cpu, gpu):
        np.testing.assert_array_equal(c, g)


# ---- dump_image --------------------------------------------------------------------------------

def _netpbm(img):
    """The text DALI 2.4 writes (checked with it: P3 / P2 ASCII, a space after every value)."""
    h, w, c = img.shape
    rows = ["".join(f"{v} " for v in row.ravel()) for row in img]
    return (f"P{3 if c == 3 else 2}\n{w} {h}\n255\n" + "".join(r + "\n" for r in rows)).encode()


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=needs_gpu)])
def test_dump_image_writes_dalis_files_and_passes_through(tmp_path, monkeypatch, device):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(7)
    imgs = [rng.integers(0, 256, (3, 4, 3), dtype=np.uint8),
            rng.integers(0, 256, (2, 5, 1), dtype=np.uint8)]
    (out,) = _run(lambda d: fn.dump_image(_source(imgs, d), suffix="dbg"), 2, device)
    for got, want in zip(out, imgs):
        np.testing.assert_array_equal(got, want)
    assert sorted(os.listdir(tmp_path)) == ["0-dbg-0.ppm", "1-dbg-0.ppm"]
    for k, img in enumerate(imgs):
        assert (tmp_path / f"{k}-dbg-0.ppm").read_bytes() == _netpbm(img)
    _run(lambda d: fn.dump_image(_source(imgs[:1], d)), 1, device)
    assert (tmp_path / "0--0.ppm").read_bytes() == _netpbm(imgs[0])


def test_dump_image_errors(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    dump = fn.dump_image
    _raises(TypeError, "dump_image: expected uint8 images, got float32",
            lambda d: dump(_source([np.zeros((2, 2, 3), np.float32)])))
    _raises(ValueError, "dump_image: sample 0 must be an HWC image (3 dimensions), got shape "
            "(2, 2)", lambda d: dump(_source([np.zeros((2, 2), np.uint8)])))
    _raises(ValueError, "dump_image: sample 0 has 4 channels; only grey (1) and colour (3) "
            "images are written", lambda d: dump(_source([np.zeros((2, 2, 4), np.uint8)])))
    _raises(ValueError, "dump_image: sample 0 is an empty image (shape (0, 2, 3)): nothing to "
            "write", lambda d: dump(_source([np.zeros((0, 2, 3), np.uint8)])))
    _raises(ValueError, "dump_image: input_layout must be 'HWC' (DALI's dump_image writes HWC "
            "images only), got 'CHW'",
            lambda d: dump(_source([np.zeros((2, 2, 3), np.uint8)]), input_layout="CHW"))
    assert os.listdir(tmp_path) == []
