"""Audio against DALI 2.4: decoders.audio on WAV (PCM 8/16/24/32, float, double, mu-law, IMA
ADPCM), FLAC, AIFF and Ogg Vorbis/Opus files written here by the soundfile package, in every
output type, downmixed or not, resampled at several qualities, with per-sample rates; the sampling
rate output; files read by readers.file; audio_resample over every input and output type, each
way of giving the ratio, mono and multi-channel signals and layouts.

Both libraries decode with libsndfile (DALI bundles 1.2.2, stoker Debian's 1.2.0) and resample
with the same float operations, so everything is bit for bit the same except Ogg: Vorbis and
Opus decode in floating point, and the two libraries' libvorbis/libopus builds round
differently: within 2e-6 of full scale in float32 and int32, one step in int16."""
import io

import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, has_gpu, run, run_both

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

sf = pytest.importorskip("soundfile")
import stoker  # noqa: E402

if not stoker._stoker.build_info()["libsndfile"]:
    pytest.skip("stoker was built without libsndfile", allow_module_level=True)

PARITY = {
    "decoders.audio": "exact: WAV, FLAC, AIFF in int16/int32/float32, downmixed and resampled; "
                      "tolerance: Ogg Vorbis/Opus (2e-6 of full scale, 1 step of int16)",
    "audio_resample": "exact: every input and output type, rates, scale, out_length, channels "
                      "(gpu backend too, against DALI's cpu one; DALI's gpu one within 1e-3 of "
                      "full scale on smooth signals)",
}

FORMATS = [("WAV", "PCM_16"), ("WAV", "PCM_U8"), ("WAV", "PCM_24"), ("WAV", "PCM_32"),
           ("WAV", "FLOAT"), ("WAV", "DOUBLE"), ("WAV", "ULAW"), ("FLAC", "PCM_16"),
           ("FLAC", "PCM_24"), ("AIFF", "PCM_16")]
LOSSY = [("OGG", "VORBIS"), ("OGG", "OPUS")]


def _encode(x, rate, fmt, subtype):
    b = io.BytesIO()
    sf.write(b, x, rate, format=fmt, subtype=subtype)
    return np.frombuffer(b.getvalue(), np.uint8)


def _blobs(formats):
    rng = np.random.default_rng(7)
    out = []
    for k, (fmt, subtype) in enumerate(formats):
        for channels in (1, 2, 3):
            frames = 1500 + 101 * k + 37 * channels
            t = np.arange(frames)[:, None]
            x = np.clip(0.4 * np.sin(t * (0.02 + 0.01 * np.arange(channels))) +
                        0.25 * rng.standard_normal((frames, channels)), -1, 1)
            rate = 48000 if subtype == "OPUS" else 8000 + 4000 * channels + 50 * k
            out.append(_encode(x, rate, fmt, subtype))
    out.append(_encode(np.zeros((0, 2)), 16000, "WAV", "PCM_16"))  # no frames
    ima = _encode(np.clip(rng.standard_normal((900, 2)) * 0.3, -1, 1), 11025, "WAV", "IMA_ADPCM")
    return out + [ima]


CASES = [{}, {"dtype": "INT16"}, {"dtype": "INT32"}, {"downmix": True},
         {"downmix": True, "dtype": "INT16"}, {"sample_rate": 22050.0},
         {"sample_rate": 8000.0, "dtype": "INT16", "quality": 0.0},
         {"sample_rate": 11025.0, "downmix": True, "quality": 100.0, "dtype": "INT32"},
         {"sample_rate": 16000.0, "quality": 37.5}, {"sample_rate": 0.0}]


def _decode(blobs, case):
    def define(fn, types):
        kw = dict(case)
        if "dtype" in kw:
            kw["dtype"] = getattr(types, kw["dtype"])
        return tuple(fn.decoders.audio(fn.external_source(source=lambda: blobs, batch=True),
                                       **kw))
    return run_both(define, len(blobs))


