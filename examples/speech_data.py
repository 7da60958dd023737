"""Speech-like utterances written as 16-bit WAV files, one sub-folder per class, for
examples/speech_recognition.py and bench/audio.py (numpy and the standard library only, so a
benchmark's child process can make data without importing either loader).

Five "words", each a fixed sequence of phoneme-like segments, so that the class shows in how the
spectrum changes over time: what survives Jasper's per-feature normalisation over time, which
takes each mel band's own level away (a steady sound looks alike in every band after it).
- rise / fall: a pitch glide up or down by 1.5 to 3 times (intonation);
- rise_fall: up, then down to where it started;
- s_vowel: a fricative (noise in a high band, 3-7 kHz: an "s") then a vowel (a voiced harmonic
  stack, pitch 90-250 Hz drifting, shaped by three formants): "sa";
- vowel_s: the vowel, then the fricative: "as".
Each utterance has a random pitch, level (-26 to -1 dBFS peak), length, split between its
segments, an attack/release and a syllable-rate amplitude wobble, steady background noise over
the sound (15-30 dB below its peak), and leading and trailing silence: a noise floor 65-85 dB
below the peak, quiet enough that nonsilent_region's -60 dB cut-off (Jasper's) trims it, as it
trims real recordings' pauses.
"""

import os
import wave

import numpy as np

RATE = 16000
CLASSES = ("rise", "fall", "rise_fall", "s_vowel", "vowel_s")


def _phase(freq, rate):
    """The phase of a sinusoid whose frequency (Hz, per sample) varies: the running sum."""
    return 2 * np.pi * np.cumsum(freq) / rate


def _glide(rng, shape, n, rate):
    """A sinusoid gliding over `shape` (0..1 per sample: 0 the lowest pitch, 1 the highest),
    exponentially (the same musical interval per step), peak 1."""
    lo, ratio = rng.uniform(200, 900), rng.uniform(1.5, 3.0)
    return np.sin(_phase(lo * ratio ** shape, rate))


def _vowel(rng, n, rate):
    """A voiced harmonic stack with a drifting pitch, each harmonic's level the sum of resonance
    curves around three formants (a vowel's spectral envelope), peak 1."""
    t = np.arange(n) / rate
    pitch = rng.uniform(90, 250) * (1 + 0.1 * np.sin(2 * np.pi * rng.uniform(1, 3) * t
                                                     + rng.uniform(0, 2 * np.pi)))
    phase = _phase(pitch, rate)
    formants = [(rng.uniform(600, 850), 90.0), (rng.uniform(1050, 1350), 110.0),
                (rng.uniform(2300, 2700), 150.0)]
    mean_pitch = float(pitch.mean())
    x = np.zeros(n)
    for k in range(1, int(5000 / mean_pitch) + 1):
        gain = sum(1 / (1 + ((k * mean_pitch - fc) / bw) ** 2) for fc, bw in formants)
        x += gain * np.sin(k * phase)
    return x / max(np.abs(x).max(), 1e-12)


def _fricative(rng, n, rate):
    """White noise kept in a high band (an FFT mask), peak 1."""
    lo, hi = rng.uniform(2800, 3500), rng.uniform(6000, 7500)
    spectrum = np.fft.rfft(rng.standard_normal(n))
    freqs = np.fft.rfftfreq(n, 1 / rate)
    spectrum[(freqs < lo) | (freqs > hi)] = 0
    x = np.fft.irfft(spectrum, n)
    return x / max(np.abs(x).max(), 1e-12)


def _word(rng, kind, n, rate):
    """The class's sound, n samples, peak about 1."""
    ramp = np.arange(n) / max(n - 1, 1)
    if kind == "rise":
        return _glide(rng, ramp, n, rate)
    if kind == "fall":
        return _glide(rng, 1 - ramp, n, rate)
    if kind == "rise_fall":
        turn = rng.uniform(0.35, 0.65)
        return _glide(rng, np.minimum(ramp / turn, (1 - ramp) / (1 - turn)), n, rate)
    if kind in ("s_vowel", "vowel_s"):
        m = int(n * rng.uniform(0.3, 0.5))  # the fricative's share
        s, v = _fricative(rng, m, rate), _vowel(rng, n - m, rate)
        return np.concatenate([s, v] if kind == "s_vowel" else [v, s])
    raise ValueError(f"unknown class {kind!r}; the classes: {CLASSES}")


def _envelope(rng, n, rate):
    """Attack and release ramps and a syllable-rate (3-6 Hz) amplitude wobble."""
    t = np.arange(n) / rate
    attack = min(n, int(rate * rng.uniform(0.01, 0.06)))
    release = min(n - attack, int(rate * rng.uniform(0.03, 0.1)))
    env = 1 - rng.uniform(0, 0.4) * (0.5 + 0.5 * np.sin(2 * np.pi * rng.uniform(3, 6) * t
                                                        + rng.uniform(0, 2 * np.pi)))
    env[:attack] *= np.linspace(0, 1, attack, endpoint=False)
    env[n - release:] *= np.linspace(1, 0, release)
    return env


def utterance(rng, kind, seconds=(0.4, 1.2), silence=(0.1, 0.5), rate=RATE):
    """One utterance of class `kind` as float64 samples in -1..1: `seconds` (a range) of sound
    between leading and trailing silences of `silence` seconds each."""
    n = max(1, int(rng.uniform(*seconds) * rate))
    env = _envelope(rng, n, rate)
    sound = _word(rng, kind, n, rate) * env
    # Background noise over the sound at a steady level: bands the class does not sound in
    # carry only noise, so after per-feature normalisation they still look unlike the bands it
    # does sound in (noise following the envelope would give every band the same contour).
    background = rng.standard_normal(n) * 10 ** (-rng.uniform(15, 30) / 20)
    lead, trail = (int(rng.uniform(*silence) * rate) for _ in range(2))
    x = np.concatenate([np.zeros(lead), sound + background, np.zeros(trail)])
    x *= 10 ** (-rng.uniform(1, 26) / 20) / max(np.abs(x).max(), 1e-12)  # the peak level
    floor = np.abs(x).max() * 10 ** (-rng.uniform(65, 85) / 20)
    return np.clip(x + rng.standard_normal(x.size) * floor, -1, 1)


def write_wav(path, samples, rate=RATE):
    """Samples in -1..1 as a mono 16-bit PCM WAV file."""
    pcm = np.round(np.asarray(samples) * 32767).astype("<i2")
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())


def make_speech_folder(root, count, seed=0, seconds=(0.4, 1.2), silence=(0.1, 0.5),
                       classes=CLASSES, rate=RATE):
    """Writes `count` utterances as root/<class>/utt_<i>.wav, the classes taking turns (equal
    counts), and returns their paths. Labels from readers.file follow the sorted folder names."""
    rng = np.random.default_rng(seed)
    paths = []
    for i in range(count):
        kind = classes[i % len(classes)]
        folder = os.path.join(root, kind)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"utt_{i:05d}.wav")
        write_wav(path, utterance(rng, kind, seconds, silence, rate), rate)
        paths.append(path)
    return paths
