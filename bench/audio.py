"""Speech features (Jasper's front end), utterances/s and seconds of audio/s: stoker, NVIDIA DALI
2.4 and a torch DataLoader, on the same WAV files in the same run. Feature extraction only, no
model.

    PYTHONPATH=build/python python3 bench/audio.py [--data DIR] [--count 300] [--seconds 1,20]
        [--libs stoker,dali,torch] [--device cpu|gpu] [--threads N] [--batch-size 32]
        [--warmup 3] [--window 10] [--repeats 3] [--json F]

The pipeline: examples/speech_recognition.py's speech_pipeline (decode -> nonsilent_region ->
slice -> dither -> preemphasis_filter -> spectrogram -> mel_filter_bank -> to_decibels ->
normalize -> pad), the same definition on stoker and on DALI (its import changed), batches
through each library's torch iterator. The torch baseline: a DataLoader with --threads workers,
each reading a file with soundfile and computing the same features (numpy for the cut, the
dither and the pre-emphasis; torch.stft, a mel matrix, log, per-band normalisation; torchaudio
has no wheel for the installed torch, so it is not used: its MelSpectrogram is the same
torch.stft and matrix product), batches padded as pad pads them.

--device gpu: the batches end on the GPU (each step waits for them there). Both libraries run
their GPU audio operators after the silence is cut (Jasper's split: decoding, nonsilent_region
and slice on the CPU; the dither, preemphasis_filter .. pad on the GPU); the DataLoader's
workers decode, cut, dither and pre-emphasise, and the GPU computes the rest of the batch at
once.

Data: DIR with one sub-folder of WAV files per class; default: --count generated utterances
(examples/speech_data.py) of --seconds (a range, uniform) each, written once under
/tmp/stoker-bench-audio. Method: each loader in its own process; warm-up of at least 3 batches
and --warmup seconds, then a --window seconds window; the median of --repeats processes (range
after it), the loaders taking turns. Seconds of audio/s: utterances/s times the set's mean file
duration (the window's utterances are a shuffled draw of the set). Before the loaders, the
baseline's features are compared with stoker's on the first 16 files (without dither: each
library draws its own).
"""

import argparse
import glob
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import wave

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "examples")
sys.path[:0] = [HERE, EXAMPLES]

# -- the torch baseline -----------------------------------------------------------------------


def _config():
    import speech_recognition as sr  # the example's constants: the same features
    return sr


def wav_files(root):
    """The files in readers.file's order: class folders sorted, files sorted in each."""
    classes = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
    return [(path, label) for label, c in enumerate(classes)
            for path in sorted(glob.glob(os.path.join(root, c, "*")))]


def dali_hann(n):
    """DALI's (and stoker's) Hann window, 0.5 (1 - cos(2 pi (t + 0.5) / n)): symmetric about
    n / 2, half a sample off torch.hann_window's."""
    import numpy as np
    return (0.5 * (1 - np.cos(2 * np.pi * (np.arange(n) + 0.5) / n))).astype(np.float32)


