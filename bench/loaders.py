"""The loaders bench/harness.py compares, each an endless iterator of (images, labels) torch
batches on the GPU when there is one (else on the CPU), for one of the pipelines:

- rn50-train: decode -> random resized crop 224 -> horizontal flip -> normalize -> fp16 NCHW
- rn50-val: decode -> resize shorter side 256 -> centre crop 224 -> normalize -> fp16 NCHW
- heavy-N: decode -> N x (horizontal flip, vertical flip, rotation by up to 10 degrees) ->
  then rn50-train's crop, flip and normalize
- decode-only: decode to uint8 HWC (ragged; the batch is a list)

Loaders: synthetic (the same tensor every step), stoker-gpu (mixed decoder, auto split),
stoker-gpu-hw<L> (hw_decoder_load fixed at L), stoker-gpu-auto / stoker-cpu-auto
(num_threads="auto", the threads column its cpu_budget), stoker-cpu (everything on CPU
threads, pinned outputs copied with non_blocking), dataloader-pil (torch DataLoader, PIL + torchvision v2),
dataloader-pil-u8 (the same, but workers hand over uint8 and the normalize runs on the GPU:
4x fewer bytes through shared memory and pinning, the usual fast-DataLoader recipe), dataloader-tvio (DataLoader, torchvision.io.decode_jpeg on the CPU + v2 on tensors), naive-gpu
(torchvision.io.decode_jpeg(device="cuda") on each batch, then per-image crop + resize kernels
and one normalize), dali-gpu (NVIDIA DALI running the same definition at its defaults:
hw_decoder_load 0.65), dali-gpu-hw<L> (hw_decoder_load L; 1.0 is its best on the H100),
dali-cpu (DALI on CPU threads); dropin-gpu, dropin-gpu-hw<L>, dropin-cpu: stoker running that
same DALI definition with only the import changed (stoker's defaults where the definition says
nothing, batches through stoker.plugin.pytorch.DALIGenericIterator), as a DALI user gets it.

STOKER_BENCH_PIN=N (stoker and synthetic loaders): the consumer's thread (the training loop)
on the process's first N cores, stoker's threads on the others (Pipeline(cpu_affinity=)).
"""

import os
import random

import numpy as np
import torch

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]
PIPELINES = ("rn50-train", "rn50-val", "decode-only", "heavy-1", "heavy-4", "heavy-8", "heavy-12")


def heavy_rounds(pipeline):
    return int(pipeline.split("-")[1]) if pipeline.startswith("heavy-") else 0


def list_files(root):
    """(paths, labels) of a class-folder tree in readers.file's order."""
    from stoker.tools.convert import folder_samples
    samples = folder_samples(root)
    return [p for p, _ in samples], [label for _, label in samples]


def device():
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")


# -- stoker ---------------------------------------------------------------------------------

LAST_PIPE = None  # the pipeline the last stoker loader built


_CORES = None  # the process's cores before the first pinning narrowed this thread's


def pin_consumer():
    """STOKER_BENCH_PIN=N (N >= 1): this thread (the consumer's) on the first N of the process's
    cores; returns the others, for stoker's cpu_affinity. Else None (no pinning).

    Idempotent: the synthetic batch and stoker's loader both call it from the same thread, and
    the second call must not read the already-narrowed mask (that gave stoker no cores of its
    own, so its threads inherited the consumer's one core: fed-pin at 56% of fed on 2026-11-23).
    Threads the consumer starts later inherit its N cores: torch's autograd thread (which
    launches the backward pass) among them, hence N = 2 as an option."""
    global _CORES
    n = int(os.environ.get("STOKER_BENCH_PIN") or 0)
    if n < 1:
        return None
    if _CORES is None:
        _CORES = sorted(os.sched_getaffinity(0))
    if len(_CORES) <= n:
        return None
    os.sched_setaffinity(0, set(_CORES[:n]))  # the calling thread only
    return _CORES[n:]


