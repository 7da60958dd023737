"""JPEG 2000 in device="mixed" decoding: nvJPEG2000 decodes 8-bit images as stored on the GPU
(whole, or a window of an untiled image), and what it would not give as the CPU decoder does
(16 bits, other channel counts than asked, BGR, windows of tiled images, YCbCr output) goes to
the CPU threads. Either way the pixels are the CPU decoder's: equal for reversible (lossless)
files, within 4 levels and half a level on average for irreversible ones (the 9/7 wavelet in
float on both sides). Skipped without a CUDA device; the nvJPEG2000 counts are checked where
libnvjpeg2k is found (PyPI's nvidia-nvjpeg2k-cu13), the CPU's otherwise."""

import io

import numpy as np
import pytest

import stoker
from coded_images import gradient_image
from stoker import _stoker, fn, types

PIL = pytest.importorskip("PIL.Image", reason="Pillow writes the test images")

pytestmark = [
    pytest.mark.skipif(not _stoker.cuda_available(), reason="no CUDA device: GPU test skipped"),
    pytest.mark.skipif(not _stoker.build_info()["openjpeg"],
                       reason="stoker was built without OpenJPEG"),
]


def _j2k(img, **kw):
    buf = io.BytesIO()
    PIL.fromarray(img).save(buf, "JPEG2000", **kw)
    return buf.getvalue()


# (bytes, what nvJPEG2000 should take with output_type RGB): RGB lossless and lossy, a raw
# codestream, a tiled image, gray, RGBA, 16-bit gray.
BLOBS = [
    (_j2k(gradient_image(45, 67, 3, 1), irreversible=False), True),
    (_j2k(gradient_image(61, 50, 3, 2), irreversible=True, quality_layers=[20]), True),
    (_j2k(gradient_image(33, 40, 3, 3), irreversible=False, no_jp2=True), True),
    (_j2k(gradient_image(96, 80, 3, 4), irreversible=False, tile_size=(32, 32)), True),
    (_j2k(gradient_image(30, 31, 1, 5), irreversible=False), False),
    (_j2k(gradient_image(29, 35, 4, 6), irreversible=False), False),
    (_j2k((gradient_image(20, 24, 1, 7).astype(np.uint16) * 250), irreversible=False), False),
]
LOSSY = {1}


def _pipe(blobs, device, op="image", **kwargs):
    pipe = stoker.Pipeline(batch_size=len(blobs), num_threads=2, device_id=0)
    with pipe:
        data = fn.external_source(source=lambda: [np.frombuffer(b, np.uint8) for b in blobs],
                                  batch=True)
        pipe.set_outputs(getattr(fn.decoders, op)(data, device=device, name="dec",
                                                  **kwargs))
    return pipe


def _decode(blobs, device, **kwargs):
    pipe = _pipe(blobs, device, **kwargs)
    (b,) = pipe.run()
    out = [s.numpy() for s in (b.as_cpu() if device == "mixed" else b)]
    return out, (pipe.operator_stats("dec") if device == "mixed" else None)


def _assert_cpus(cpu, mixed, lossy=()):
    for i, (a, m) in enumerate(zip(cpu, mixed, strict=True)):
        assert a.dtype == m.dtype and a.shape == m.shape, (i, a.shape, m.shape)
        if i in lossy:  # the 9/7 wavelet in float on both sides, in another order
            diff = np.abs(a.astype(int) - m.astype(int))
            assert diff.max() <= 4 and diff.mean() < 0.5, (i, diff.max(), diff.mean())
        else:
            np.testing.assert_array_equal(a, m, err_msg=f"sample {i}")


