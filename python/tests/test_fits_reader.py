"""experimental.readers.fits against files written, and arrays decoded, by astropy: plain images
of every BITPIX (unsigned types through BZERO, as FITS defines them), scaled images, several
HDUs per file, tile-compressed images (Rice and the other algorithms cfitsio decodes), gzipped
files; and every error: damaged files named, headers declaring more data than the file holds
refused before anything is allocated, bad arguments named."""

import gzip
import shutil

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn, ops, types

fits = pytest.importorskip("astropy.io.fits", reason="astropy writes the test files")
if not _stoker.build_info()["cfitsio"]:
    pytest.skip("stoker was built without cfitsio", allow_module_level=True)

DTYPES = ["uint8", "int8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32",
          "float64"]


def _pipe(batch, **kwargs):
    pipe = stoker.Pipeline(batch_size=batch, num_threads=2, seed=0)
    with pipe:
        out = fn.experimental.readers.fits(name="R", **kwargs)
        pipe.set_outputs(*(out if isinstance(out, (list, tuple)) else [out]))
    return pipe


def _array(rng, dtype, shape):
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    return rng.normal(size=shape).astype(dtype) * 100


def _write(path, *hdus, primary=None):
    fits.HDUList([primary or fits.PrimaryHDU(), *hdus]).writeto(path, overwrite=True)


def _astropy(path, hdu=1):
    """The array astropy decodes from HDU `hdu` (0-based, astropy's count), in native order."""
    with fits.open(path) as f:
        data = f[hdu].data
        return data.astype(data.dtype.newbyteorder("="))


@pytest.mark.parametrize("dtype", DTYPES)
def test_images_are_astropys_arrays(tmp_path, dtype):
    rng = np.random.default_rng(1)
    arrays = [_array(rng, dtype, s) for s in [(5, 7), (3, 9), (1, 11), (8, 2)]]
    for i, a in enumerate(arrays):
        _write(tmp_path / f"f{i}.fits", fits.ImageHDU(a))
    (tmp_path / "notes.txt").write_text("not a FITS file")  # file_filter skips it
    pipe = _pipe(4, file_root=str(tmp_path))
    assert pipe.epoch_size("R") == 4
    (b,) = pipe.run()
    for i, a in enumerate(arrays):
        got = b.at(i)
        want = _astropy(tmp_path / f"f{i}.fits")
        assert got.dtype == np.dtype(dtype) and got.shape == a.shape
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, a)
    assert b.source_info(2).endswith("f2.fits")
    for shape in [(11,), (3, 4, 6), (2, 1, 3, 2)]:  # an output's samples share their ndim
        a = _array(rng, dtype, shape)
        _write(tmp_path / "nd.fits", fits.ImageHDU(a))
        (b,) = _pipe(1, files=[str(tmp_path / "nd.fits")]).run()
        assert b.at(0).dtype == np.dtype(dtype) and b.at(0).shape == shape
        np.testing.assert_array_equal(b.at(0), a)


def test_bzero_and_bscale_as_fits_defines_them(tmp_path):
    rng = np.random.default_rng(2)
    raw16 = rng.integers(-1000, 1000, size=(4, 6)).astype(np.int16)
    raw32 = rng.integers(-10**6, 10**6, size=(3, 5)).astype(np.int32)
    raw8 = rng.integers(0, 255, size=(2, 9)).astype(np.uint8)
    hdus = []
    for raw in (raw16, raw32, raw8):
        h = fits.ImageHDU(raw.copy())
        h.header["BSCALE"], h.header["BZERO"] = 0.37, 12.1
        hdus.append(h)
    signed8 = fits.ImageHDU(raw8.copy())  # BITPIX 8 with BZERO -128: int8
    signed8.header["BZERO"] = -128
    _write(tmp_path / "s.fits", *hdus, signed8)
    outs = _pipe(1, files=["s.fits"], file_root=str(tmp_path), hdu_indices=[2, 3, 4, 5]).run()
    got = [o.at(0) for o in outs]
    # cfitsio scales in double and then rounds to the output type (float32 for BITPIX 8 and
    # 16, float64 for 32), as DALI reads; astropy scales 16-bit data in float32, a last-bit
    # difference at most.
    assert [g.dtype for g in got] == [np.float32, np.float64, np.float32, np.int8]
    for g, raw in zip(got, (raw16, raw32, raw8)):
        np.testing.assert_array_equal(g, (raw.astype(np.float64) * 0.37 + 12.1).astype(g.dtype))
    np.testing.assert_array_max_ulp(got[0], _astropy(tmp_path / "s.fits", 1), maxulp=1)
    np.testing.assert_array_equal(got[1], _astropy(tmp_path / "s.fits", 2))
    np.testing.assert_array_equal(got[3], raw8.astype(np.int16) - 128)
    np.testing.assert_array_equal(got[3], _astropy(tmp_path / "s.fits", 4))


