"""Trains a small 1-D convolutional network on log-mel features computed by stoker with the speech
front end of NVIDIA's Jasper and MLPerf RNN-T DALI pipelines: decode (resampled to 16 kHz,
mono) -> nonsilent_region -> slice to the sound -> dither -> preemphasis_filter -> spectrogram
(20 ms windows every 10 ms) -> mel_filter_bank (64 filters) -> to_decibels (natural log) ->
normalize (per feature, over time) -> pad (frames to a multiple of 16), handed to torch through
stoker.plugins.torch with each utterance's frame count.

    python examples/speech_recognition.py --data /data/speech/train --val /data/speech/val
    python examples/speech_recognition.py --steps 120       # generated speech-like utterances

--data: one sub-folder of audio files (WAV, FLAC, Ogg) per class; without it, utterances of five
classes (examples/speech_data.py: tones, rising and falling glides, vowels, fricatives) are
written as 16 kHz WAV files. Training stops after --steps batches (0: --epochs epochs); the
model is then scored on --val (generated: held-out utterances of another seed).

speech_pipeline() takes the fn and types modules: with `from nvidia.dali import fn, types` it
is DALI's pipeline, unchanged (python/tests/test_example_speech.py compares the two).
"""

import argparse
import math
import os
import sys
import tempfile
import time

import torch

import stoker
from stoker import fn, types
from stoker.plugins.torch import GenericIterator, LastBatchPolicy, shard_from_env

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import speech_data  # noqa: E402  (the generated utterances; beside this file)

# Jasper's feature configuration (DeepLearningExamples, jasper10x5dr_speedp-online.yaml).
SAMPLE_RATE = 16000
NFEATURES = 64
NFFT = 512
WINDOW_SECONDS, STRIDE_SECONDS = 0.02, 0.01
PREEMPHASIS = 0.97
SILENCE_DB = -60
DITHER = 1e-5
PAD_ALIGN = 16

# Whether a GPU run computes the features on the GPU (random.normal to pad): the audio moves
# there after the silence is cut, as in Jasper's GPU pipeline. False: computed on the CPU, then
# copied to the GPU at the end.
AUDIO_OPS_ON_GPU = True


def speech_pipeline(fn, types, file_root, *, shuffle=True, dither=DITHER, gpu=False,
                    audio_ops_on_gpu=AUDIO_OPS_ON_GPU, shard_id=0, num_shards=1):
    """The definition (fn and types: stoker's or DALI's modules). Outputs: the features, 64 x
    frames float32 (padded with zeros to the batch's longest, a multiple of 16), the label
    (int32, from the class folder) and the frames before padding (int32); on the GPU with
    `gpu` (computed there with `audio_ops_on_gpu`: DALI can, bench/audio.py asks it to)."""
    encoded, labels = fn.readers.file(file_root=file_root, random_shuffle=shuffle,
                                      shard_id=shard_id, num_shards=num_shards,
                                      pad_last_batch=True, name="reader")
    audio, _ = fn.decoders.audio(encoded, sample_rate=SAMPLE_RATE, dtype=types.FLOAT,
                                 downmix=True)
    # Leading and trailing silence carries no class and would skew the per-utterance
    # normalisation: keep the region within 60 dB of the loudest 2048-sample window.
    begin, length = fn.nonsilent_region(audio, cutoff_db=SILENCE_DB)
    audio = fn.slice(audio, begin, length, axes=[0])
    step = int(STRIDE_SECONDS * SAMPLE_RATE)
    # The frames before padding, for the model to pool over the real ones only: the
    # spectrogram's centred windows make length // step + 1. (Jasper takes the features' shape;
    # this count is on the CPU wherever the features are computed, and a GPU value's shape
    # cannot come back to the CPU inside a stoker pipeline.)
    frames = length // step + 1
    if gpu and audio_ops_on_gpu:
        audio = audio.gpu()
    if dither:
        # A trace of noise keeps digital silence (exact zeros) away from log(0) and makes the
        # model indifferent to the quietest bits (as Jasper's training does).
        audio = audio + fn.random.normal(audio) * dither
    audio = fn.preemphasis_filter(audio, preemph_coeff=PREEMPHASIS)
    spec = fn.spectrogram(audio, nfft=NFFT, window_length=int(WINDOW_SECONDS * SAMPLE_RATE),
                          window_step=step)
    mel = fn.mel_filter_bank(spec, sample_rate=SAMPLE_RATE, nfilter=NFEATURES, normalize=True)
    # multiplier ln(10) turns 10^x into x ln(10): the natural log; the cut-off is 1e-20.
    features = fn.to_decibels(mel, multiplier=math.log(10), reference=1.0,
                              cutoff_db=math.log(1e-20))
    features = fn.normalize(features, axes=[1])
    features = fn.pad(features, axes=[1], fill_value=0, align=PAD_ALIGN)
    if gpu:
        # features.gpu() is the features themselves once they are computed there.
        return features.gpu(), labels.gpu(), frames.gpu()
    return features, labels, frames


