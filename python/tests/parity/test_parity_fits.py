"""experimental.readers.fits against DALI 2.4's on the same files: every image type (BZERO's
unsigned types included), scaled images, several HDUs per file, Rice-compressed images, and the
orders of the shard and shuffle modes DALI fixes (a file list, as readers.numpy's). DALI's CPU
reader needs a CUDA driver even with device_id=None (it fails with
cudaErrorInsufficientDriver where there is none): the tests skip there, saying so, and run
where DALI's reader works."""

import numpy as np
import pytest

import stoker
from parity_util import SKIP_REASON, assert_same, dali, run_both

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)
fits = pytest.importorskip("astropy.io.fits", reason="astropy writes the test files")
if not stoker._stoker.build_info()["cfitsio"]:
    pytest.skip("stoker was built without cfitsio", allow_module_level=True)

PARITY = {
    "experimental.readers.fits": "exact: where DALI's reader finds a CUDA driver (it needs one "
                                 "even on the CPU)",
}

N = 7
DTYPES = ["uint8", "int8", "int16", "uint16", "int32", "uint32", "int64", "float32", "float64"]


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """Per dtype a folder of N files (HDU 2: the image of that dtype, HDU 3: a Rice-compressed
    int16 image, HDU 4: a scaled int16 image), shapes varying with the file."""
    root = tmp_path_factory.mktemp("parity_fits")
    rng = np.random.default_rng(5)
    for dtype in DTYPES:
        folder = root / dtype
        folder.mkdir()
        for i in range(N):
            shape = (3 + i, 5 + 2 * i)
            if dtype.startswith(("int", "uint")):
                info = np.iinfo(dtype)
                a = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
            else:
                a = (rng.normal(size=shape) * 1000).astype(dtype)
            scaled = fits.ImageHDU(rng.integers(-900, 900, size=shape).astype(np.int16))
            scaled.header["BSCALE"], scaled.header["BZERO"] = 0.25, -3.5
            fits.HDUList([fits.PrimaryHDU(), fits.ImageHDU(a),
                          fits.CompImageHDU(rng.integers(0, 5000, size=shape).astype(np.int16),
                                            compression_type="RICE_1"),
                          scaled]).writeto(folder / f"f{i}.fits")
    return root


def _run_or_skip(define, batch, iterations=1):
    try:
        return run_both(define, batch, iterations=iterations)
    except RuntimeError as e:
        text = str(e)
        if "cudaErrorInsufficientDriver" in text or "CUDA driver" in text or \
                "cudaErrorNoDevice" in text:
            pytest.skip("DALI 2.4's experimental.readers.fits needs a CUDA driver even on the "
                        "CPU (cudaErrorInsufficientDriver here): compared where there is one")
        raise


@pytest.mark.parametrize("dtype", DTYPES)
def test_hdus_are_dalis_exactly(root, dtype):
    def define(fn, types):
        return tuple(fn.experimental.readers.fits(file_root=str(root / dtype),
                                                  hdu_indices=[2, 3, 4]))

    out = _run_or_skip(define, 4, iterations=2)
    for it in range(2):
        for k in range(3):
            assert_same(out["stoker"][it][k], out["dali"][it][k], what=f"{dtype} HDU {k + 2}")


@pytest.mark.parametrize("kw", [dict(), dict(shard_id=1, num_shards=3),
                                dict(shard_id=2, num_shards=3, stick_to_shard=True),
                                dict(random_shuffle=True, initial_fill=1),
                                dict(shuffle_after_epoch=True, shard_id=1, num_shards=2)])
def test_sample_orders_are_dalis(root, kw):
    # File f{i} holds an image of 3 + i rows: the order of the samples is that of their shapes.
    def define(fn, types):
        return fn.experimental.readers.fits(file_root=str(root / "int16"), seed=3, **kw)

    out = _run_or_skip(define, 3, iterations=2 * N // 3 + 1)
    ours, theirs = ([s.shape[0] for it in out[lib] for s in it[0]] for lib in ("stoker", "dali"))
    assert ours == theirs, kw
