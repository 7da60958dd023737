"""readers.nemo_asr against DALI 2.4: manifests of WAV and FLAC files (mono and stereo, several
rates) with offsets and durations that fall between frames, Unicode transcripts, entries left out
by min_duration/max_duration, several manifests, every output type, downmixed or not, resampled,
sharded and padded over epochs, and relative paths opened from the working directory.

Both decode with libsndfile and resample with the same float operations: bit for bit. The one
difference (docs/dali_differences.md): with sample_rate given, DALI's sample_rate output still
reports each file's own rate; stoker's reports the rate the audio was resampled to."""
import json

import numpy as np
import pytest

from parity_util import SKIP_REASON, assert_same, dali, run, run_both

if dali is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

sf = pytest.importorskip("soundfile")
import stoker  # noqa: E402

if not stoker._stoker.build_info()["libsndfile"]:
    pytest.skip("stoker was built without libsndfile", allow_module_level=True)

PARITY = {
    "readers.nemo_asr": "exact: audio in int16/int32/float32, downmixed or not, resampled, "
                        "offsets and durations, text, idx, duration filters, shards, padding; "
                        "the sample_rate output after resampling differs (documented)",
}

# (name, rate, channels, frames, format, offset s, duration s, text)
UTTERANCES = [
    ("a.wav", 16000, 1, 16000, "WAV", None, 1.0, "héllo wörld"),
    ("b.flac", 22050, 2, 30001, "FLAC", 0.25, 0.33339, "b"),
    ("c.wav", 8000, 1, 7000, "WAV", 0.00003, 0.875, ""),
    ("d.wav", 44100, 2, 20000, "WAV", None, 0.4535, "日本語 text"),
    ("e.flac", 11025, 1, 11025, "FLAC", 0.5, None, "e"),
]


def _write(folder):
    rng = np.random.default_rng(3)
    entries = []
    for name, rate, ch, frames, fmt, offset, duration, text in UTTERANCES:
        x = np.clip(rng.standard_normal((frames, ch)) * 0.3, -1, 1)
        sf.write(str(folder / name), x, rate, format=fmt, subtype="PCM_16")
        e = {"audio_filepath": str(folder / name), "text": text, "extra": [1, {"k": 2}]}
        if offset is not None:
            e["offset"] = offset
        if duration is not None:
            e["duration"] = duration
        entries.append(e)
    return entries


def _manifest(path, entries):
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries),
                    encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def manifests(tmp_path_factory):
    folder = tmp_path_factory.mktemp("nemo")
    entries = _write(folder)
    return [_manifest(folder / "m1.json", entries[:3]), _manifest(folder / "m2.json", entries[3:])]


def _compare(define, batch_size, iterations=1, skip_outputs=()):
    out = run_both(define, batch_size, iterations=iterations)
    for it in range(iterations):
        assert len(out["stoker"][it]) == len(out["dali"][it])
        for k in range(len(out["dali"][it])):
            if k not in skip_outputs:
                assert_same(out["stoker"][it][k], out["dali"][it][k],
                            what=f"iteration {it} output {k}")
    return out


@pytest.mark.parametrize("kwargs", [
    {},
    {"read_idxs": True, "downmix": False},
    {"dtype": "INT16", "read_idxs": True, "read_text": False},
    {"dtype": "INT32", "read_sample_rate": False},
    {"min_duration": 0.6, "read_idxs": True},
    {"max_duration": 0.5, "min_duration": 0.3, "read_idxs": True, "downmix": False},
])
def test_outputs_match(manifests, kwargs):
    def define(fn, types):
        kw = dict(kwargs)
        if "dtype" in kw:
            kw["dtype"] = getattr(types, kw["dtype"])
        return tuple(fn.readers.nemo_asr(manifest_filepaths=manifests, **kw))

    _compare(define, 3, iterations=3)


@pytest.mark.parametrize("quality", [0, 50, 100])
def test_resampled_audio_matches_and_the_rate_is_the_target(manifests, quality):
    def define(fn, types):
        return tuple(fn.readers.nemo_asr(manifest_filepaths=manifests, sample_rate=16000,
                                         quality=quality, downmix=False))

    out = _compare(define, 5, skip_outputs=(1,))
    rates = [float(r) for r in out["stoker"][0][1]]
    assert rates == [16000.0] * 5
    assert [float(r) for r in out["dali"][0][1]] == [16000, 22050, 8000, 44100, 11025]


@pytest.mark.parametrize("kwargs", [
    {"pad_last_batch": True},
    {"shuffle_after_epoch": True},
    {"stick_to_shard": True},
])
def test_shards_and_orders_over_epochs(manifests, kwargs):
    def define(fn, types):
        return tuple(fn.readers.nemo_asr(manifest_filepaths=manifests, shard_id=1, num_shards=2,
                                         read_idxs=True, **kwargs))

    _compare(define, 2, iterations=6)


def test_relative_paths_open_from_the_working_directory(tmp_path, monkeypatch):
    (tmp_path / "audio").mkdir()
    entries = _write(tmp_path / "audio")
    for e in entries:
        e["audio_filepath"] = "audio/" + e["audio_filepath"].rsplit("/", 1)[1]
    (tmp_path / "lists").mkdir()
    manifest = _manifest(tmp_path / "lists" / "m.json", entries)
    monkeypatch.chdir(tmp_path)

    def define(fn, types):
        return tuple(fn.readers.nemo_asr(manifest_filepaths=[manifest]))

    _compare(define, 5)


def test_paths_relative_to_the_manifest_work_where_dali_finds_no_file(tmp_path, monkeypatch):
    # NeMo's own rule: stoker falls back to it, DALI fails on such a manifest.
    entries = _write(tmp_path)
    for e in entries:
        e["audio_filepath"] = e["audio_filepath"].rsplit("/", 1)[1]
    manifest = _manifest(tmp_path / "m.json", entries)
    monkeypatch.chdir("/")
    define = lambda fn, types: tuple(fn.readers.nemo_asr(manifest_filepaths=[manifest]))  # noqa
    with pytest.raises(RuntimeError, match="No such file"):
        run("dali", define, 5)
    absolute = [_manifest(tmp_path / "abs.json", _write(tmp_path))]
    got = run("stoker", define, 5)[0]
    want = run("stoker", lambda fn, types: tuple(
        fn.readers.nemo_asr(manifest_filepaths=absolute)), 5)[0]
    for k in range(3):
        assert_same(got[k], want[k], what=f"output {k}")


def test_a_duration_of_zero_is_empty_and_none_is_the_whole_file(tmp_path):
    entries = _write(tmp_path)[:2]
    entries[0]["duration"] = 0
    entries[1].pop("duration")
    manifest = _manifest(tmp_path / "m.json", entries)
    out = _compare(lambda fn, types: tuple(fn.readers.nemo_asr(manifest_filepaths=[manifest])), 2)
    a = out["stoker"][0][0]
    assert a[0].shape == (0,) and a[1].shape == (30001 - 5512,)  # from the offset on
