"""optical_flow on the GPU's optical-flow engine (NVOFA): vectors of a known motion (a texture
translated frame to frame), the output's shape and layout, RGB/BGR/GRAY inputs, batches of mixed
sizes equal to their samples alone, external hints, the DALI talk's pipeline (readers.video ->
optical_flow -> element_extract), and errors naming the sample. Skipped without a GPU with the
engine; DALI 2.4 is compared in parity/test_parity_optical_flow.py."""

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn, types

if not _stoker.cuda_available():
    pytest.skip("no GPU: optical_flow runs on its optical-flow engine", allow_module_level=True)


def texture(h, w, seed=0):
    """Smooth random texture (blurred noise): matchable anywhere, no repeating pattern."""
    rng = np.random.default_rng(seed)
    img = rng.normal(0, 1, (h // 4 + 2, w // 4 + 2, 3))
    img = np.kron(img, np.ones((4, 4, 1)))[:h, :w]  # blocks, then a box blur to smooth them
    for axis in (0, 1):
        img = (np.roll(img, 1, axis) + img + np.roll(img, -1, axis)) / 3
    img = (img - img.min()) / (img.max() - img.min()) * 220 + 16
    return img.astype(np.uint8)


def moving(frames, h, w, vx, vy, seed=0):
    """A clip whose content moves by (vx, vy) pixels per frame."""
    margin = 4 * max(abs(vx), abs(vy)) * frames + 8
    big = texture(h + 2 * margin, w + 2 * margin, seed)
    return np.stack([big[margin - vy * f:margin - vy * f + h, margin - vx * f:margin - vx * f + w]
                     for f in range(frames)])


def run(clips, layout="FHWC", hints=None, batch=None, **kw):
    pipe = stoker.Pipeline(batch_size=batch or len(clips), num_threads=2, device_id=0)
    with pipe:
        x = fn.external_source(source=lambda: clips, batch=True, layout=layout).gpu()
        ins = [x]
        if hints is not None:
            ins.append(fn.external_source(source=lambda: hints, batch=True).gpu())
        pipe.set_outputs(fn.optical_flow(*ins, **kw))
    pipe.build()
    try:
        (out,) = pipe.run()
    except RuntimeError as e:
        if "optical-flow" in str(e) and ("library" in str(e) or "engine" in str(e)):
            pytest.skip(f"no optical-flow engine here: {e}")
        raise
    assert out.device == "gpu" and out.layout() == "FHWC"
    return [np.array(s) for s in out.as_cpu()]


def interior(flow, border=3):
    return flow[:, border:-border, border:-border].reshape(-1, 2)


def test_a_known_motion_gives_its_vectors():
    """Content moving by (vx, vy) per frame: each block of frame k+1 lies at minus that in
    frame k."""
    clip = moving(4, 120, 160, vx=3, vy=-2)
    (flow,) = run([clip])
    assert flow.shape == (3, 30, 40, 2) and flow.dtype == np.float32
    median = np.median(interior(flow), axis=0)
    assert np.abs(median - [-3, 2]).max() <= 0.25, median
    assert np.mean(np.abs(interior(flow) - [-3, 2]).max(axis=1) <= 1) > 0.9


def test_output_grids_and_sizes_not_divisible_by_them():
    clip = moving(2, 66, 90, vx=1, vy=1)
    for grid in (1, 2, 4):
        try:
            (flow,) = run([clip], output_grid=grid)
        except ValueError as e:
            assert f"output_grid {grid} is not offered by this GPU's engine" in str(e)
            continue
        assert flow.shape == (1, -(-66 // grid), -(-90 // grid), 2)
        assert np.abs(np.median(interior(flow, 8 // grid + 1), axis=0) - [-1, -1]).max() <= 0.25


def test_bgr_and_gray_inputs():
    clip = moving(3, 96, 128, vx=-2, vy=1, seed=4)
    (rgb,) = run([clip])
    (bgr,) = run([np.ascontiguousarray(clip[..., ::-1])], image_type=types.BGR)
    assert np.array_equal(rgb, bgr)
    gray = np.ascontiguousarray(clip.mean(axis=3, keepdims=True).astype(np.uint8))
    (flow,) = run([gray], image_type=types.GRAY)
    assert np.abs(np.median(interior(flow), axis=0) - [2, -1]).max() <= 0.25


def test_a_batch_of_sizes_equals_its_samples_alone():
    a, b = moving(3, 64, 96, 2, 0, seed=1), moving(4, 128, 80, 0, 3, seed=2)
    batch = run([a, b, a])
    assert np.array_equal(batch[0], run([a])[0]) and np.array_equal(batch[2], batch[0])
    assert np.array_equal(batch[1], run([b])[0])
    assert batch[1].shape == (3, 32, 20, 2)


def test_external_hints_guide_the_search():
    clip = moving(3, 96, 128, vx=6, vy=-5, seed=7)
    hints = np.zeros((2, 24, 32, 2), np.float32) + np.float32([-6, 5])
    (flow,) = run([clip], hints=[hints], enable_external_hints=True)
    assert np.abs(np.median(interior(flow), axis=0) - [-6, 5]).max() <= 0.25
    with pytest.raises(ValueError, match=r"sample 0: hints of shape \(2, 12, 16, 2\) for frames "
                                         r"of shape \(3, 96, 128, 3\); expected \(2 or 3, 24, "
                                         r"32, 2\)"):
        run([clip], hints=[hints[:, ::2, ::2].copy()], enable_external_hints=True)


def test_errors_name_the_sample():
    clip = moving(3, 64, 64, 1, 1)
    with pytest.raises(ValueError, match=r"optical_flow: sample 1 has 1 frame\(s\); optical "
                                         r"flow needs at least 2"):
        run([clip, clip[:1]])
    with pytest.raises(ValueError, match=r"sample 0 has shape \(3, 64, 64, 3\); expected frames x "
                                         r"height x width x 1 \(image_type GRAY\)"):
        run([clip], image_type=types.GRAY)
    with pytest.raises(ValueError, match=r"sample 0: optical_flow: frames of 8x8 are outside "
                                         r"the engine's sizes"):
        run([clip[:, :8, :8].copy()])
    with pytest.raises(ValueError, match="expected sequences in FHWC layout, got 'HWC'"):
        run([clip[0]], layout="HWC")


def test_the_video_pipeline_of_dalis_talks():
    """readers.video (NVDEC) -> optical_flow -> element_extract, as DALI's talks show it."""
    from video_fixtures import videos_or_skip
    import tempfile
    videos = videos_or_skip(tempfile.mkdtemp())
    pipe = stoker.Pipeline(batch_size=2, num_threads=2, device_id=0)
    with pipe:
        frames = fn.readers.video(device="gpu", filenames=[videos["h264_smooth"]],
                                  sequence_length=4)
        flow = fn.optical_flow(frames, preset=1.0)
        first, last = fn.element_extract(flow, element_map=[0, 2])
        pipe.set_outputs(flow, first, last)
    pipe.build()
    flow, first, last = (b.as_cpu() for b in pipe.run())
    f = np.array(flow[0])
    assert f.shape == (3, 60, 80, 2) and np.isfinite(f).all()
    assert np.array_equal(np.array(first[0]), f[0]) and np.array_equal(np.array(last[0]), f[2])
    assert np.abs(f).max() > 0  # the test pattern moves