@pytest.mark.parametrize("case", CASES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_lossless_files_decode_bit_for_bit(case):
    blobs = _blobs(FORMATS)
    out = _decode(blobs, case)
    for k, what in enumerate(("audio", "sample_rate")):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=f"{what} {case}")


@pytest.mark.parametrize("case", CASES[:6], ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_ogg_decodes_within_the_codecs_rounding(case):
    blobs = _blobs(LOSSY)
    out = _decode(blobs, case)
    ours, theirs = out["stoker"][0][0], out["dali"][0][0]
    kind = ours[0].dtype
    scale = {np.dtype(np.float32): 1.0, np.dtype(np.int16): 32768.0,
             np.dtype(np.int32): 2.0 ** 31}[kind]
    atol = 1.0 if kind == np.int16 else 2e-6 * scale
    assert_same(ours, theirs, atol=atol, what=f"ogg {case}")
    assert_same(out["stoker"][0][1], out["dali"][0][1], what="sample_rate")


def test_per_sample_rates_and_files_from_readers_file(tmp_path):
    (tmp_path / "a").mkdir()
    blobs = _blobs([("WAV", "PCM_16"), ("FLAC", "PCM_16")])[:4]
    for k, b in enumerate(blobs):
        (tmp_path / "a" / f"{k}.{'wav' if k < 3 else 'flac'}").write_bytes(b.tobytes())
    rates = [np.float32(r) for r in (16000, 12345.5, 0, 44100)]

    def define(fn, types):
        data, _ = fn.readers.file(file_root=str(tmp_path))
        r = fn.external_source(source=lambda: rates, batch=True)
        return tuple(fn.decoders.audio(data, sample_rate=r, dtype=types.INT16))

    out = run_both(define, 4)
    for k in range(2):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=f"output {k}")


def _signal(n, c, dtype, rng):
    x = rng.standard_normal((n, c) if c else (n,)) * 0.4
    if dtype == np.float32:
        return x.astype(np.float32)
    info = np.iinfo(dtype)
    if info.min == 0:
        return ((np.clip(x, -1, 1) + 1) / 2 * info.max).astype(dtype)
    return (np.clip(x, -1, 1) * info.max).astype(dtype)


RESAMPLE_CASES = [dict(scale=1.0), dict(scale=1.37), dict(scale=0.31, quality=0.0),
                  dict(in_rate=44100.0, out_rate=16000.0, quality=100.0),
                  dict(in_rate=16000.0, out_rate=22050.0), dict(scale=2.5, quality=75.0)]


@pytest.mark.parametrize("in_type", [np.float32, np.int16, np.uint8, np.int8, np.uint16,
                                     np.int32, np.uint32], ids=lambda t: t.__name__)
def test_audio_resample_bit_for_bit(in_type):
    rng = np.random.default_rng(3)
    mono = [_signal(n, 0, in_type, rng) for n in (1000, 777, 10, 0, 1, 3000)]
    multi = [_signal(n, c, in_type, rng) for n, c in ((1000, 2), (777, 3), (10, 1), (0, 2),
                                                       (600, 9), (300, 17))]
    for batch, layout in ((mono, "t"), (multi, "tc")):
        for case in RESAMPLE_CASES:
            for out_type in (None, "FLOAT", "INT16", "UINT8", "INT32", "UINT32"):
                def define(fn, types, case=case, out_type=out_type, batch=batch, layout=layout):
                    kw = dict(case)
                    if out_type:
                        kw["dtype"] = getattr(types, out_type)
                    x = fn.external_source(source=lambda: batch, batch=True, layout=layout)
                    return fn.audio_resample(x, **kw)

                out = run_both(define, len(batch))
                assert_same(out["stoker"][0][0], out["dali"][0][0],
                            what=f"{in_type.__name__} {layout} {case} -> {out_type}")


