"""readers.nemo_asr's errors and limits (its values against DALI: parity/test_parity_nemo_asr.py):
every bad manifest or audio file is named with what is wrong."""
import json

import numpy as np
import pytest

import stoker
from stoker import fn, pipeline_def, types

sf = pytest.importorskip("soundfile")
if not stoker._stoker.build_info()["libsndfile"]:
    pytest.skip("stoker was built without libsndfile", allow_module_level=True)


def _wav(path, frames=800, rate=8000, channels=1):
    x = np.linspace(-0.5, 0.5, frames * channels).reshape(frames, channels)
    sf.write(str(path), x, rate, subtype="PCM_16")
    return str(path)


def _manifest(path, lines):
    path.write_text("\n".join(ln if isinstance(ln, str) else json.dumps(ln) for ln in lines))
    return str(path)


def _run(manifest, batch_size=1, **kwargs):
    @pipeline_def(batch_size=batch_size, num_threads=1, device_id=None)
    def p():
        return tuple(fn.readers.nemo_asr(manifest_filepaths=[manifest], **kwargs))

    pipe = p()
    pipe.build()
    return pipe.run()


def test_a_window_and_the_legacy_names(tmp_path):
    wav = _wav(tmp_path / "a.wav")
    m = _manifest(tmp_path / "m.json", [{"audio_filepath": wav, "offset": 0.01, "duration": 0.02,
                                         "text": "zwölf"}])
    audio, rate, text, idx = _run(m, read_idxs=True, dtype=types.INT16)
    x = np.array(audio[0])
    full = sf.read(wav, dtype="int16")[0]
    assert x.dtype == np.int16 and np.array_equal(x, full[80:240])
    assert float(np.array(rate[0])) == 8000 and bytes(np.array(text[0])).decode() == "zwölf"
    assert np.array(idx[0]).shape == (1,)

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def legacy():
        fn_audio = fn.nemo_asr_reader(manifest_filepaths=[m])[0]
        ops_audio = stoker.ops.NemoAsrReader(manifest_filepaths=[m])()[0]
        return fn_audio, ops_audio, stoker.ops.readers.NemoAsr(manifest_filepaths=[m])()[0]

    with pytest.warns(DeprecationWarning, match="readers.nemo_asr"):
        pipe = legacy()
    pipe.build()
    for out in pipe.run():
        assert np.array_equal(np.array(out[0]), full[80:240] / np.float32(32768))


@pytest.mark.parametrize("line, message", [
    ('{"audio_filepath": "a.wav", "duration": 1', "m.json, line 2: not valid JSON"),
    ('["a.wav"]', "m.json, line 2: expected a JSON object per line"),
    ('{"duration": 1.0, "text": "x"}', 'm.json, line 2: the entry has no "audio_filepath"'),
    ('{"audio_filepath": "a.wav", "duration": "1s"}', 'm.json, line 2: "duration" is not a number'),
    ('{"audio_filepath": "a.wav", "text": 5}', 'm.json, line 2: "text" is not a string'),
    ('{"audio_filepath": "a.wav", "offset": -0.5}',
     'm.json, line 2: "offset" must be a non-negative number of seconds, got -0.5'),
])
def test_bad_manifest_lines_are_named(tmp_path, line, message):
    wav = _wav(tmp_path / "a.wav")
    m = _manifest(tmp_path / "m.json", [{"audio_filepath": wav}, line])
    with pytest.raises(ValueError, match="readers.nemo_asr") as e:
        _run(m)
    assert message in str(e.value)


def test_missing_manifest_and_everything_filtered(tmp_path):
    with pytest.raises(Exception, match="nope.json"):
        _run(str(tmp_path / "nope.json"))
    m = _manifest(tmp_path / "m.json", [{"audio_filepath": _wav(tmp_path / "a.wav"),
                                         "duration": 0.1}])
    with pytest.raises(ValueError, match=r"the manifests list no utterance within the duration "
                                         r"limits \(1 left out by min_duration/max_duration\)"):
        _run(m, min_duration=0.5)
    with pytest.raises(ValueError, match="manifest_filepaths is empty"):
        @pipeline_def(batch_size=1, num_threads=1, device_id=None)
        def p():
            return fn.readers.nemo_asr(manifest_filepaths=[])[0]
        p().build()


def test_bad_audio_files_are_named(tmp_path):
    good = _wav(tmp_path / "good.wav")
    (tmp_path / "junk.wav").write_bytes(b"RIFF....WAVEjunk" * 10)
    cases = [(str(tmp_path / "gone.wav"), {}, "gone.wav"),
             (str(tmp_path / "junk.wav"), {}, "cannot open the data as audio"),
             (good, {"offset": 0.2}, "offset of 1600 frames is outside the file's 800 frames")]
    for path, extra, message in cases:
        m = _manifest(tmp_path / "m.json", [{"audio_filepath": path, **extra}])
        with pytest.raises(Exception) as e:
            _run(m)
        assert message in str(e.value) and path.rsplit("/", 1)[1] in str(e.value), str(e.value)


def test_bad_arguments(tmp_path):
    m = _manifest(tmp_path / "m.json", [{"audio_filepath": _wav(tmp_path / "a.wav")}])
    with pytest.raises(TypeError, match="dtype must be int16, int32 or float32, got uint8"):
        _run(m, dtype=types.UINT8)
    with pytest.raises(ValueError, match=r"quality must be in \[0, 100\], got 101"):
        _run(m, sample_rate=16000, quality=101)
