"""Image operators on sequences (ops/sequence_operator.hpp): each frame processed as an image,
one random decision per sequence (random_resized_crop's window, a coin_flip mirror), per_frame
arguments, frame-aware output layouts, errors naming the sample and frame; the GPU backends equal
the CPU ones, fused chains included. DALI 2.4 is compared in parity/test_parity_sequences.py."""

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn, types


def clips(frames=(4, 3, 5), shape=(18, 22)):
    """Clips whose frame f is frame 0 plus f (no overflow): a per-frame offset any
    nearest-neighbour resampling keeps."""
    rng = np.random.default_rng(8)
    out = []
    for f in frames:
        base = rng.integers(0, 200, shape + (3,), dtype=np.uint8)
        out.append(np.stack([base + k for k in range(f)]).astype(np.uint8))
    return out


def run(build, data, device="cpu", layout="FHWC", batch=None, iterations=1, seed=7,
        extra=()):
    pipe = stoker.Pipeline(batch_size=batch or len(data), num_threads=2, seed=seed,
                           device_id=0 if device == "gpu" else None)
    with pipe:
        x = fn.external_source(source=lambda: data, batch=True, layout=layout)
        ins = [fn.external_source(source=(lambda d: lambda: d)(d), batch=True, layout=lay)
               for d, lay in extra]
        if device == "gpu":
            x = x.gpu()
        out = build(x, *ins)
        pipe.set_outputs(*(out if isinstance(out, (list, tuple)) else [out]))
    pipe.build()
    result = []
    for _ in range(iterations):
        outs = pipe.run()
        result.append([(b.layout(), [np.array(s) for s in (b.as_cpu() if device == "gpu" else b)])
                       for b in outs])
    return result if iterations > 1 else result[0]


def test_random_resized_crop_cuts_one_window_per_sequence():
    data = [clips(frames=(6,))[0]] * 8  # the same clip in every sample
    ((layout, out),) = run(lambda x: fn.random_resized_crop(x, size=(9, 11),
                                                            interp_type=types.INTERP_NN), data)
    assert layout == "FHWC"
    for seq in out:
        assert seq.shape == (6, 9, 11, 3)
        for f in range(6):  # the same window on every frame: frame f is frame 0 plus f
            assert np.array_equal(seq[f].astype(int), seq[0].astype(int) + f)
    # ... and a window of its own for each sequence.
    assert len({seq.tobytes() for seq in out}) > 1


def test_a_coin_flip_mirrors_all_frames_of_a_sequence_or_none():
    data = clips(frames=(3, 4, 2, 5, 3, 4, 2, 3))
    ((_, out),) = run(lambda x: fn.flip(x, horizontal=fn.random.coin_flip()), data)
    flipped = []
    for seq, got in zip(data, out):
        mirrored = [np.array_equal(g, s[:, ::-1]) for g, s in zip(got, seq)]
        same = [np.array_equal(g, s) for g, s in zip(got, seq)]
        assert all(mirrored) or all(same)
        flipped.append(all(mirrored))
    assert any(flipped) and not all(flipped)


def test_per_frame_arguments_vary_by_frame_and_one_value_covers_all():
    data = clips()
    values = [np.array([0.5, 1.0, 1.5, 2.0], np.float32), np.array([0.25], np.float32),
              np.array([1, 0.5, 1, 0.5, 1], np.float32)]
    ((layout, out),) = run(lambda x, b: fn.brightness(x, brightness=fn.per_frame(b)), data,
                           extra=[(values, "")])
    assert layout == "FHWC"
    # The same frames as images, each with its value.
    frames = [f for seq in data for f in seq]
    each = [np.array(v[k if len(v) > 1 else 0], np.float32)
            for seq, v in zip(data, values) for k in range(len(seq))]
    ((_, want),) = run(lambda x, b: fn.brightness(x, brightness=b), frames, layout="HWC",
                       extra=[(each, "")])
    assert np.array_equal(np.concatenate(out), np.stack(want))


def test_crop_mirror_normalize_puts_the_frame_axis_where_output_layout_says():
    data = clips()
    mean, std = [100.0, 90.0, 80.0], [50.0, 40.0, 30.0]
    outs = run(lambda x: (fn.crop_mirror_normalize(x, crop=(8, 10), mean=mean, std=std,
                                                   output_layout="CFHW"),
                          fn.crop_mirror_normalize(x, crop=(8, 10), mean=mean, std=std,
                                                   output_layout="FCHW"),
                          fn.crop_mirror_normalize(x, crop=(8, 10), mean=mean, std=std)), data)
    (l_cf, cf), (l_fc, fc), (l_default, default) = outs
    assert (l_cf, l_fc, l_default) == ("CFHW", "FCHW", "FCHW")
    for seq, a, b, c in zip(data, cf, fc, default):
        y, x = (18 - 8) // 2, (22 - 10) // 2
        want = ((seq[:, y:y + 8, x:x + 10].astype(np.float32) - mean) / std).transpose(0, 3, 1, 2)
        np.testing.assert_allclose(b, want, rtol=1e-6)
        assert np.array_equal(a, b.transpose(1, 0, 2, 3)) and np.array_equal(c, b)


def test_channel_first_frames():
    data = [np.ascontiguousarray(c.transpose(0, 3, 1, 2)) for c in clips()]
    ((layout, out),) = run(lambda x: fn.crop(x, crop=(5, 6), crop_pos_x=0, crop_pos_y=1), data,
                           layout="FCHW")
    assert layout == "FCHW"
    for seq, got in zip(data, out):
        assert np.array_equal(got, seq[:, :, -5:, :6])