@pytest.mark.parametrize("output_type", ["RGB", "GRAY", "ANY_DATA", "BGR"])
def test_mixed_jpeg2000_equals_the_cpu_decoder(output_type):
    blobs = [b for b, _ in BLOBS]
    kwargs = {"output_type": getattr(types, output_type)}
    cpu, _ = _decode(blobs, "cpu", **kwargs)
    mixed, s = _decode(blobs, "mixed", **kwargs)
    _assert_cpus(cpu, mixed, LOSSY)
    if not s["j2k_available"]:
        assert s["j2k_images"] == 0 and s["cpu_images"] == len(blobs), s
        return
    # What nvJPEG2000 gives as stored: RGB from 3 components, GRAY from 1, ANY_DATA every
    # 8-bit image; BGR none (kept from nvJPEG2000, as the other channel counts are).
    taken = {"RGB": 4, "GRAY": 1, "ANY_DATA": 6, "BGR": 0}[output_type]
    assert s["j2k_images"] == taken and s["cpu_images"] == len(blobs) - taken, s
    # Only images with the output's channels were offered: none refused.
    assert s["j2k_refused"] == 0, s


def test_windows_decode_on_the_gpu_unless_the_image_is_tiled():
    blobs = [b for b, _ in BLOBS[:4]]
    kwargs = {"crop": (20, 24), "crop_pos_x": 0.7, "crop_pos_y": 0.4}
    cpu, _ = _decode(blobs, "cpu", op="image_crop", **kwargs)
    mixed, s = _decode(blobs, "mixed", op="image_crop", **kwargs)
    _assert_cpus(cpu, mixed, LOSSY)
    assert all(m.shape == (20, 24, 3) for m in mixed)
    if s["j2k_available"]:  # the tiled image's window: its tile may not hold it
        assert s["j2k_images"] == 3 and s["j2k_refused"] == 1 and s["cpu_images"] == 1, s


def test_many_jpeg2000s_back_to_back_keep_their_own_pixels():
    """nvJPEG2000's states decode image after image on the stage's stream, each waited for
    before it decodes again (nvJPEG2000's rule): each image's pixels are its own."""
    blobs = [_j2k(gradient_image(40 + k % 7, 52 + k % 5, 3, 10 + k), irreversible=False)
             for k in range(24)]
    cpu, _ = _decode(blobs, "cpu")
    for _ in range(3):
        mixed, s = _decode(blobs, "mixed")
        _assert_cpus(cpu, mixed)
    if s["j2k_available"]:
        assert s["j2k_images"] == len(blobs), s


def test_mixed_uint16_keeps_jpeg2000_on_the_cpu():
    blobs = [b for b, _ in BLOBS]
    cpu, _ = _decode(blobs, "cpu", dtype=types.UINT16)
    mixed, s = _decode(blobs, "mixed", dtype=types.UINT16)
    _assert_cpus(cpu, mixed, LOSSY)
    assert s["j2k_images"] == 0, s


def test_a_truncated_file_gets_the_cpu_decoders_error():
    """The GPU decodes asynchronously and reports no damage: a truncated file (its codestream
    without the end marker) is left to the CPU decoder, whose error names the sample."""
    bad = BLOBS[0][0][:-100]
    for device in ("cpu", "mixed"):
        with pytest.raises(ValueError, match=r"sample 1: invalid JPEG 2000 data"):
            _decode([BLOBS[2][0], bad], device)


def test_on_error_skip_still_skips_bad_jpeg2000s(tmp_path):
    """Under on_error="skip" the CPU stage decodes JPEG 2000 as before (the mixed stage could not
    skip what the GPU refuses): the damaged file is replaced, with a warning."""
    folder = tmp_path / "c"
    folder.mkdir()
    for k, (blob, _) in enumerate(BLOBS[:3]):
        (folder / f"{k}.jp2").write_bytes(blob)
    (folder / "3.jp2").write_bytes(BLOBS[0][0][:-100])
    pipe = stoker.Pipeline(batch_size=4, num_threads=2, device_id=0, on_error="skip")
    with pipe:
        data, _ = fn.readers.file(file_root=str(tmp_path))
        pipe.set_outputs(fn.decoders.image(data, device="mixed", name="dec"))
    with pytest.warns(RuntimeWarning, match="skipped a bad sample"):
        (b,) = pipe.run()
    assert len(b) == 4 and pipe.operator_stats("dec")["j2k_images"] == 0
