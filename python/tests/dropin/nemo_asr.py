# NeMo's DALI data layer (nemo.collections.asr.data.audio_to_text_dali: AudioToCharDALIDataset)
# reads its manifests with readers.nemo_asr, resampled at decode, with indices instead of text,
# sharded, then computes log-mel features; here on a manifest of WAV files written with Python's
# wave module, with offsets and durations, two manifests and the duration filters.
# Written for nvidia.dali.
import json
import os
import tempfile
import wave

import numpy as np

from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn
import nvidia.dali.types as types

batch_size = 2
RESULTS, COMPARE = {}, {}

data = tempfile.mkdtemp()
rng = np.random.default_rng(5)
entries = []
for k, (rate, channels, seconds) in enumerate([(16000, 1, 0.5), (22050, 2, 0.4), (8000, 1, 0.9),
                                               (44100, 2, 0.3)]):
    t = np.arange(int(rate * seconds)) / rate
    x = 0.4 * np.sin(2 * np.pi * (200 + 90 * k) * t)[:, None] * np.ones((1, channels))
    x = np.clip(x + 0.05 * rng.standard_normal(x.shape), -1, 1)
    path = os.path.join(data, f"utt{k}.wav")
    with wave.open(path, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes((x * 32767).astype(np.int16).tobytes())
    entry = {"audio_filepath": path, "duration": seconds, "text": f"utterance {k}"}
    if k == 1:
        entry.update(offset=0.1, duration=0.25)
    entries.append(entry)
manifests = []
for m, part in enumerate((entries[:2], entries[2:])):
    manifests.append(os.path.join(data, f"manifest{m}.json"))
    with open(manifests[-1], "w") as f:
        f.writelines(json.dumps(e) + "\n" for e in part)


@pipeline_def(batch_size=batch_size, num_threads=2, device_id=None)
def nemo_pipe(shard_id, num_shards):
    audio, idx = fn.readers.nemo_asr(manifest_filepaths=manifests, sample_rate=16000.0,
                                     dtype=types.FLOAT, downmix=True, min_duration=0.2,
                                     max_duration=0.8, read_sample_rate=False, read_text=False,
                                     read_idxs=True, shard_id=shard_id, num_shards=num_shards,
                                     name="Reader")
    spec = fn.spectrogram(fn.preemphasis_filter(audio), nfft=512, window_length=320,
                          window_step=160)
    mel = fn.to_decibels(fn.mel_filter_bank(spec, sample_rate=16000.0, nfilter=64),
                         multiplier=10.0, reference=1.0, cutoff_db=-80.0)
    return audio, idx, mel


@pipeline_def(batch_size=batch_size, num_threads=2, device_id=None)
def text_pipe():
    audio, rate, text = fn.readers.nemo_asr(manifest_filepaths=manifests, downmix=False,
                                            dtype=types.INT16)
    return audio, rate, text


for shard in range(2):
    pipe = nemo_pipe(shard_id=shard, num_shards=2)
    pipe.build()
    for it in range(2):
        for name, out in zip(["audio", "idx", "log_mel"], pipe.run()):
            RESULTS[f"shard{shard}_{it}_{name}"] = [np.array(out.at(i)) for i in range(batch_size)]
    RESULTS[f"shard{shard}_epoch_size"] = pipe.epoch_size("Reader")
pipe = text_pipe()
pipe.build()
for it in range(2):
    for name, out in zip(["audio", "sample_rate", "text"], pipe.run()):
        RESULTS[f"text_{it}_{name}"] = [np.array(out.at(i)) for i in range(batch_size)]
# FFTs differ in rounding (stoker KissFFT, DALI its own): dB values within 1e-3.
COMPARE.update({k: ("tolerance", 1e-3) for k in RESULTS if k.endswith("log_mel")})
