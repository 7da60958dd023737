"""The fault-injection cases of one reader, run in a process of their own by
test_fault_injection.py (a signal or a hang there names the case that was running):

    python3 python/tests/fault_cases.py READER [VIDEO_FILE]

For each fault x {mmap, pread} x {on_error raise, skip} x {after build, after the first run}, a
fresh dataset is written, a pipeline of the reader (with a decoder where the data are images) is
built, the file the reader's third sample comes from is damaged, and one epoch and a bit is run.
Each case prints one JSON line: the status ("ran" or "error"), the error's text, the samples'
source_info in delivery order, the samples counted as skipped. Faults:
  deleted     the file removed (an open descriptor still reads it)
  truncated   cut to a third of its size
  replaced    another file of other bytes renamed over it
  unreadable  made unreadable (chmod 0; as root, which reads through that: a folder in its place)
  fifo        a FIFO in its place: a slow source nobody writes to (open() must not wait)
"""

import io
import json
import os
import shutil
import sys
import tempfile
import warnings

import numpy as np

import stoker
from stoker import fn, tfrecord
from stoker.tools.convert import write_shard

FAULTS = ("deleted", "truncated", "replaced", "unreadable", "fifo")
BATCH = 4
SAMPLES = 12


def jpegs(n, shape=(40, 56)):
    """n JPEGs of noise (noise: they do not compress, so a file spans many pages)."""
    from PIL import Image
    rng = np.random.default_rng(7)
    out = []
    for i in range(n):
        b = io.BytesIO()
        Image.fromarray(rng.integers(0, 255, (*shape, 3), np.uint8)).save(b, "JPEG", quality=90)
        out.append(b.getvalue())
    return out


