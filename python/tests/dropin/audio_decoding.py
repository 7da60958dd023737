# DALI's audio decoding examples (docs/examples/audio_processing: "Audio Decoder in DALI",
# "Audio resampling"), on WAV files written here with Python's wave module instead of their
# recordings: files from readers.file decoded as int16 and as floats, downmixed and resampled at
# decode time, and resampled after it with audio_resample (to a rate, by a scale, to a length).
# Written for nvidia.dali.
import os
import tempfile
import wave

import numpy as np

from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn
import nvidia.dali.types as types

batch_size = 3
RESULTS, COMPARE = {}, {}


def write_wav(path, samples, rate):
    """samples: int16, (frames, channels)."""
    with wave.open(path, "wb") as w:
        w.setnchannels(samples.shape[1])
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(samples.tobytes())


audio_files = tempfile.mkdtemp()
rng = np.random.default_rng(2)
for k, (rate, channels, seconds) in enumerate([(16000, 1, 0.5), (22050, 2, 0.4),
                                               (44100, 2, 0.25)]):
    t = np.arange(int(rate * seconds)) / rate
    tones = [np.sin(2 * np.pi * (220 + 110 * c + 50 * k) * t) for c in range(channels)]
    x = 0.4 * np.stack(tones, 1) + 0.05 * rng.standard_normal((len(t), channels))
    os.makedirs(os.path.join(audio_files, f"speaker{k}"))
    write_wav(os.path.join(audio_files, f"speaker{k}", f"clip{k}.wav"),
              (np.clip(x, -1, 1) * 32767).astype(np.int16), rate)


def run(pipe):
    pipe.build()
    return [[np.array(o.at(i)) for i in range(batch_size)] for o in pipe.run()]


@pipeline_def(batch_size=batch_size, num_threads=2, device_id=None)
def audio_decoder_pipe():
    encoded, _ = fn.readers.file(file_root=audio_files)
    audio, sr = fn.decoders.audio(encoded, dtype=types.INT16)
    mono, _ = fn.decoders.audio(encoded, downmix=True)
    at_16k, sr_16k = fn.decoders.audio(encoded, sample_rate=16000, downmix=True)
    return audio, sr, mono, at_16k, sr_16k


@pipeline_def(batch_size=batch_size, num_threads=2, device_id=None)
def resample_pipe():
    encoded, _ = fn.readers.file(file_root=audio_files)
    audio, sr = fn.decoders.audio(encoded)
    to_8k = fn.audio_resample(audio, in_rate=sr, out_rate=8000.0)
    halved = fn.audio_resample(audio, scale=0.5, quality=80, dtype=types.INT16)
    fixed = fn.audio_resample(audio, out_length=1000)
    return to_8k, halved, fixed


for name, out in zip(["audio", "sample_rate", "downmixed", "resampled_16k", "rate_16k"],
                     run(audio_decoder_pipe())):
    RESULTS[name] = out
for name, out in zip(["audio_resample_8k", "audio_resample_halved", "audio_resample_1000"],
                     run(resample_pipe())):
    RESULTS[name] = out