class SpeechNet(torch.nn.Module):
    """Three 1-D convolutions over time (the mel features as channels; the last two halve the
    frames), then the mean and the maximum over each utterance's real frames, and a linear
    layer: a few seconds of CPU training tell the generated classes apart."""

    def __init__(self, features, classes, width=64):
        super().__init__()

        def block(cin, stride):
            return [torch.nn.Conv1d(cin, width, 5, stride=stride, padding=2),
                    torch.nn.BatchNorm1d(width), torch.nn.ReLU()]
        self.body = torch.nn.Sequential(*block(features, 1), *block(width, 2), *block(width, 2))
        self.head = torch.nn.Linear(2 * width, classes)

    def forward(self, x, frames):
        h = self.body(x)  # N x width x ceil(T / 4)
        frames = torch.clamp((frames + 3) // 4, min=1)  # each stride-2 layer: ceil(T / 2)
        valid = torch.arange(h.shape[-1], device=h.device)[None, :] < frames[:, None]
        valid = valid[:, None, :]
        mean = (h * valid).sum(-1) / frames[:, None]
        peak = h.masked_fill(~valid, float("-inf")).amax(-1)
        return self.head(torch.cat([mean, peak], 1))


def batches(loader, device):
    """(features, labels, frames) of each step on `device`."""
    for batch in loader:
        b = batch[0]
        yield (b["features"].to(device), b["label"].reshape(-1).long().to(device),
               b["frames"].reshape(-1).long().to(device))


def evaluate(model, pipe, device):
    """Accuracy over one pass of `pipe`'s reader (PARTIAL: every utterance once)."""
    loader = GenericIterator(pipe, ["features", "label", "frames"], reader_name="reader",
                             last_batch_policy=LastBatchPolicy.PARTIAL)
    model.eval()
    right = total = 0
    with torch.no_grad():
        for x, y, frames in batches(loader, device):
            right += int((model(x, frames).argmax(1) == y).sum())
            total += len(y)
    model.train()
    return right / max(total, 1), total


def classes_of(root):
    return sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", help="a folder with one sub-folder of audio files per class "
                                   "(default: generated utterances)")
    ap.add_argument("--val", help="held-out utterances, the same sub-folders (default with "
                                  "--data: --data itself)")
    ap.add_argument("--count", type=int, default=250, help="generated training utterances")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--steps", type=int, default=120, help="stop after this many (0: --epochs)")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--device", choices=["auto", "cpu", "gpu"], default="auto",
                    help="where the model trains and the batches go (auto: the GPU if torch "
                         "sees one)")
    args = ap.parse_args()
    root, val_root = args.data, args.val or args.data
    if root is None:
        work = tempfile.mkdtemp()
        root, val_root = os.path.join(work, "train"), os.path.join(work, "val")
        speech_data.make_speech_folder(root, args.count, seed=3)
        speech_data.make_speech_folder(val_root, max(len(speech_data.CLASSES), args.count // 2),
                                       seed=4)
    classes = classes_of(root)
    if classes_of(val_root) != classes:
        sys.exit(f"--val has the classes {classes_of(val_root)}, --data {classes}")
    shard_id, num_shards, device_id = shard_from_env()
    if args.device == "gpu" and device_id is None:
        sys.exit("--device gpu: torch sees no GPU")
    gpu = args.device != "cpu" and device_id is not None
    device = torch.device(f"cuda:{device_id}" if gpu else "cpu")
    print(f"classes {classes}; features on the {'GPU' if gpu and AUDIO_OPS_ON_GPU else 'CPU'}, "
          f"training on {device}", flush=True)
    torch.set_num_threads(max(1, args.threads))
    common = dict(batch_size=args.batch_size, num_threads=args.threads,
                  device_id=device_id if gpu else None)
    pipe = stoker.pipeline_def(speech_pipeline)(
        fn, types, root, shuffle=True, gpu=gpu, shard_id=shard_id, num_shards=num_shards,
        seed=42 + shard_id, **common)
    loader = GenericIterator(pipe, ["features", "label", "frames"], reader_name="reader",
                             last_batch_policy=LastBatchPolicy.FILL)
    torch.manual_seed(shard_id)
    model = SpeechNet(NFEATURES, len(classes)).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    losses, step, t0 = [], 0, time.perf_counter()
    for epoch in range(args.epochs if not args.steps else 10**9):
        for x, y, frames in batches(loader, device):
            loss = torch.nn.functional.cross_entropy(model(x, frames), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.item())
            step += 1
            print(f"epoch {epoch} step {step}: loss {losses[-1]:.4f} (features "
                  f"{tuple(x.shape)})", flush=True)
            if args.steps and step >= args.steps:
                break
        if args.steps and step >= args.steps:
            break
        loader.reset()
    seconds = time.perf_counter() - t0
    k = max(1, len(losses) // 4)
    print(f"{step} steps in {seconds:.1f} s ({step * args.batch_size / seconds:.1f} "
          f"utterances/s); loss {sum(losses[:k]) / k:.4f} (first {k} steps) -> "
          f"{sum(losses[-k:]) / k:.4f} (last {k})")
    val_pipe = stoker.pipeline_def(speech_pipeline)(fn, types, val_root, shuffle=False, gpu=gpu,
                                                   seed=7, **common)
    accuracy, total = evaluate(model, val_pipe, device)
    which = "training" if val_root == root else "held-out"
    print(f"accuracy {accuracy:.3f} on {total} {which} utterances "
          f"(chance {1 / len(classes):.3f})")


if __name__ == "__main__":
    main()