def _first(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


# Each setup writes the dataset under `root` and returns (define, target): define(io) makes the
# pipeline's outputs (the first one carries source_info), target is the file to damage.
def _file(root, video):
    folder = os.path.join(root, "images", "0")
    os.makedirs(folder)
    for i, data in enumerate(jpegs(SAMPLES)):
        with open(os.path.join(folder, f"{i:03d}.jpg"), "wb") as f:
            f.write(data)
    return (lambda **io: [fn.decoders.image(fn.readers.file(
        file_root=os.path.join(root, "images"), **io)[0])],
        os.path.join(folder, "002.jpg"))


def _container(fmt):
    def setup(root, video):
        path = os.path.join(root, f"data.{fmt}")
        write_shard(fmt, path, [(d, i, "jpg") for i, d in enumerate(jpegs(SAMPLES))])
        if fmt == "tfrecord":
            define = lambda **io: [fn.decoders.image(fn.readers.tfrecord(  # noqa: E731
                path=path, index_path=path + ".idx", features={
                    "image/encoded": tfrecord.FixedLenFeature((), tfrecord.string, "")},
                **io)["image/encoded"])]
        elif fmt == "recordio":
            define = lambda **io: [fn.decoders.image(fn.readers.mxnet(  # noqa: E731
                path=path, index_path=path + ".idx", **io)[0])]
        else:
            define = lambda **io: [fn.decoders.image(_first(fn.readers.webdataset(  # noqa: E731
                paths=path, ext=["jpg"], **io))[0])]
        return define, path
    return setup


def _numpy(root, video):
    folder = os.path.join(root, "npy")
    os.makedirs(folder)
    rng = np.random.default_rng(3)
    for i in range(SAMPLES):
        np.save(os.path.join(folder, f"{i:03d}.npy"), rng.standard_normal((8, 6)).astype("f4"))
    return (lambda **io: [fn.readers.numpy(file_root=folder, **io)],
            os.path.join(folder, "002.npy"))


def _fits(root, video):
    from astropy.io import fits
    folder = os.path.join(root, "fits")
    os.makedirs(folder)
    rng = np.random.default_rng(3)
    for i in range(SAMPLES):
        hdu = fits.ImageHDU(rng.standard_normal((64, 48)).astype("f4"))
        fits.HDUList([fits.PrimaryHDU(), hdu]).writeto(os.path.join(folder, f"{i:03d}.fits"))
    return (lambda **io: [fn.experimental.readers.fits(file_root=folder, **io)],
            os.path.join(folder, "002.fits"))


def _varint(v):
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        out += bytes([b | (0x80 if v else 0)])
        if not v:
            return out


def _lmdb(kind):
    def setup(root, video):
        import lmdb
        path = os.path.join(root, "db")
        env = lmdb.open(path, map_size=1 << 22)
        with env.begin(write=True) as txn:
            for i, data in enumerate(jpegs(SAMPLES)):
                if kind == "caffe":  # Datum: data (4), label (5), encoded (7)
                    value = (_varint(4 << 3 | 2) + _varint(len(data)) + data + _varint(5 << 3) +
                             _varint(i) + _varint(7 << 3) + _varint(1))
                else:  # TensorProtos: one TensorProto of the encoded bytes (data_type 4: string)
                    tensor = (_varint(2 << 3) + _varint(4) + _varint(6 << 3 | 2) +
                              _varint(len(data)) + data)
                    value = _varint(1 << 3 | 2) + _varint(len(tensor)) + tensor
                txn.put(f"{i:08d}".encode(), value)
        env.close()
        reader = getattr(fn.readers, kind)
        extra = {} if kind == "caffe" else {"label_type": 4}  # caffe2: no label
        return (lambda **io: [fn.decoders.image(_first(reader(path=path, **extra, **io))[0])],
                os.path.join(path, "data.mdb"))
    return setup


def _coco(root, video):
    folder = os.path.join(root, "coco")
    os.makedirs(folder)
    images, annotations = [], []
    for i, data in enumerate(jpegs(SAMPLES)):
        with open(os.path.join(folder, f"{i:03d}.jpg"), "wb") as f:
            f.write(data)
        images.append({"id": i + 1, "file_name": f"{i:03d}.jpg", "width": 56, "height": 40})
        annotations.append({"id": i + 1, "image_id": i + 1, "category_id": 1, "iscrowd": 0,
                            "bbox": [2, 3, 10, 12], "area": 120})
    ann = os.path.join(root, "instances.json")
    with open(ann, "w") as f:
        json.dump({"images": images, "annotations": annotations,
                   "categories": [{"id": 1, "name": "thing"}]}, f)
    return (lambda **io: [fn.decoders.image(fn.readers.coco(
        file_root=folder, annotations_file=ann, **io)[0])],
        os.path.join(folder, "002.jpg"))


def _video(root, video):
    paths = []
    for i in range(3):
        paths.append(os.path.join(root, f"v{i}.mp4"))
        shutil.copy(video, paths[-1])
    return (lambda **io: [fn.readers.video(filenames=paths, sequence_length=4, stride=2,
                                           device="cpu", **io)],
            paths[1])


SETUPS = {"file": _file, "tfrecord": _container("tfrecord"), "mxnet": _container("recordio"),
          "webdataset": _container("webdataset"), "numpy": _numpy, "caffe": _lmdb("caffe"),
          "caffe2": _lmdb("caffe2"), "coco": _coco, "video": _video, "fits": _fits}


def inject(fault, path):
    if fault == "deleted":
        os.remove(path)
    elif fault == "truncated":
        os.truncate(path, os.path.getsize(path) // 3)
    elif fault == "replaced":
        other = path + ".new"
        with open(other, "wb") as f:
            f.write(np.random.default_rng(9).integers(0, 255, os.path.getsize(path),
                                                      np.uint8).tobytes())
        os.replace(other, path)
    elif fault == "unreadable":
        if os.geteuid() == 0:
            os.remove(path)
            os.mkdir(path)
        else:
            os.chmod(path, 0)
    elif fault == "fifo":
        os.remove(path)
        os.mkfifo(path)


def run_case(reader, video, fault, mmap, on_error, when):
    root = tempfile.mkdtemp(prefix="stoker_fault_")
    case = {"reader": reader, "fault": fault, "mmap": mmap, "on_error": on_error, "when": when}
    print("START", json.dumps(case), flush=True)
    define, target = SETUPS[reader](root, video)
    case["target"] = target
    pipe = stoker.Pipeline(batch_size=BATCH, num_threads=2, seed=1, on_error=on_error,
                           prefetch_queue_depth=2)
    sources = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with pipe:
                pipe.set_outputs(*define(dont_use_mmap=not mmap))
            pipe.build()
            if when == "after_first_run":
                out = pipe.run()
                sources += [out[0].source_info(i) for i in range(len(out[0]))]
            inject(fault, target)
            for _ in range(SAMPLES // BATCH + 1):
                out = pipe.run()
                sources += [out[0].source_info(i) for i in range(len(out[0]))]
            case.update(status="ran")
        except Exception as e:  # noqa: BLE001 -- the parent judges the error's text
            case.update(status="error", error=f"{type(e).__name__}: {e}")
    # The samples skipped (each warning names its source).
    skipped = [str(w.message) for w in caught if "skipped a bad sample" in str(w.message)]
    case.update(sources=sources, skipped=skipped)
    del pipe
    if os.path.isdir(target):
        os.rmdir(target)
    shutil.rmtree(root, ignore_errors=True)
    print("CASE", json.dumps(case), flush=True)


def main():
    reader = sys.argv[1]
    video = sys.argv[2] if len(sys.argv) > 2 else None
    for fault in FAULTS:
        for mmap in (True, False):
            for on_error in ("raise", "skip"):
                for when in ("after_build", "after_first_run"):
                    run_case(reader, video, fault, mmap, on_error, when)


if __name__ == "__main__":
    main()
