# DALI's audio processing examples (docs/examples/audio_processing: "Audio spectrogram", "Mel-Scale
# Spectrogram and MFCCs", "Silence detection"), on synthetic audio instead of their recordings:
# pre-emphasis, a spectrogram in decibels, the mel spectrogram and its MFCCs, the power spectrum
# of frames, and the non-silent region cut out with slice. Written for nvidia.dali. The spectral
# operators run on the CPU here (stoker has no gpu backends for them yet).
import numpy as np

from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn
import nvidia.dali.types as types

batch_size = 2
sample_rate = 16000.0
RESULTS, COMPARE = {}, {}


def get_audio():
    """A chirp between silences, and a tone with noise."""
    rng = np.random.default_rng(6)
    t = np.arange(12000) / sample_rate
    chirp = np.zeros(16000, np.float32)
    chirp[2000:14000] = 0.5 * np.sin(2 * np.pi * (200 + 1500 * t) * t)
    tone = 0.3 * np.sin(2 * np.pi * 440 * np.arange(9000) / sample_rate)
    tone = (tone + 0.01 * rng.standard_normal(9000)).astype(np.float32)
    return [chirp, tone]


def run(pipe):
    pipe.build()
    return [[np.array(o.as_cpu().at(i)) for i in range(batch_size)] for o in pipe.run()]


@pipeline_def(batch_size=batch_size, num_threads=2, device_id=None)
def audio_pipe():
    audio = fn.external_source(source=get_audio, batch=True, dtype=types.FLOAT)
    emphasized = fn.preemphasis_filter(audio, preemph_coeff=0.97)
    spectrogram = fn.spectrogram(emphasized, nfft=512, window_length=400, window_step=160)
    spectrogram_db = fn.to_decibels(spectrogram, multiplier=10.0, cutoff_db=-80)
    mel = fn.mel_filter_bank(spectrogram, sample_rate=sample_rate, nfilter=64)
    mel_db = fn.to_decibels(mel, multiplier=10.0, cutoff_db=-80)
    mfccs = fn.mfcc(mel_db, n_mfcc=13, axis=0, lifter=22.0)
    frames = fn.reshape(fn.slice(audio, 0, 4096, axes=[0]), shape=[16, 256])
    power = fn.power_spectrum(frames, nfft=256, axis=1)
    begin, length = fn.nonsilent_region(audio, cutoff_db=-60)
    trimmed = fn.slice(audio, begin, length, axes=[0])
    return spectrogram_db, mel_db, mfccs, power, begin, length, trimmed


names = ["spectrogram_db", "mel_db", "mfcc", "power_spectrum", "begin", "length", "trimmed"]
for name, out in zip(names, run(audio_pipe())):
    RESULTS[name] = out
# The FFTs differ in their last bits (stoker's KissFFT, DALI's FFTS): about 2e-7 of a sample's
# largest bin, which near the -80 dB cut-off is up to ~2e-3 dB (measured), and the MFCCs sum 64
# such values (~2e-2 measured). The power spectrum's largest values are ~4e3.
for name in ("spectrogram_db", "mel_db"):
    COMPARE[name] = ("tolerance", 1e-2)
COMPARE["mfcc"] = ("tolerance", 0.1)
COMPARE["power_spectrum"] = ("tolerance", 5e-3)