def mel_matrix(nfilter, nfft, rate):
    """mel_filter_bank's filters as a (nfilter, nfft / 2 + 1) matrix: Slaney's mel scale, corners
    equally spaced in mels from 0 to rate / 2, each filter divided by half its width in Hz."""
    import numpy as np

    def to_mel(f):
        f = np.asarray(f, np.float64)
        return np.where(f >= 1000, 15 + np.log(np.maximum(f, 1e-9) / 1000) / (np.log(6.4) / 27),
                        f * 3 / 200)

    def to_hz(m):
        return np.where(m >= 15, 1000 * np.exp((np.log(6.4) / 27) * (m - 15)), m * 200 / 3)

    corners = to_hz(np.linspace(to_mel(0), to_mel(rate / 2), nfilter + 2))
    bins = np.arange(nfft // 2 + 1) * rate / nfft
    lo, mid, hi = corners[:-2, None], corners[1:-1, None], corners[2:, None]
    m = np.maximum(0, np.minimum((bins - lo) / (mid - lo), (hi - bins) / (hi - mid)))
    return (m * (2 / (hi - lo))).astype(np.float32)


def prepare(path, dither=True):
    """What a DataLoader worker does before the spectrum: decode, cut the silence as
    nonsilent_region does (mean square over 2048 samples, -60 dB of the loudest, the start moved
    back by the window), dither, pre-emphasise (x[-1] = x[0]) and mirror NFFT / 2 samples onto
    each end (the spectrogram's centred windows). Returns (padded float32 samples, length)."""
    import numpy as np
    import soundfile
    sr = _config()
    x, rate = soundfile.read(path, dtype="float32", always_2d=True)
    if rate != sr.SAMPLE_RATE:
        raise ValueError(f"{path}: {rate} Hz; the torch baseline does not resample (needs "
                         f"{sr.SAMPLE_RATE} Hz files)")
    x = x.mean(axis=1, dtype=np.float32)
    window = 2048
    sq = np.cumsum(x.astype(np.float64) ** 2)
    power = sq.copy()
    power[window:] -= sq[:-window]
    loud = np.flatnonzero(power >= power.max() * 10 ** (sr.SILENCE_DB / 10))
    begin, end = (int(loud[0]), int(loud[-1]) + 1) if len(loud) else (0, 0)
    if begin:
        begin = max(begin - window + 1, 0)
    x = x[begin:end]
    if len(x) == 0:
        x = np.zeros(1, np.float32)
    if dither:
        x = x + np.random.default_rng().standard_normal(len(x), np.float32) * sr.DITHER
    y = np.empty_like(x)
    y[0] = x[0] * (1 - sr.PREEMPHASIS)
    y[1:] = x[1:] - sr.PREEMPHASIS * x[:-1]
    return np.pad(y, sr.NFFT // 2, mode="reflect" if len(y) > 1 else "edge"), len(y)


class Features:
    """The rest on torch, for a batch of prepared signals (B, samples, zero-padded after each)
    with their lengths: power spectrogram, mel, natural log (floor 1e-20), each band normalised
    over the utterance's own frames, zeros after them, frames padded to a multiple of 16."""

    def __init__(self, device):
        import torch
        sr = _config()
        self.torch, self.sr = torch, sr
        self.window = torch.from_numpy(dali_hann(int(sr.WINDOW_SECONDS * sr.SAMPLE_RATE)))
        self.window = self.window.to(device)
        self.mel = torch.from_numpy(mel_matrix(sr.NFEATURES, sr.NFFT, sr.SAMPLE_RATE)).to(device)
        self.step = int(sr.STRIDE_SECONDS * sr.SAMPLE_RATE)

    def __call__(self, padded, lengths):
        torch, sr = self.torch, self.sr
        spec = torch.stft(padded, sr.NFFT, hop_length=self.step, win_length=len(self.window),
                          window=self.window, center=False, return_complex=True)
        mel = torch.matmul(self.mel, spec.real ** 2 + spec.imag ** 2)
        logm = torch.log(torch.clamp(mel, min=1e-20))
        frames = lengths.to(logm.device) // self.step + 1
        valid = (torch.arange(logm.shape[-1], device=logm.device)[None, :]
                 < frames[:, None])[:, None, :]
        count = frames[:, None, None].to(logm.dtype)
        mean = (logm * valid).sum(-1, keepdim=True) / count
        var = (((logm - mean) * valid) ** 2).sum(-1, keepdim=True) / count
        std = torch.sqrt(var)
        out = torch.where(valid, (logm - mean) / torch.where(std > 0, std, 1), 0)
        align = sr.PAD_ALIGN
        t = int(frames.max())
        return torch.nn.functional.pad(out[..., :t], (0, -t % align))


class _Dataset:
    """Per item: the features (CPU: computed in the worker, one utterance) or the prepared
    signal (GPU: the main process computes the batch)."""

    def __init__(self, files, gpu, dither=True):
        self.files, self.gpu, self.dither, self.features = files, gpu, dither, None

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        import torch
        path, label = self.files[i]
        padded, n = prepare(path, self.dither)
        if self.gpu:
            return torch.from_numpy(padded), n, label
        if self.features is None:
            self.features = Features("cpu")
        f = self.features(torch.from_numpy(padded)[None], torch.tensor([n]))[0]
        return f[:, :n // self.features.step + 1], n, label


def _collate(items):
    """Pads along the last axis to the batch's longest (zeros), as fn.pad (plus the alignment
    for features)."""
    import torch
    data, lengths, labels = zip(*items)
    longest = max(d.shape[-1] for d in data)
    if data[0].dim() == 2:  # features
        longest += -longest % _config().PAD_ALIGN
    out = torch.zeros((len(data),) + tuple(data[0].shape[:-1]) + (longest,))
    for k, d in enumerate(data):
        out[k, ..., :d.shape[-1]] = d
    return out, torch.tensor(lengths), torch.tensor(labels)


def torch_batches(files, threads, batch, gpu):
    import torch
    loader = torch.utils.data.DataLoader(
        _Dataset(files, gpu), batch_size=batch, shuffle=True, num_workers=threads,
        collate_fn=_collate, persistent_workers=threads > 0, pin_memory=gpu,
        prefetch_factor=2 if threads > 0 else None)
    features = Features("cuda") if gpu else None
    while True:
        for data, lengths, labels in loader:
            if gpu:
                data = features(data.cuda(non_blocking=True), lengths)
            yield data, labels


# -- stoker and DALI --------------------------------------------------------------------------


def pipeline_batches(lib, root, threads, batch, gpu):
    sr = _config()
    if lib == "dali":
        import nvidia.dali as mod
        from nvidia.dali.plugin.pytorch import DALIGenericIterator as Iterator
        ops_on_gpu = True  # DALI has GPU backends for preemphasis_filter .. pad
    else:
        import stoker as mod
        from stoker.plugins.torch import GenericIterator as Iterator
        ops_on_gpu = sr.AUDIO_OPS_ON_GPU
    pipe = mod.pipeline_def(sr.speech_pipeline)(
        mod.fn, mod.types, root, shuffle=True, gpu=gpu, audio_ops_on_gpu=ops_on_gpu,
        batch_size=batch, num_threads=threads, device_id=0 if gpu else None, seed=7,
        prefetch_queue_depth=2)
    it = Iterator(pipe, ["features", "label", "frames"], reader_name="reader", auto_reset=True)
    while True:
        for out in it:
            yield out[0]["features"], out[0]["label"]


def measure(spec):
    """One loader's run: warm-up, then the window; utterances/s and CPU cores busy."""
    import torch
    from harness import _proc_tree_cpu_and_rss
    gpu = spec["device"] == "gpu"
    files = wav_files(spec["data"])
    if spec["loader"] == "torch":
        batches = torch_batches(files, spec["threads"], spec["batch"], gpu)
    else:
        batches = pipeline_batches(spec["loader"], spec["data"], spec["threads"], spec["batch"],
                                   gpu)

    def step():
        x, labels = next(batches)
        if gpu:
            torch.cuda.current_stream().synchronize()
        return len(labels)

    t0, n = time.perf_counter(), 0
    while n < 3 or time.perf_counter() - t0 < spec["warmup_s"]:
        step()
        n += 1
    cpu0, _ = _proc_tree_cpu_and_rss(os.getpid())
    t0, count = time.perf_counter(), 0
    while time.perf_counter() - t0 < spec["window_s"]:
        count += step()
    wall = time.perf_counter() - t0
    cpu1, rss = _proc_tree_cpu_and_rss(os.getpid())
    return {"utterances_per_s": count / wall, "cores_busy": (cpu1 - cpu0) / wall,
            "rss_mb": rss / 1e6}


def check(root, count=16):
    """Max |baseline - stoker| over the first `count` files' features (stoker without dither,
    files in order), for the per-utterance (CPU) and the batched (GPU mode, here on the CPU)
    computations, over the files both cut at the same samples: where a region ends is decided
    by the float drift of nonsilent_region's running sum after the sound (DALI's, which stoker
    repeats and prepare()'s exact sums do not), so some files keep a few samples more or less,
    and a different last frame changes their normalisation."""
    import numpy as np

    import stoker
    sr = _config()
    files = wav_files(root)[:count]
    pipe = stoker.pipeline_def(sr.speech_pipeline)(stoker.fn, stoker.types, root, shuffle=False,
                                                  dither=0, batch_size=len(files), num_threads=2,
                                                  seed=7)
    pipe.build()
    features, _, frames = pipe.run()
    ours = [np.array(features.at(i))[:, :int(np.array(frames.at(i)))]
            for i in range(len(files))]

    @stoker.pipeline_def(batch_size=len(files), num_threads=2, seed=7)
    def cut():
        encoded, _ = stoker.fn.readers.file(file_root=root, random_shuffle=False)
        audio, _ = stoker.fn.decoders.audio(encoded, sample_rate=sr.SAMPLE_RATE,
                                            dtype=stoker.types.FLOAT, downmix=True)
        return stoker.fn.nonsilent_region(audio, cutoff_db=sr.SILENCE_DB)[1]
    lengths_pipe = cut()
    lengths_pipe.build()
    (kept,) = lengths_pipe.run()
    same = [i for i in range(len(files))
            if prepare(files[i][0], dither=False)[1] == int(np.array(kept.at(i)))]
    single = _Dataset(files, gpu=False, dither=False)
    theirs = {i: single[i][0].numpy() for i in same}
    padded, lengths, _ = _collate([_Dataset(files, gpu=True, dither=False)[i]
                                   for i in range(len(files))])
    batched = Features("cpu")(padded, lengths).numpy()

    def worst(values):
        return max((float(np.abs(values[i][:, :ours[i].shape[1]] - ours[i]).max())
                    for i in same), default=None)
    return {"files": len(files), "same_cut": len(same), "per_utterance_max_abs": worst(theirs),
            "batched_max_abs": worst(batched)}


# -- the driver -------------------------------------------------------------------------------


def make_data(count, seconds, seed=1):
    """Generated utterances under /tmp/stoker-bench-audio, reused when made with the same
    parameters."""
    import speech_data
    root = f"/tmp/stoker-bench-audio/n{count}-s{seconds[0]:g}-{seconds[1]:g}-seed{seed}"
    done = os.path.join(root, "DONE")
    if not os.path.exists(done):
        print(f"writing {count} utterances of {seconds[0]:g}-{seconds[1]:g} s to {root}",
              file=sys.stderr, flush=True)
        speech_data.make_speech_folder(os.path.join(root, "wav"), count, seed=seed,
                                       seconds=seconds)
        open(done, "w").close()
    return os.path.join(root, "wav")


def mean_duration(root):
    """The mean duration (s) of the set's files, from their headers (soundfile: any format
    decoders.audio reads; `wave` where it is missing)."""
    seconds = []
    for path, _ in wav_files(root):
        try:
            import soundfile
            info = soundfile.info(path)
            seconds.append(info.frames / info.samplerate)
        except ImportError:
            with wave.open(path) as w:
                seconds.append(w.getnframes() / w.getframerate())
    return statistics.fmean(seconds), len(seconds)


def run_child(args, extra):
    out = subprocess.run([sys.executable, os.path.abspath(__file__), *args], capture_output=True,
                         text=True, timeout=extra)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode != 0 or not lines:
        err = [ln for ln in out.stderr.strip().splitlines() if "leaked" not in ln]
        return {"error": " / ".join(err[-3:])[:600] or "?"}
    return json.loads(lines[-1])


def environment():
    env = {"date": time.strftime("%Y-%m-%d"), "cpus": os.cpu_count(),
           "python": platform.python_version(), "machine": platform.machine()}
    for name, module in (("torch", "torch"), ("dali", "nvidia.dali"), ("stoker", "stoker"),
                         ("soundfile", "soundfile")):
        try:
            env[name] = __import__(module, fromlist=["_"]).__version__
        except ImportError:
            env[name] = None
    try:
        import torchaudio
        env["torchaudio"] = torchaudio.__version__
    except ImportError:
        env["torchaudio"] = None
    return env


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", help="one sub-folder of WAV files per class (default: generated)")
    ap.add_argument("--count", type=int, default=300, help="generated utterances")
    ap.add_argument("--seconds", default="1,20", help="generated utterances' length range")
    ap.add_argument("--libs", default="stoker,dali,torch")
    ap.add_argument("--device", choices=["cpu", "gpu"], default="cpu")
    ap.add_argument("--threads", type=int, default=os.cpu_count(),
                    help="pipeline threads; the DataLoader's workers")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--warmup", type=float, default=3.0)
    ap.add_argument("--window", type=float, default=10.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # a child: one measurement (JSON spec)
    ap.add_argument("--check", help=argparse.SUPPRESS)  # a child: the features check on DIR
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(json.loads(args.one))), flush=True)
        return 0
    if args.check:
        print(json.dumps(check(args.check)), flush=True)
        return 0
    lo, hi = (float(v) for v in args.seconds.split(","))
    root = os.path.abspath(args.data) if args.data else make_data(args.count, (lo, hi))
    duration, files = mean_duration(root)
    timeout = 120 + 2 * (args.warmup + args.window)
    agreement = run_child(["--check", root], 600)
    print(f"baseline vs stoker features: {agreement}", file=sys.stderr, flush=True)
    libs = args.libs.split(",")
    specs = {lib: {"loader": lib, "device": args.device, "threads": args.threads,
                   "batch": args.batch_size, "data": root, "warmup_s": args.warmup,
                   "window_s": args.window} for lib in libs}
    # Rounds of one run per loader (A B C A B C ...): a change in the machine's load during the
    # benchmark then shows in every loader's range instead of favouring one.
    runs = {lib: [] for lib in libs}
    for k in range(args.repeats):
        for lib in libs:
            runs[lib].append(run_child(["--one", json.dumps(specs[lib])], timeout))
            print(f"round {k + 1}: {lib} {runs[lib][-1]}", file=sys.stderr, flush=True)
    rows = []
    for lib in libs:
        spec, ok = specs[lib], [r for r in runs[lib] if "error" not in r]
        if not ok:
            rows.append({**spec, "error": runs[lib][0]["error"]})
            continue
        rates = [r["utterances_per_s"] for r in ok]
        median = statistics.median(rates)
        rows.append({**spec, "utterances_per_s": median, "min": min(rates), "max": max(rates),
                     "audio_s_per_s": median * duration, "repeats": len(ok),
                     "cores_busy": statistics.median(r["cores_busy"] for r in ok),
                     "rss_mb": statistics.median(r["rss_mb"] for r in ok)})
    env = environment()
    names = {"stoker": "stoker", "dali": "DALI 2.4",
             "torch": "torch DataLoader" + (", torchaudio" if env["torchaudio"] else
                                            " (torch.stft + mel matrix)")}
    print(f"\nSpeech features (Jasper's front end), {files} files from {root}, mean "
          f"{duration:.2f} s; batch {args.batch_size}, {args.threads} threads / workers, "
          f"device {args.device}; {env['date']}, {platform.machine()}, {os.cpu_count()} CPUs; "
          f"warm-up {args.warmup:g} s, window {args.window:g} s, median of {args.repeats}\n")
    print("| loader | utterances/s | min-max | audio s/s | cores busy | vs DALI | vs torch |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    rate = {r["loader"]: r.get("utterances_per_s") for r in rows}
    for r in rows:
        if "error" in r:
            print(f"| {names.get(r['loader'], r['loader'])} | error: {r['error']} | | | | | |")
            continue
        ratio = {k: (f"{r['utterances_per_s'] / rate[k]:.2f}x" if rate.get(k) else "-")
                 for k in ("dali", "torch")}
        print(f"| {names.get(r['loader'], r['loader'])} | {r['utterances_per_s']:,.1f} | "
              f"{r['min']:,.1f}-{r['max']:,.1f} | {r['audio_s_per_s']:,.0f} | "
              f"{r['cores_busy']:.2f} | {ratio['dali']} | {ratio['torch']} |")
    if "error" not in agreement:
        print(f"\nThe baseline's features against stoker's: {agreement['same_cut']} of the "
              f"first {agreement['files']} files cut at the same samples (the others keep up "
              f"to 2048 samples more or less silence), their features within "
              f"{agreement['per_utterance_max_abs']:.2g} per utterance (CPU), "
              f"{agreement['batched_max_abs']:.2g} batched (the GPU mode's computation)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"environment": env, "files": files, "mean_seconds": duration,
                       "agreement": agreement, "rows": rows}, f, indent=1)
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
