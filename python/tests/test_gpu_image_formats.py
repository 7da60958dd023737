"""device="mixed" decoding of the formats the CPU threads decode for it (WebP, TIFF, JPEG 2000,
16-bit TIFF and JPEG 2000 at dtype UINT16) beside JPEGs: the same pixels as the CPU decoder.
Skipped without a CUDA device; formats stoker was built without (libwebp, libtiff, OpenJPEG)
are left out."""

import io

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn, types

PIL = pytest.importorskip("PIL.Image", reason="Pillow writes the test images")

pytestmark = pytest.mark.skipif(not _stoker.cuda_available(),
                                reason="no CUDA device: GPU test skipped")


def _blobs():
    info = _stoker.build_info()
    y, x = np.mgrid[0:45, 0:67]
    rgb = np.stack([x * 3, y * 5, (x + y) * 2], -1).astype(np.uint8)
    out = []
    for fmt, kw in (("JPEG", dict(quality=90)), ("PNG", {}),
                    ("WEBP", dict(lossless=True)) if info["libwebp"] else (None, None),
                    ("TIFF", dict(compression="tiff_lzw")) if info["libtiff"] else (None, None),
                    ("JPEG2000", dict(irreversible=False)) if info["openjpeg"] else (None, None)):
        if fmt is None:
            continue
        buf = io.BytesIO()
        PIL.fromarray(rgb).save(buf, fmt, **kw)
        out.append(buf.getvalue())
    if info["libtiff"]:  # 16-bit gray
        buf = io.BytesIO()
        PIL.fromarray((x * 900 + y * 11).astype(np.uint16)).save(buf, "TIFF")
        out.append(buf.getvalue())
    if info["openjpeg"]:  # 16-bit gray
        buf = io.BytesIO()
        PIL.fromarray((x * 900 + y * 11).astype(np.uint16)).save(buf, "JPEG2000")
        out.append(buf.getvalue())
    return out


@pytest.mark.parametrize("dtype", ["UINT8", "UINT16"])
def test_mixed_decoding_of_every_format_equals_the_cpus(dtype):
    blobs = _blobs()
    outs = {}
    for device in ("cpu", "mixed"):
        pipe = stoker.Pipeline(batch_size=len(blobs), num_threads=2, device_id=0)
        with pipe:
            data = fn.external_source(source=lambda: [np.frombuffer(b, np.uint8) for b in blobs],
                                      batch=True)
            pipe.set_outputs(fn.decoders.image(data, device=device, hw_decoder_load=0.0,
                                               cuda_decoder="off", dtype=getattr(types, dtype)))
        (b,) = pipe.run()
        outs[device] = [s.numpy() for s in (b.as_cpu() if device == "mixed" else b)]
    for i, (a, m) in enumerate(zip(outs["cpu"], outs["mixed"], strict=True)):
        assert a.dtype == m.dtype and a.shape == m.shape, i
        np.testing.assert_array_equal(a, m, err_msg=f"sample {i}")
