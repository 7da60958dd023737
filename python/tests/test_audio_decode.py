"""decoders.audio (and DALI's older name audio_decoder): WAV, FLAC and Ogg files written by the
soundfile package (an independent libsndfile build) decoded against soundfile's own reads, in
every output type; downmixing against numpy; resampling against audio_resample; the sampling-rate
output; per-sample sample_rate; a header claiming more frames than its data (refused before any
allocation for the claim); every error message, naming the file read by readers.file."""
import io
import re

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn, types

sf = pytest.importorskip("soundfile")

if not _stoker.build_info()["libsndfile"]:
    pytest.skip("stoker was built without libsndfile", allow_module_level=True)


def _encode(x, rate, fmt="WAV", subtype="PCM_16"):
    b = io.BytesIO()
    sf.write(b, x, rate, format=fmt, subtype=subtype)
    return np.frombuffer(b.getvalue(), np.uint8)


def _signal(frames, channels, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(frames)[:, None]
    x = 0.5 * np.sin(t * (0.01 + 0.013 * np.arange(channels))) + 0.2 * rng.standard_normal(
        (frames, channels))
    return np.clip(x, -1, 1)


def _run(blobs, **kwargs):
    """decoders.audio over `blobs`: ([audio per sample], [rate per sample], audio layout)."""
    pipe = stoker.Pipeline(batch_size=len(blobs), num_threads=2)
    with pipe:
        audio, rate = fn.decoders.audio(fn.external_source(lambda: blobs), **kwargs)
        pipe.set_outputs(audio, rate)
    a, r = pipe.run()
    return [np.array(s) for s in a], [np.array(s) for s in r], a.layout()


def _raises(kind, message, blobs, **kwargs):
    with pytest.raises(kind, match=re.escape(message)):
        _run(blobs, **kwargs)


FORMATS = [("WAV", "PCM_16"), ("WAV", "PCM_U8"), ("WAV", "PCM_24"), ("WAV", "PCM_32"),
           ("WAV", "FLOAT"), ("WAV", "DOUBLE"), ("WAV", "ULAW"), ("WAV", "IMA_ADPCM"),
           ("FLAC", "PCM_16"), ("FLAC", "PCM_24"), ("AIFF", "PCM_16"), ("OGG", "VORBIS"),
           ("OGG", "OPUS")]


@pytest.mark.parametrize("fmt,subtype", FORMATS)
@pytest.mark.parametrize("dtype", ["FLOAT", "INT16", "INT32"])
def test_every_format_decodes_as_libsndfile_reads_it(fmt, subtype, dtype):
    np_type = {"FLOAT": np.float32, "INT16": np.int16, "INT32": np.int32}[dtype]
    channels = (1, 2) if subtype == "IMA_ADPCM" else (1, 2, 3)  # libsndfile's IMA: 1 or 2
    blobs = [_encode(_signal(900 + 77 * c, c, c), 48000 if subtype == "OPUS" else 8000 * c + 8000,
                     fmt, subtype) for c in channels]
    audio, rates, layout = _run(blobs, dtype=getattr(types, dtype))
    assert layout == ""
    for blob, a, r in zip(blobs, audio, rates):
        ref, rate = sf.read(io.BytesIO(blob.tobytes()), dtype=np_type.__name__, always_2d=True)
        assert a.dtype == np_type and a.shape == ref.shape  # (frames, channels), mono too
        assert r.dtype == np.float32 and r.shape == () and r == rate
        if fmt == "OGG":
            # Vorbis and Opus decode in floating point: stoker's (Debian's) and soundfile's
            # libvorbis/libopus builds round differently.
            # Within a float's rounding of full scale, or one step of int16.
            scale = {np.float32: 1.0, np.int16: 32768.0, np.int32: 2.0 ** 31}[np_type]
            atol = 1.01 / 32768 if np_type == np.int16 else 2e-6
            np.testing.assert_allclose(a / scale, ref / scale, atol=atol)
        else:
            np.testing.assert_array_equal(a, ref)


def _round_half_away(x):
    return np.sign(x) * np.floor(np.abs(x) + np.float32(0.5))


@pytest.mark.parametrize("dtype", ["FLOAT", "INT16"])
def test_downmix_is_the_float_mean_of_the_channels(dtype):
    blobs = [_encode(_signal(500, c, c), 16000) for c in (1, 2, 5)]
    audio, _, _ = _run(blobs, downmix=True, dtype=getattr(types, dtype))
    for blob, a, c in zip(blobs, audio, (1, 2, 5)):
        if c == 1:  # nothing to mix: libsndfile's own conversion
            ref, _ = sf.read(io.BytesIO(blob.tobytes()), dtype=a.dtype.name)
            np.testing.assert_array_equal(a, ref)
            continue
        x, _ = sf.read(io.BytesIO(blob.tobytes()), dtype="float32")
        w = np.float32(1.0 / c)
        mean = x[:, 0] * w
        for k in range(1, c):
            mean = mean + x[:, k] * w
        assert a.shape == (500,)
        if dtype == "FLOAT":
            np.testing.assert_array_equal(a, mean)
        else:  # scaled by 32767, rounded half away from zero (DALI's ConvertSatNorm)
            np.testing.assert_array_equal(a, _round_half_away(mean * np.float32(32767)))


@pytest.mark.parametrize("downmix", [False, True])
@pytest.mark.parametrize("dtype", ["FLOAT", "INT16", "INT32"])
def test_sample_rate_resamples_as_audio_resample_does(downmix, dtype):
    blobs = [_encode(_signal(3000, c, c), 16000 + 1000 * c) for c in (1, 2, 3)]
    pipe = stoker.Pipeline(batch_size=3, num_threads=2)
    with pipe:
        raw = fn.external_source(lambda: blobs)
        a, r = fn.decoders.audio(raw, sample_rate=22050, quality=30, downmix=downmix,
                                 dtype=getattr(types, dtype))
        b, rb = fn.decoders.audio(raw, downmix=downmix)
        c = fn.audio_resample(b, in_rate=rb, out_rate=22050.0, quality=30,
                              dtype=getattr(types, dtype))
        pipe.set_outputs(a, r, c)
    a, r, c = pipe.run()
    for k, ch in enumerate((1, 2, 3)):
        want = int(np.ceil(3000 * 22050 / (16000 + 1000 * ch)))
        assert np.array(a[k]).shape == ((want,) if downmix else (want, ch))
        np.testing.assert_array_equal(np.array(a[k]), np.array(c[k]))
        assert np.array(r[k]) == 22050.0


def test_sample_rate_per_sample_and_equal_to_the_files_rate():
    blob = _encode(_signal(1000, 2), 16000)
    pipe = stoker.Pipeline(batch_size=3, num_threads=2)
    with pipe:
        rates = fn.external_source(lambda: [np.float32(16000), np.float32(8000), np.float32(0)])
        a, r = fn.decoders.audio(fn.external_source(lambda: [blob] * 3), sample_rate=rates,
                                 dtype=types.INT16)
        pipe.set_outputs(a, r)
    a, r = pipe.run()
    plain, _ = sf.read(io.BytesIO(blob.tobytes()), dtype="int16")
    # The file's own rate and 0 leave the audio as decoded; the rate output is the argument.
    np.testing.assert_array_equal(np.array(a[0]), plain)
    np.testing.assert_array_equal(np.array(a[2]), plain)
    assert np.array(a[1]).shape == (500, 2)
    assert [float(np.array(x)) for x in r] == [16000.0, 8000.0, 0.0]


def test_quality_is_checked_only_to_resample():
    blob = _encode(_signal(100, 1), 16000)
    _run([blob], quality=101.0)  # DALI ignores it without sample_rate
    with pytest.raises(ValueError, match=re.escape(
            "decoders.audio: quality must be in [0, 100], got 101")):
        _run([blob], quality=101.0, sample_rate=8000.0)


def test_empty_and_header_only_files():
    blob = _encode(np.zeros((0, 2)), 16000)
    audio, rates, _ = _run([blob])
    assert audio[0].shape == (0, 2) and rates[0] == 16000
    audio, _, _ = _run([blob], downmix=True, sample_rate=8000.0)
    assert audio[0].shape == (0,)


def _false_flac():
    """A FLAC whose STREAMINFO claims 2^33 frames over 3000 frames of data."""
    d = bytearray(_encode(_signal(3000, 2), 8000, "FLAC").tobytes())
    si = 8  # after "fLaC" and the block header
    d[si + 13] = (d[si + 13] & 0xF0) | 2
    d[si + 14:si + 18] = b"\0\0\0\0"
    return np.frombuffer(bytes(d), np.uint8)


def test_a_header_claiming_more_than_the_data_is_refused_before_allocation():
    # 2^33 stereo floats would be 64 GiB: counted by decoding (in a fixed buffer) instead.
    _raises(ValueError, "decoders.audio: the header claims 8589934592 frames but the data holds "
            "3000 (truncated or corrupt)", [_false_flac()])


def test_truncated_data_fails_as_dalis_decoder_does():
    blob = _encode(_signal(20000, 2), 16000, "FLAC")
    _raises(ValueError, "decoders.audio: expected 20000 frames but decoded ",
            [blob[:len(blob) * 2 // 3]])
    # A truncated WAV is sized by what is there (libsndfile's rule).
    wav = _encode(_signal(1000, 1), 16000)
    audio, _, _ = _run([wav[:44 + 600]])
    assert audio[0].shape == (300, 1)


def test_errors_name_the_operator_the_sample_and_the_file(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "junk.wav").write_bytes(b"not audio at all" * 8)
    (tmp_path / "c" / "good.wav").write_bytes(_encode(_signal(10, 1), 8000).tobytes())
    pipe = stoker.Pipeline(batch_size=2, num_threads=2)
    with pipe:
        data, _ = fn.readers.file(file_root=str(tmp_path))
        pipe.set_outputs(*fn.decoders.audio(data))
    with pytest.raises(ValueError, match=re.escape(
            f"sample 1 (source '{tmp_path / 'c' / 'junk.wav'}'): decoders.audio: cannot open the "
            "data as audio: Format not recognised.")):
        pipe.run()


def test_argument_and_input_errors():
    good = _encode(_signal(100, 1), 16000)
    _raises(TypeError, "decoders.audio: dtype must be int16, int32 or float32, got uint8",
            [good], dtype=types.UINT8)
    _raises(TypeError, "decoders.audio: expected encoded audio as uint8 bytes, got int16",
            [good[:100].view(np.int16)])
    _raises(ValueError, "decoders.audio: expected 1-D encoded bytes, got 2 dimensions",
            [good[:100].reshape(2, 50)])
    _raises(ValueError, "decoders.audio: cannot open the data as audio: Format not recognised.",
            [np.zeros(0, np.uint8)])
    _raises(ValueError, "decoders.audio: sample_rate must be non-negative (0: not resampled), "
            "got -5", [good], sample_rate=-5.0)
    _raises(ValueError, "decoders.audio: sample_rate would make an output of 10000000000x1 "
            "(1e+10 elements in sample 0); arguments may ask for at most 2147483647 "
            "elements per sample", [_encode(_signal(16000, 1), 16000)], sample_rate=1e10)
    b = io.BytesIO()
    try:
        sf.write(b, _signal(2000, 1), 16000, format="MP3")
    except Exception:  # a soundfile without MP3
        return
    _raises(ValueError, "decoders.audio: MPEG audio (MP3) is not decoded, as DALI 2.4's "
            "libsndfile does not", [np.frombuffer(b.getvalue(), np.uint8)])


def test_the_legacy_name_warns_and_decodes_alike():
    blob = _encode(_signal(300, 2), 16000)
    pipe = stoker.Pipeline(batch_size=1, num_threads=1)
    with pytest.warns(DeprecationWarning, match="decoders.audio"):
        with pipe:
            a, r = fn.audio_decoder(fn.external_source(lambda: [blob]), dtype=types.INT16)
            pipe.set_outputs(a, r)
    a, r = pipe.run()
    ref, _ = sf.read(io.BytesIO(blob.tobytes()), dtype="int16")
    np.testing.assert_array_equal(np.array(a[0]), ref)