def stoker_loader(spec):
    import stoker
    from stoker import fn, types
    gpu = spec["loader"].startswith("stoker-gpu") and torch.cuda.is_available()
    hw = spec["loader"][len("stoker-gpu-hw"):] if spec["loader"].startswith("stoker-gpu-hw") \
        else "auto"
    # stoker-gpu-auto / stoker-cpu-auto: num_threads="auto" with the threads as the budget.
    auto = spec["loader"].endswith("-auto")
    name, size, batch = spec["pipeline"], spec["size"], spec["batch"]
    dev = "gpu" if gpu else "cpu"
    threads = {"num_threads": "auto", "cpu_budget": spec["threads"]} if auto \
        else {"num_threads": spec["threads"]}
    pipe = stoker.Pipeline(batch_size=batch, **threads, seed=0,
                           device_id=0 if gpu else None, pinned_outputs=torch.cuda.is_available(),
                           prefetch_queue_depth={"cpu_size": 3, "gpu_size": 2},
                           cpu_affinity=pin_consumer())
    decoder = {"device": "mixed", "hw_decoder_load": float(hw) if hw != "auto" else "auto"} \
        if gpu else {"device": "cpu"}
    decoder.update(spec.get("decoder_args", {}))  # e.g. {"cuda_decoder": "off"}
    with pipe:
        jpegs, labels = fn.readers.file(file_root=spec["data"], random_shuffle=True,
                                        name="reader")
        # On the GPU the labels go over with stoker's copy (as DALI users write labels.gpu()):
        # a pageable .to("cuda") of them in the training loop cost 1.3 ms per step on the H100.
        if gpu:
            labels = labels.gpu()
        coin = fn.random.coin_flip()
        if name == "decode-only":
            pipe.set_outputs(fn.decoders.image(jpegs, **decoder), labels)
        elif name == "rn50-val":
            images = fn.decoders.image(jpegs, **decoder)
            images = fn.resize(images, device=dev, resize_shorter=size * 8 // 7)
            pipe.set_outputs(fn.crop_mirror_normalize(
                images, device=dev, crop=(size, size), mean=MEAN, std=STD,
                dtype=types.FLOAT16, output_layout="CHW"), labels)
        else:
            rounds = heavy_rounds(name)
            if rounds:
                images = fn.decoders.image(jpegs, **decoder)
                for _ in range(rounds):
                    images = fn.flip(images, device=dev, horizontal=fn.random.coin_flip(),
                                     vertical=fn.random.coin_flip())
                    images = fn.rotate(images, device=dev, keep_size=True,
                                       angle=fn.random.uniform(range=(-10.0, 10.0)))
                images = fn.random_resized_crop(images, device=dev, size=(size, size))
            else:
                images = fn.decoders.image_random_crop(jpegs, **decoder)
                images = fn.resize(images, device=dev, size=(size, size))
            pipe.set_outputs(fn.crop_mirror_normalize(
                images, device=dev, mirror=coin, mean=MEAN, std=STD, dtype=types.FLOAT16,
                output_layout="CHW"), labels)
    pipe.build()
    global LAST_PIPE
    LAST_PIPE = pipe  # for the harness's record of operator times
    target = device()
    while True:
        images, labels = pipe.run()
        # CPU labels: copied from stoker's pinned memory as they are (int32), widened there.
        labels = torch.from_dlpack(labels).to(target, non_blocking=True).reshape(-1).long()
        if name == "decode-only":
            yield [torch.from_dlpack(images[i]) for i in range(len(images))], labels
            continue
        t = torch.from_dlpack(images)
        if t.device != target:
            t = t.to(target, non_blocking=True)
        yield t, labels


# -- torch DataLoader -----------------------------------------------------------------------

class FolderDataset(torch.utils.data.Dataset):
    """A class-folder tree decoded with PIL ("pil") or torchvision.io.decode_jpeg ("tvio")."""

    def __init__(self, root, decoder, transform):
        self.paths, self.labels = list_files(root)
        self.decoder, self.transform = decoder, transform

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        if self.decoder == "pil":
            from PIL import Image
            with Image.open(self.paths[i]) as im:
                img = im.convert("RGB")
        else:
            import torchvision.io as tio
            img = tio.decode_jpeg(tio.read_file(self.paths[i]), mode=tio.ImageReadMode.RGB)
        return self.transform(img), self.labels[i]


def v2_transform(pipeline, size, decoder, normalize_in_worker=True):
    from torchvision.transforms import v2
    to_tensor = [v2.PILToTensor()] if decoder == "pil" else []
    normalize = [v2.ToDtype(torch.float32), v2.Normalize(MEAN, STD)] if normalize_in_worker else []
    if pipeline == "decode-only":
        return v2.Compose(to_tensor) if to_tensor else v2.Identity()
    if pipeline == "rn50-val":
        return v2.Compose([v2.Resize(size * 8 // 7, antialias=True), v2.CenterCrop(size)] +
                          to_tensor + normalize)
    heavy = []
    for _ in range(heavy_rounds(pipeline)):
        heavy += [v2.RandomHorizontalFlip(), v2.RandomVerticalFlip(), v2.RandomRotation(10)]
    return v2.Compose(heavy + [v2.RandomResizedCrop(size, antialias=True),
                               v2.RandomHorizontalFlip()] + to_tensor + normalize)


def _list_collate(items):
    return [x for x, _ in items], torch.tensor([y for _, y in items])


def dataloader_loader(spec):
    decoder = spec["loader"].split("-")[1]
    u8 = spec["loader"].endswith("-u8")  # normalize on the GPU, after the transfer
    ds = FolderDataset(spec["data"], decoder, v2_transform(spec["pipeline"], spec["size"],
                                                           decoder, normalize_in_worker=not u8))
    workers = spec["threads"]
    dl = torch.utils.data.DataLoader(
        ds, batch_size=spec["batch"], shuffle=True, drop_last=True, num_workers=workers,
        pin_memory=torch.cuda.is_available(), persistent_workers=workers > 0,
        prefetch_factor=2 if workers > 0 else None,
        multiprocessing_context="spawn" if workers > 0 else None,
        collate_fn=_list_collate if spec["pipeline"] == "decode-only" else None)
    target = device()
    mean, std = (torch.tensor(v, device=target) for v in (MEAN, STD))
    while True:
        for images, labels in dl:
            if spec["pipeline"] == "decode-only":
                yield images, labels
            elif u8:
                x = images.to(target, non_blocking=True).float()
                x = (x - mean.view(1, 3, 1, 1)) / std.view(1, 3, 1, 1)
                yield x.half(), labels.to(target, non_blocking=True)
            else:
                yield (images.to(target, non_blocking=True).half(),
                       labels.to(target, non_blocking=True))


# -- naive GPU ------------------------------------------------------------------------------

def naive_gpu_loader(spec):
    """torchvision's batched GPU decode, then a crop + resize per image and one normalize."""
    import torch.nn.functional as F
    import torchvision.io as tio
    if not torch.cuda.is_available():
        raise RuntimeError("naive-gpu needs a GPU")
    paths, labels = list_files(spec["data"])
    order = list(range(len(paths)))
    rng = random.Random(0)
    size, batch = spec["size"], spec["batch"]
    mean = torch.tensor(MEAN, device="cuda").view(1, 3, 1, 1)
    std = torch.tensor(STD, device="cuda").view(1, 3, 1, 1)
    k = len(order)
    while True:
        if k + batch > len(order):
            rng.shuffle(order)
            k = 0
        idx = order[k:k + batch]
        k += batch
        data = [tio.read_file(paths[i]) for i in idx]
        images = tio.decode_jpeg(data, device="cuda", mode=tio.ImageReadMode.RGB)
        if spec["pipeline"] == "decode-only":
            yield images, torch.tensor([labels[i] for i in idx], device="cuda")
            continue
        out = []
        for img in images:
            _, h, w = img.shape
            if spec["pipeline"] == "rn50-val":
                s = size * 8 / 7 / min(h, w)
                img = F.interpolate(img[None].float(), size=(round(h * s), round(w * s)),
                                    mode="bilinear", antialias=True)[0]
                t, left = (img.shape[1] - size) // 2, (img.shape[2] - size) // 2
                out.append(img[:, t:t + size, left:left + size])
                continue
            area = h * w * rng.uniform(0.08, 1.0)
            ratio = np.exp(rng.uniform(np.log(3 / 4), np.log(4 / 3)))
            cw = min(w, max(1, round((area * ratio) ** 0.5)))
            ch = min(h, max(1, round((area / ratio) ** 0.5)))
            top, left = rng.randint(0, h - ch), rng.randint(0, w - cw)
            crop = img[None, :, top:top + ch, left:left + cw].float()
            crop = F.interpolate(crop, size=(size, size), mode="bilinear", antialias=True)[0]
            out.append(crop.flip(-1) if rng.random() < 0.5 else crop)
        x = ((torch.stack(out) - mean) / std).half()
        yield x, torch.tensor([labels[i] for i in idx], device="cuda")


def synthetic_loader(spec):
    pin_consumer()
    dev = device()
    x = torch.randn(spec["batch"], 3, spec["size"], spec["size"], device=dev).half()
    y = torch.randint(0, 1000, (spec["batch"],), device=dev)
    while True:
        yield x, y


# -- NVIDIA DALI (the peer) -----------------------------------------------------------------

def dali_loader(spec):
    """The same definitions on DALI (only the import differs), batches handed over by its
    PyTorch iterator as DALI users do. Settings other than the threads and hw_decoder_load are
    DALI's defaults (prefetch_queue_depth 2). A dropin-* loader runs this very code with stoker
    imported in DALI's place."""
    import importlib
    kind, _, rest = spec["loader"].partition("-")  # "dali" or "dropin", then gpu-hw<L> / cpu
    module = "nvidia.dali" if kind == "dali" else "stoker"
    dali = importlib.import_module(module)
    fn, pipeline_def, types = dali.fn, dali.pipeline_def, dali.types
    DALIGenericIterator = importlib.import_module(module + ".plugin.pytorch").DALIGenericIterator
    name, size = spec["pipeline"], spec["size"]
    gpu = rest.startswith("gpu") and torch.cuda.is_available()
    assert name in ("rn50-train", "rn50-val"), f"DALI runs rn50-train and rn50-val here, not {name}"
    dev = "gpu" if gpu else "cpu"
    decoder = {"device": "mixed" if gpu else "cpu"}
    if rest.startswith("gpu-hw"):
        decoder["hw_decoder_load"] = float(rest[len("gpu-hw"):])

    @pipeline_def(batch_size=spec["batch"], num_threads=spec["threads"],
                  device_id=0 if gpu else None, seed=0)
    def pipe():
        jpegs, labels = fn.readers.file(file_root=spec["data"], random_shuffle=True,
                                        name="reader")
        if gpu:
            labels = labels.gpu()
        if name == "rn50-val":
            images = fn.decoders.image(jpegs, **decoder)
            images = fn.resize(images, device=dev, resize_shorter=size * 8 // 7)
            mirror = 0
        else:
            images = fn.decoders.image_random_crop(jpegs, **decoder)
            images = fn.resize(images, device=dev, size=(size, size))
            mirror = fn.random.coin_flip()
        images = fn.crop_mirror_normalize(images, device=dev, crop=(size, size), mirror=mirror,
                                          mean=MEAN, std=STD, dtype=types.FLOAT16,
                                          output_layout="CHW")
        return images, labels

    p = pipe()
    p.build()
    it = DALIGenericIterator(p, ["images", "labels"], reader_name="reader", auto_reset=True)
    target = device()
    while True:
        for batch in it:
            images, labels = batch[0]["images"], batch[0]["labels"]
            yield images.to(target, non_blocking=True), \
                labels.to(target, non_blocking=True).reshape(-1).long()


def make_loader(spec):
    name = spec["loader"]
    if name.startswith(("dali-", "dropin-")):
        return dali_loader(spec)
    if name == "synthetic":
        return synthetic_loader(spec)
    if name.startswith("stoker-"):
        return stoker_loader(spec)
    if name in ("dataloader-pil", "dataloader-pil-u8", "dataloader-tvio"):
        return dataloader_loader(spec)
    if name == "naive-gpu":
        return naive_gpu_loader(spec)
    raise ValueError(f"unknown loader '{name}'")