def test_audio_resample_per_sample_arguments_and_out_length():
    rng = np.random.default_rng(5)
    batch = [_signal(n, 2, np.float32, rng) for n in (500, 301, 64)]

    def define(fn, types):
        x = fn.external_source(source=lambda: batch, batch=True, layout="tc")
        rates = fn.external_source(source=lambda: [np.float32(v) for v in (8000, 11025, 48000)],
                                   batch=True)
        lengths = fn.external_source(source=lambda: [np.int64(v) for v in (123, 700, 64)],
                                     batch=True)
        scales = fn.external_source(source=lambda: [np.float32(v) for v in (0.5, 1.9, 3.3)],
                                    batch=True)
        return (fn.audio_resample(x, in_rate=16000.0, out_rate=rates),
                fn.audio_resample(x, out_length=lengths, dtype=types.INT16),
                fn.audio_resample(x, scale=scales, quality=10.0))

    out = run_both(define, 3)
    for k in range(3):
        assert_same(out["stoker"][0][k], out["dali"][0][k], what=f"output {k}")


# -- audio_resample's gpu backend -------------------------------------------------------------------
# It computes as the cpu backend (test_signal_gpu.py), so it is held to DALI's cpu backend bit for
# bit. DALI's gpu kernel steps the output positions in float otherwise (from each thread's
# offset, not output by output) and sums with fused multiply-adds: its outputs move from its cpu
# ones by up to ~1e-3 of a sample's position, ~2e-3 of full scale on broadband noise. Against
# it, smooth signals (low tones) and 1e-3 of full scale.

def _smooth(n, c, dtype, rng):
    t = np.arange(n)[:, None] if c else np.arange(n)
    f = 0.01 * (1 + np.arange(c)) if c else 0.01
    x = 0.4 * np.sin(2 * np.pi * f * t) + 0.3 * np.sin(2 * np.pi * 0.023 * t + 1)
    x = x + 0.01 * rng.standard_normal(x.shape)
    if dtype == np.float32:
        return x.astype(np.float32)
    info = np.iinfo(dtype)
    if info.min == 0:
        return ((x + 1) / 2 * info.max).astype(dtype)
    return (x * info.max).astype(dtype)


@pytest.mark.parametrize("in_type", [np.float32, np.int16, np.uint8], ids=lambda t: t.__name__)
def test_audio_resample_gpu_equals_dali(in_type):
    if not has_gpu():
        pytest.skip("no CUDA device: the GPU backends are compared on the GPU machine")
    rng = np.random.default_rng(8)
    mono = [_smooth(n, 0, in_type, rng) for n in (1000, 777, 10, 3000)]
    multi = [_smooth(n, c, in_type, rng) for n, c in ((1000, 2), (777, 3), (600, 2))]
    out_types = (None, "FLOAT", "INT16", "UINT8")
    for batch, layout in ((mono, "t"), (multi, "tc")):
        for case in RESAMPLE_CASES:
            def define(fn, types, gpu, case=case, batch=batch, layout=layout):
                x = fn.external_source(source=lambda: batch, batch=True, layout=layout)
                x = x.gpu() if gpu else x
                return tuple(fn.audio_resample(x, **case, **(
                    {"dtype": getattr(types, t)} if t else {})) for t in out_types)

            out = run_both(lambda fn, types: define(fn, types, True), len(batch), device_id=0)
            cpu = run("dali", lambda fn, types: define(fn, types, False), len(batch))[0]
            for k, t in enumerate(out_types):
                what = f"{in_type.__name__} {layout} {case} -> {t} (gpu)"
                ours, theirs = out["stoker"][0][k], out["dali"][0][k]
                assert_same(ours, cpu[k], what=what + " vs DALI's cpu")
                kind = ours[0].dtype
                full = 1.0 if kind == np.float32 else float(np.iinfo(kind).max)
                # 1e-3 of full scale, and an integer's rounding step.
                atol = 1e-3 * full + (0 if kind == np.float32 else 1)
                assert_same(ours, theirs, atol=atol, what=what)