def test_errors_name_the_sample_and_frame():
    data = clips()
    with pytest.raises(ValueError, match=r"sample 1, frame 0: crop: .*window"):
        run(lambda x: fn.crop(x, crop=(17, 10)), [data[0], data[1][:, :16]])
    with pytest.raises(ValueError, match=r"brightness: sample 1 of argument 'brightness' \(per "
                                         r"frame\) has 2 values for a sequence of 3 frames"):
        run(lambda x, b: fn.brightness(x, brightness=fn.per_frame(b)), data,
            extra=[([np.ones(4, np.float32), np.ones(2, np.float32), np.ones(5, np.float32)],
                    "")])
    with pytest.raises(ValueError, match=r"crop: sample 0: its frames came out in different "
                                         r"shapes \(frame 0: \(5, 4, 3\), frame 1: \(5, 6, 3\)\)"):
        run(lambda x, w: fn.crop(x, crop_h=5, crop_w=fn.per_frame(w)), data,
            extra=[([np.array([4, 6, 6, 6], np.float32), np.full(3, 6, np.float32),
                     np.full(5, 6, np.float32)], "")])
    with pytest.raises(ValueError, match=r"brightness: argument 'brightness' is given per frame "
                                         r"\(layout 'F'\), but the input has no frames"):
        run(lambda x, b: fn.brightness(x, brightness=fn.per_frame(b)), [c[0] for c in data],
            layout="HWC", extra=[([np.ones(1, np.float32)] * 3, "")])
    with pytest.raises(ValueError, match=r"output_layout 'CFHW' has frames \(F\), but the input "
                                         r"is not a sequence \(layout 'HWC'"):
        run(lambda x: fn.crop_mirror_normalize(x, output_layout="CFHW"), [c[0] for c in data],
            layout="HWC")
    with pytest.raises(ValueError, match=r"per_frame: the input's layout 'HWC' does not start "
                                         r"with F"):
        run(lambda x: fn.per_frame(x), [c[0] for c in data], layout="HWC")
    with pytest.raises(ValueError, match=r"resize: sample 2 is a sequence of no frames"):
        run(lambda x: fn.resize(x, size=(4, 4)), data[:2] + [data[2][:0]])


def test_per_frame_layouts():
    data = [np.zeros((3, 2), np.float32)] * 2
    ((layout, _),) = run(lambda x: fn.per_frame(x), data, layout="")
    assert layout == "F*"
    ((layout, _),) = run(lambda x: fn.per_frame(x, replace=True), data, layout="XY")
    assert layout == "FY"


def test_skipped_frames_skip_their_sequence(tmp_path):
    """on_error='skip': a frame's data error drops its sequence (replaced by the next one read),
    the error named with the sample and frame."""
    data = clips(frames=(2, 3, 2, 2, 3))
    data[1] = data[1][:, :10]  # too small for the crop
    for i, c in enumerate(data):
        np.save(tmp_path / f"{i}.npy", c)
    pipe = stoker.Pipeline(batch_size=4, num_threads=2, seed=1, on_error="skip")
    with pipe:
        x = fn.readers.numpy(file_root=str(tmp_path))
        x = fn.reshape(x, rel_shape=[1, 1, 1, 1], layout="FHWC")
        pipe.set_outputs(fn.crop(x, crop=(12, 12)))
    pipe.build()
    with pytest.warns(RuntimeWarning, match="skipped a bad sample"):
        (out,) = pipe.run()
    got = [np.array(s) for s in out]
    assert [g.shape[0] for g in got] == [2, 2, 2, 3]  # sample 1 (3 frames) replaced by the next
    assert all(g.shape[1:] == (12, 12, 3) for g in got)
    # (later iterations, prefetched, may meet the bad clip again)
    message = pipe.error_stats()["recent"][0]
    assert "sample 1, frame 0 (source '" in message and "1.npy" in message
    assert "exceeds the 10x22 image" in message


@pytest.mark.skipif(not _stoker.cuda_available(), reason="no CUDA device: GPU test skipped")
def test_gpu_equals_cpu():
    """The GPU backends on sequences, a fused random_resized_crop -> crop_mirror_normalize
    chain (CFHW) among them, equal the CPU ones."""
    data = clips(frames=(4, 3, 5, 2))

    def build(x):
        mirror = fn.random.coin_flip(seed=3)
        rrc = fn.random_resized_crop(x, size=(10, 12), seed=5)
        return (fn.crop_mirror_normalize(rrc, mean=[128.0], std=[64.0], mirror=mirror,
                                         output_layout="CFHW"),
                fn.crop(x, crop=(7, 9), crop_pos_x=0.2),
                fn.flip(x, horizontal=mirror), fn.brightness(x, brightness=1.5),
                fn.resize(x, size=(9, 13)))

    cpu, gpu = run(build, data), run(build, data, device="gpu")
    for (lc, c), (lg, g) in zip(cpu, gpu):
        assert lc == lg
        for a, b in zip(c, g):
            assert a.shape == b.shape
            # Resampling rounds to the same level but for a few ties (test_gpu.py): one level,
            # normalised by std 64 in the float output.
            np.testing.assert_allclose(a, b, atol=1.01 / 64 if a.dtype == np.float32 else 1)
    data_chw = [np.ascontiguousarray(c.transpose(0, 3, 1, 2)) for c in data]
    c, g = (run(lambda x: fn.crop(x, crop=(20, 9), out_of_bounds_policy="pad",
                                  fill_values=[1, 2, 3]), data_chw, device=d, layout="FCHW")
            for d in ("cpu", "gpu"))
    assert all(np.array_equal(a, b) for a, b in zip(c[0][1], g[0][1]))