def test_one_output_per_hdu_index_in_the_order_given(tmp_path):
    rng = np.random.default_rng(3)
    primary = rng.integers(0, 100, size=(2, 3)).astype(np.int16)
    first = rng.normal(size=(4, 5)).astype(np.float32)
    second = rng.integers(0, 9, size=(6,)).astype(np.uint8)
    table = fits.BinTableHDU.from_columns([fits.Column(name="x", format="J", array=[1, 2])])
    for k in range(3):
        _write(tmp_path / f"m{k}.fits", fits.ImageHDU(first + k), table,
               fits.ImageHDU(second + k), primary=fits.PrimaryHDU(primary + k))
    pipe = _pipe(3, file_root=str(tmp_path), hdu_indices=[4, 1, 2])
    out = pipe.run()
    assert len(out) == 3
    for k in range(3):
        np.testing.assert_array_equal(out[0].at(k), second + k)
        np.testing.assert_array_equal(out[1].at(k), primary + k)
        np.testing.assert_array_equal(out[2].at(k), first + k)
    # The default reads HDU 2, the first extension; an HDU may be read twice.
    (b,) = _pipe(3, file_root=str(tmp_path)).run()
    np.testing.assert_array_equal(b.at(1), first + 1)
    a, c = _pipe(1, files=[str(tmp_path / "m0.fits")], hdu_indices=[2, 2]).run()
    np.testing.assert_array_equal(a.at(0), c.at(0))


COMPRESSIONS = [("RICE_1", "int16", None), ("RICE_1", "int32", None), ("RICE_1", "uint8", None),
                ("RICE_1", "int16", (8, 16)), ("RICE_1", "uint16", (5, 47)),
                ("RICE_1", "float32", None), ("GZIP_1", "float64", (16, 16)),
                ("GZIP_2", "int32", None), ("PLIO_1", "int16", (11, 20))]


@pytest.mark.parametrize("method,dtype,tile", COMPRESSIONS)
def test_tile_compressed_images_are_astropys_arrays(tmp_path, method, dtype, tile):
    rng = np.random.default_rng(4)
    arrays = [rng.integers(0, 30000, size=(33, 47)).astype(dtype) if dtype[0] in "ui"
              else rng.normal(size=(33, 47)).astype(dtype) for _ in range(2)]
    if dtype == "uint8" or method == "PLIO_1":
        arrays = [a % 200 for a in arrays]
    kw = {"tile_shape": tile} if tile else {}
    for i, a in enumerate(arrays):
        _write(tmp_path / f"c{i}.fits", fits.CompImageHDU(a, compression_type=method, **kw))
    (b,) = _pipe(2, file_root=str(tmp_path)).run()
    for i, a in enumerate(arrays):
        want = _astropy(tmp_path / f"c{i}.fits")  # floats: quantised, the same way
        assert b.at(i).dtype == want.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(b.at(i), want)
        if dtype[0] in "ui":  # integers are compressed losslessly
            np.testing.assert_array_equal(b.at(i), a)


def test_gzipped_files_and_the_classes_api(tmp_path):
    a = np.arange(24, dtype=np.int32).reshape(4, 6)
    _write(tmp_path / "a.fits", fits.ImageHDU(a))
    with open(tmp_path / "a.fits", "rb") as src, gzip.open(tmp_path / "a.fits.gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    (b,) = _pipe(1, files=[str(tmp_path / "a.fits.gz")]).run()
    np.testing.assert_array_equal(b.at(0), a)
    reader = ops.experimental.readers.Fits(file_root=str(tmp_path), file_filter="*.gz")
    pipe = stoker.Pipeline(batch_size=1, num_threads=1)
    with pipe:
        pipe.set_outputs(reader())
    np.testing.assert_array_equal(pipe.run()[0].at(0), a)


def test_dtypes_is_checked_as_dalis_and_the_hdu_decides_the_type(tmp_path):
    _write(tmp_path / "a.fits", fits.ImageHDU(np.arange(6, dtype=np.int16)))
    (b,) = _pipe(1, file_root=str(tmp_path), dtypes=[types.FLOAT]).run()
    assert b.at(0).dtype == np.int16  # DALI: outputs have their HDU's type
    cases = [(dict(dtypes=[types.FLOAT, types.INT16]), ValueError,
              r"dtypes has 2 entries for 1 HDU index \(one per entry of hdu_indices\)"),
             (dict(dtypes=[types.BOOL]), TypeError, "dtypes holds bool, which FITS images"),
             (dict(dtypes=["complex"]), TypeError, "dtypes holds the unknown dtype 'complex'"),
             (dict(hdu_indices=[]), ValueError, "hdu_indices is empty"),
             (dict(hdu_indices=[2, 0]), ValueError,
              "hdu_indices holds 0; HDUs are counted from 1"),
             (dict(hdu_indices=[2**31]), ValueError, "hdu_indices holds 2147483648")]
    for kwargs, kind, message in cases:
        with pytest.raises(kind, match="experimental.readers.fits.*" + message):
            _pipe(1, file_root=str(tmp_path), **kwargs).build()


def test_file_lists_and_their_errors(tmp_path):
    arrays = [np.full((2, 2), k, np.int16) for k in range(3)]
    (tmp_path / "d").mkdir()
    for k, a in enumerate(arrays):
        _write(tmp_path / "d" / f"x{k}.fits", fits.ImageHDU(a))
    (tmp_path / "d" / "list.txt").write_text("x2.fits\n\n x0.fits \n")
    (b,) = _pipe(2, file_list=str(tmp_path / "d" / "list.txt")).run()
    np.testing.assert_array_equal(b.at(0), arrays[2])
    np.testing.assert_array_equal(b.at(1), arrays[0])
    cases = [(dict(file_root=str(tmp_path / "d"), file_filter="*.fit"),
              "holds no files matching '\\*.fit'"),
             (dict(file_list=str(tmp_path / "d" / "list.txt"), files=["x.fits"]),
              "give `files` or `file_list`, not both"),
             (dict(), "give `file_root`, `files` or `file_list`")]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            _pipe(1, **kwargs).build()


def _rice(path, shape=(33, 47)):
    _write(path, fits.CompImageHDU(np.arange(np.prod(shape), dtype=np.int16).reshape(shape) % 97,
                                   compression_type="RICE_1"))


def test_damaged_files_are_named(tmp_path):
    a = np.arange(35, dtype=np.int16).reshape(5, 7)
    _write(tmp_path / "good.fits", fits.ImageHDU(a))
    good = (tmp_path / "good.fits").read_bytes()
    _rice(tmp_path / "rice.fits")
    rice = (tmp_path / "rice.fits").read_bytes()
    heap = 2 * 2880 + 33 * 8  # two header blocks, then the table of tile descriptors
    _write(tmp_path / "gzip.fits", fits.CompImageHDU(np.arange(35, dtype=np.int16).reshape(5, 7),
                                                     compression_type="GZIP_2"))
    gz = (tmp_path / "gzip.fits").read_bytes()
    gz_heap = 2 * 2880 + 5 * 8
    damaged = {
        "text.fits": b"hello, world\n" * 300,
        "cut_data.fits": good[:2 * 2880 + 10],
        "cut_header.fits": good[:2880 + 100],
        "cut_hdu.fits": good[:2880],
        "cut_heap.fits": rice[:heap + 300],
        "bad_tiles.fits": rice[:heap] + b"\xff" * (len(rice) - heap),
        "bad_table.fits": rice[:2 * 2880] + b"\x7f" * (heap - 2 * 2880) + rice[heap:],
        "bad_gzip.fits": gz[:gz_heap] + b"\x1f\x8b" + b"\x55" * (len(gz) - gz_heap - 2),
    }
    messages = {
        "text.fits": r"text.fits: not a FITS file \(cfitsio: ",
        "cut_data.fits": r"cut_data.fits: HDU 2 is truncated: its header declares 5x7 values "
                         r"of 16 bits \(70 bytes from byte 5760\), the file ends at byte 5770",
        "cut_header.fits": r"cut_header.fits: HDU 2 has no NAXIS \(its header has no END "
                           r"card: the file is truncated\)",
        "cut_hdu.fits": r"cut_hdu.fits: the file has 1 HDU, no HDU 2 \(hdu_indices count from 1, "
                        r"the primary HDU\)$",
        "cut_heap.fits": r"cut_heap.fits: HDU 2 is truncated: its compressed image declares "
                         r"\d+ bytes from byte 5760, the file ends at byte 6324",
        "bad_tiles.fits": r"bad_tiles.fits: HDU 2: the RICE_1 tile of row 1 is corrupt: decoding "
                          r"it would read past its 21 bytes",
        "bad_table.fits": r"bad_table.fits: HDU 2: the tile of row 1 \(2139062143 elements at "
                          r"heap offset 2139062143\) lies outside the compressed image's \d+ "
                          r"bytes",
        "bad_gzip.fits": r"bad_gzip.fits: HDU 2: cannot decode the compressed image \(ZCMPTYPE "
                         r"'GZIP_2'\) \(cfitsio: ",
    }
    for name, data in damaged.items():
        (tmp_path / name).write_bytes(data)
        # As the dataset's first file (read at build) and as a later one (read at run).
        with pytest.raises(ValueError, match=messages[name]):
            _pipe(1, files=[str(tmp_path / name)]).run()
        pipe = _pipe(2, files=[str(tmp_path / "good.fits"), str(tmp_path / name)])
        with pytest.raises(ValueError, match=r"sample 1 \(source '.*" + name + "'\\): .*" +
                           messages[name]):
            pipe.run()


def test_hdus_that_are_not_images_are_named(tmp_path):
    table = fits.BinTableHDU.from_columns([fits.Column(name="x", format="J", array=[1, 2])])
    _write(tmp_path / "t.fits", table, fits.ImageHDU(np.zeros((2, 2), np.float32)))
    cases = [([2], r"t.fits: HDU 2 is a binary table, not an image"),
             ([1], r"t.fits: HDU 1 holds no image \(NAXIS = 0"),
             ([3, 7], r"t.fits: the file has 3 HDUs, no HDU 7 \(hdu_indices count from 1")]
    for hdus, message in cases:
        with pytest.raises(ValueError, match=message):
            _pipe(1, file_root=str(tmp_path), hdu_indices=hdus).build()


def test_samples_must_match_the_first_files_dtype_and_dimensions(tmp_path):
    _write(tmp_path / "a.fits", fits.ImageHDU(np.zeros((2, 3), np.float32)))
    _write(tmp_path / "b.fits", fits.ImageHDU(np.zeros((2, 3), np.int16)))
    _write(tmp_path / "c.fits", fits.ImageHDU(np.zeros((2, 3, 1), np.float32)))
    with pytest.raises(TypeError, match=r"sample 1 \(source '.*b.fits'\): HDU 2 holds int16 "
                                        r"values, but the first file of the dataset holds "
                                        r"float32 there"):
        _pipe(2, files=[str(tmp_path / n) for n in ("a.fits", "b.fits")]).run()
    with pytest.raises(ValueError, match=r"sample 1 \(source '.*c.fits'\): HDU 2 has 3 axes, "
                                         r"but the first file of the dataset has 2 there"):
        _pipe(2, files=[str(tmp_path / n) for n in ("a.fits", "c.fits")]).run()


def _card(key, value):
    return f"{key:<8}= {value:>20}".ljust(80).encode()


def _set(data, key, old, new):
    """`data` with header value `key` = `old` replaced by `new` (the card's comment kept)."""
    before, after = f"{key:<8}= {old:>20}".encode(), f"{key:<8}= {new:>20}".encode()
    assert data.count(before) == 1, key
    return data.replace(before, after)


def _header(*cards):
    text = b"".join(cards) + b"END".ljust(80)
    return text + b" " * (-len(text) % 2880)


def test_headers_declaring_more_than_the_file_holds_are_refused_before_allocating(tmp_path):
    # 10^6 x 10^6 float64 (8 TB) declared over one block of data: refused, not allocated.
    huge = _header(_card("SIMPLE", "T"), _card("BITPIX", -64), _card("NAXIS", 2),
                   _card("NAXIS1", 10**6), _card("NAXIS2", 10**6)) + b"\0" * 2880
    (tmp_path / "huge.fits").write_bytes(huge)
    with pytest.raises(ValueError, match=r"huge.fits: HDU 1 is truncated: its header declares "
                                         r"1000000x1000000 values of 64 bits"):
        _pipe(1, files=[str(tmp_path / "huge.fits")], hdu_indices=[1]).run()
    # A compressed image whose ZNAXIS1 (and tile width) claim 10^9 pixels a row: 66 GB from a
    # few kB of tiles.
    _rice(tmp_path / "rice.fits")
    data = (tmp_path / "rice.fits").read_bytes()
    bomb = _set(_set(data, "ZNAXIS1", 47, 10**9), "ZTILE1", 47, 10**9)
    (tmp_path / "bomb.fits").write_bytes(bomb)
    with pytest.raises(ValueError, match=r"bomb.fits: HDU 2 declares a 33x1000000000 image of "
                                         r"int16 .* a compressed image may decode to at most "
                                         r"4096 times its compressed size"):
        _pipe(1, files=[str(tmp_path / "bomb.fits")]).run()
    # Tiles larger than the image are allocated whole by cfitsio: bounded the same way (one row,
    # so that the count of tiles still matches the table's).
    _rice(tmp_path / "row.fits", shape=(1, 47))
    tiles = _set((tmp_path / "row.fits").read_bytes(), "ZTILE2", 1, 10**12)
    (tmp_path / "tiles.fits").write_bytes(tiles)
    with pytest.raises(ValueError, match=r"tiles.fits: HDU 2 declares tiles of 4.7e\+13 pixels"):
        _pipe(1, files=[str(tmp_path / "tiles.fits")]).run()
    zero = _set(data, "ZTILE2", 1, 0)
    (tmp_path / "zero.fits").write_bytes(zero)
    # cfitsio 4.2 divides by ZTILEn as it moves to the HDU (a SIGFPE): checked before.
    with pytest.raises(ValueError, match=r"zero.fits: HDU 2: ZTILE2 = 0; tile sizes must be "
                                         r"positive integers"):
        _pipe(1, files=[str(tmp_path / "zero.fits")]).run()


def test_many_files_on_many_io_threads(tmp_path):
    rng = np.random.default_rng(6)
    arrays = [rng.integers(-500, 500, size=(rng.integers(1, 40), 17)).astype(np.int32)
              for _ in range(24)]
    for i, a in enumerate(arrays):
        hdu = fits.CompImageHDU(a, compression_type="RICE_1") if i % 2 else fits.ImageHDU(a)
        _write(tmp_path / f"f{i:02d}.fits", hdu)
    for mmap in (False, True):
        pipe = _pipe(8, file_root=str(tmp_path), num_io_threads=4, dont_use_mmap=not mmap)
        for it in range(6):  # two epochs
            (b,) = pipe.run()
            for j in range(8):
                np.testing.assert_array_equal(b.at(j), arrays[(it * 8 + j) % 24])


def test_device_gpu_reads_on_the_cpu_and_copies(tmp_path):
    _write(tmp_path / "a.fits", fits.ImageHDU(np.arange(6, dtype=np.float32).reshape(2, 3)))
    pipe = stoker.Pipeline(batch_size=1, num_threads=1, device_id=0)
    with pipe:
        pipe.set_outputs(fn.experimental.readers.fits(device="gpu", file_root=str(tmp_path),
                                                      name="R"))
    nodes = pipe._nodes
    assert [n["op"] for n in nodes] == ["experimental.readers.fits", "copy_to_device"]
    assert nodes[0]["device"] == "cpu" and nodes[0]["name"] == "R"
    if not _stoker.cuda_available():
        pytest.skip("no CUDA device: the GPU copy is run on the GPU machine")
    (b,) = pipe.run()
    assert b.device == "gpu"
    np.testing.assert_array_equal(b.as_cpu().at(0), np.arange(6, dtype=np.float32).reshape(2, 3))


def test_headers_and_tiles_cfitsio_would_mishandle_are_refused(tmp_path):
    # Found by fuzzing (fuzz/fits_fuzzer.cpp, fuzz/corpus/fits): cfitsio 4.2 aborts or reads out
    # of bounds on these; stoker checks the headers (and Rice and PLIO tiles) before it parses.
    a = np.arange(33 * 47, dtype=np.int16).reshape(33, 47) % 97
    _write(tmp_path / "h.fits", fits.CompImageHDU(a, compression_type="HCOMPRESS_1",
                                                  tile_shape=(33, 47)))
    _rice(tmp_path / "rice.fits")
    rice = (tmp_path / "rice.fits").read_bytes()
    table = fits.BinTableHDU.from_columns([fits.Column(name="x", format="J", array=[1, 2])])
    _write(tmp_path / "t.fits", table, fits.ImageHDU(np.zeros((2, 2), np.float32)))
    t = (tmp_path / "t.fits").read_bytes()
    at = t.index(b"TTYPE1  = ")
    long_name = t[:at] + b"TTYPE1  = " + b"x" * 70 + t[at + 80:]
    heap = 2 * 2880 + 33 * 8
    cases = {
        "h.fits": ((tmp_path / "h.fits").read_bytes(),
                   r"HDU 2 is compressed with HCOMPRESS_1, which stoker does not decode"),
        "zval.fits": (rice.replace(b"ZVAL1   =                   32",
                                   b"ZVAL1   = " + b"9" * 30),
            r"HDU 2: ZVAL1 = 9{30} is too long for a compression keyword"),
        "block.fits": (rice.replace(b"ZVAL1   =                   32",
                                    b"ZVAL1   =                    0"),
                       r"HDU 2: the Rice block size 0 is not in \[1, 65536\]"),
        "twice.fits": (rice.replace(b"ZTILE2  =                    1",
                                    b"ZTILE1  =                    4"),
                       r"HDU 2: ZTILE1 is given twice, as 47 and as 4"),
        "ttype.fits": (long_name, r"HDU 2: TTYPE1 = x{70} is too long"),
        "naxis.fits": (t.replace(b"NAXIS2  =                    2",
                                 b"NAXIS2  =                  2.0"),
                       r"HDU 2: NAXIS2 = 2.0 is not an integer"),
        "stream.fits": (rice[:heap] + rice[heap:heap + 4] + b"\xff" * (len(rice) - heap - 4),
                        r"HDU 2: the RICE_1 tile of row 1 is corrupt: decoding it would read "
                        r"past its \d+ bytes"),
    }
    for name, (data, message) in cases.items():
        (tmp_path / name).write_bytes(data)
        hdus = [3] if name in ("ttype.fits", "naxis.fits") else [2]
        with pytest.raises(ValueError, match=name + ": " + message):
            _pipe(1, files=[str(tmp_path / name)], hdu_indices=hdus).run()
