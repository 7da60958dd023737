# DALI's data-loading examples for databases, RecordIO, arrays and frame folders
# (docs/examples/general/data_loading/): "LMDB database" (dataloading_lmdb.ipynb: Caffe and
# Caffe2 LMDBs, decoded and crop-normalised), "MXNet RecordIO" (dataloading_recordio.ipynb: a
# .rec with its .idx, written here in MXNet's format as im2rec writes it), "Numpy Reader"
# (numpy_reader.ipynb: file_root with file_filter, a files list, Fortran-order files, ROI
# reading by absolute and relative coordinates, roi_axes, out-of-bounds policies), the
# frame-folder sequence reader (readers.sequence: streams of frames, step and
# stride), and io.file.read + decoders.numpy (reading and decoding .npy files given as paths).
# Written for nvidia.dali; the data folder and device come from the environment. Centre crops
# replace the examples' random crop positions, so that images compare exactly.
import os
import shutil
import struct
import tempfile
import warnings

import numpy as np
from PIL import Image

from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn
import nvidia.dali.types as types

data_root = os.environ["DROPIN_DATA"]
device_id = int(os.environ["DROPIN_DEVICE_ID"]) if os.environ.get("DROPIN_DEVICE_ID") else None
decoder_device = "mixed" if device_id is not None else "cpu"
workdir = tempfile.mkdtemp(prefix="readers_containers_")
RESULTS, COMPARE = {}, {}


def run(pipe, iterations):
    """Every output's samples over `iterations` runs, as numpy arrays."""
    pipe.build()
    outs = None
    for _ in range(iterations):
        batch = [[np.array(o.as_cpu().at(i)) for i in range(len(o))] for o in pipe.run()]
        outs = batch if outs is None else [a + b for a, b in zip(outs, batch)]
    return outs


def decoded(key, images):
    RESULTS[key] = images
    if decoder_device == "mixed":
        # stoker's mixed decoder gives part of a batch to libjpeg-turbo on CPU threads: where
        # DALI's nvJPEG decodes the same image they differ by up to ~3 levels on average
        # (readers_examples.py's measurements); where both use nvJPEG they are equal.
        COMPARE[key] = ("mean_abs", 4.0)


def decode_and_crop(jpegs):
    images = fn.decoders.image(jpegs, device=decoder_device, output_type=types.RGB)
    return fn.crop_mirror_normalize(images, dtype=types.FLOAT, crop=(224, 224),
                                    mean=[0.0, 0.0, 0.0], std=[1.0, 1.0, 1.0])


# --- LMDB: Caffe's Datum records and Caffe2's TensorProtos ---
@pipeline_def(batch_size=16, num_threads=2, device_id=device_id)
def caffe_pipeline():
    jpegs, labels = fn.readers.caffe(path=os.path.join(data_root, "containers", "caffe-lmdb"))
    return decode_and_crop(jpegs), labels


out = run(caffe_pipeline(), 4)  # 62 records: the fourth batch wraps into the second epoch
decoded("caffe_images", out[0])
RESULTS["caffe_labels"] = out[1]


@pipeline_def(batch_size=4, num_threads=2, device_id=device_id)
def caffe2_pipeline():
    jpegs, labels = fn.readers.caffe2(path=os.path.join(data_root, "containers", "caffe2-lmdb"))
    return decode_and_crop(jpegs), labels


out = run(caffe2_pipeline(), 4)  # 14 records: the fourth batch wraps
decoded("caffe2_images", out[0])
RESULTS["caffe2_labels"] = out[1]

# --- MXNet RecordIO: records framed by magic 0xced7230a and a length, each an IRHeader
# (flag, label, id, id2) and the JPEG; the .idx maps keys to offsets ("key\toffset") ---
jpeg_dir = os.path.join(data_root, "jpeg", "dali", "mixed", "0")
jpeg_names = sorted(n for n in os.listdir(jpeg_dir) if n.endswith(".jpg"))
rec_path, idx_path = os.path.join(workdir, "train.rec"), os.path.join(workdir, "train.idx")
order = np.random.default_rng(0).permutation(len(jpeg_names))  # im2rec shuffles its list
with open(rec_path, "wb") as rec, open(idx_path, "w") as idx:
    for key in order:
        labels = [float(key % 5)] if key % 4 else [float(key), 0.5]  # some with 2 labels
        flag = 0 if len(labels) == 1 else len(labels)
        header = struct.pack("<IfQQ", flag, labels[0] if flag == 0 else 0.0, int(key), 0)
        payload = header + (struct.pack(f"<{flag}f", *labels) if flag else b"")
        payload += open(os.path.join(jpeg_dir, jpeg_names[key]), "rb").read()
        idx.write(f"{key}\t{rec.tell()}\n")
        rec.write(struct.pack("<II", 0xCED7230A, len(payload)) + payload)
        rec.write(b"\0" * (-len(payload) % 4))


@pipeline_def(batch_size=4, num_threads=2, device_id=device_id)
def recordio_pipeline():
    jpegs, labels = fn.readers.mxnet(path=[rec_path], index_path=[idx_path])
    images = fn.decoders.image(jpegs, device=decoder_device, output_type=types.RGB)
    return fn.crop_mirror_normalize(images, dtype=types.FLOAT, crop=(224, 224),
                                    mean=[0.0, 0.0, 0.0], std=[1.0, 1.0, 1.0]), labels


out = run(recordio_pipeline(), 5)  # 15 records: the fourth batch wraps
decoded("recordio_images", out[0])
RESULTS["recordio_labels"] = out[1]

# --- Numpy reader ---
npy_dir = os.path.join(workdir, "npy")
os.makedirs(npy_dir)
rng = np.random.default_rng(42)
for i in range(5):
    a = rng.integers(-1000, 1000, size=(40 + 4 * i, 30 + 2 * i)).astype(np.int16)
    np.save(os.path.join(npy_dir, f"slice_{i}.npy"), np.asfortranarray(a) if i == 3 else a)
with open(os.path.join(npy_dir, "backup.npy.bak"), "wb") as f:  # left out by file_filter
    np.save(f, np.zeros((2, 2), np.float32))
vol_dir = os.path.join(workdir, "npy_3d")
os.makedirs(vol_dir)
for i in range(3):
    np.save(os.path.join(vol_dir, f"vol_{i}.npy"),
            rng.normal(size=(6 + i, 20, 16)).astype(np.float32))
# The example's GPUDirect Storage reader (device="gpu") is left out: stoker's readers.numpy
# has only a cpu backend.
numpy_device = "cpu"


@pipeline_def(batch_size=4, num_threads=2, device_id=device_id)
def numpy_pipeline():
    plain = fn.readers.numpy(device=numpy_device, file_root=npy_dir, file_filter="*.npy")
    roi = fn.readers.numpy(device=numpy_device, file_root=npy_dir, file_filter="slice_*.npy",
                           roi_start=[5, 10], roi_end=[35, 25])
    rel = fn.readers.numpy(device=numpy_device, file_root=npy_dir, file_filter="*.npy",
                           rel_roi_start=[0.1, 0.01], rel_roi_end=[0.4, 0.5])
    one_axis = fn.readers.numpy(device=numpy_device, file_root=npy_dir, file_filter="*.npy",
                                roi_start=[8], roi_shape=[12], roi_axes=[1])
    padded = fn.readers.numpy(device=numpy_device, file_root=npy_dir, file_filter="*.npy",
                              roi_start=[-5, 20], roi_end=[45, 40],
                              out_of_bounds_policy="pad", fill_value=-7)
    trimmed = fn.readers.numpy(device=numpy_device, file_root=npy_dir, file_filter="*.npy",
                               roi_start=[30, 20], roi_shape=[30, 30],
                               out_of_bounds_policy="trim_to_shape")
    volumes = fn.readers.numpy(device=numpy_device, file_root=vol_dir,
                               files=["vol_2.npy", "vol_0.npy", "vol_1.npy"],
                               rel_roi_start=[0.0, 0.25, 0.5], rel_roi_shape=[1.0, 0.5, 0.5])
    return plain, roi, rel, one_axis, padded, trimmed, volumes


names = ["plain", "roi", "rel_roi", "roi_axes", "pad", "trim_to_shape", "files"]
for name, samples in zip(names, run(numpy_pipeline(), 2)):  # 5 files: the 2nd batch wraps
    RESULTS["numpy_" + name] = samples

# --- Sequence reader: one folder of frames per stream ---
frames_root = os.path.join(workdir, "frames")
scene = Image.open(os.path.join(jpeg_dir, "420.jpg")).convert("RGB")
for stream, (count, x0, y0) in {"pan_a": (7, 100, 200), "pan_b": (5, 600, 300)}.items():
    os.makedirs(os.path.join(frames_root, stream))
    for f in range(count):  # a camera panning across the photo
        frame = scene.crop((x0 + 12 * f, y0 + 5 * f, x0 + 12 * f + 96, y0 + 5 * f + 64))
        frame.save(os.path.join(frames_root, stream, f"{f:05d}.jpg"), quality=90)


@pipeline_def(batch_size=3, num_threads=2, device_id=device_id)
def sequence_pipeline():
    return (fn.readers.sequence(file_root=frames_root, sequence_length=3),
            fn.readers.sequence(file_root=frames_root, sequence_length=2, step=2, stride=2))


with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # DALI deprecates the reader
    pipe = sequence_pipeline()
out = run(pipe, 3)  # 8 windows of 3 frames (5 + 3): the third batch wraps
RESULTS["sequences"], RESULTS["sequences_step_stride"] = out

# --- io.file.read and decoders.numpy: .npy files named by paths ---
# (C-order files: DALI 2.4's CPU decoders.numpy transposes Fortran-order ones with CUDA.)
npy_paths = [os.path.join(npy_dir, f"slice_{i}.npy") for i in (4, 0, 2)]


def path_batch():
    return [np.frombuffer(p.encode(), dtype=np.uint8) for p in npy_paths]


@pipeline_def(batch_size=3, num_threads=2, device_id=device_id)
def file_read_pipeline():
    raw = fn.io.file.read(fn.external_source(source=path_batch, batch=True))
    return raw, fn.decoders.numpy(raw), fn.decoders.numpy(raw, dtype=types.FLOAT)


raw, arrays, floats = run(file_read_pipeline(), 1)
RESULTS["file_read_matches_disk"] = [r.tobytes() == open(p, "rb").read()
                                     for r, p in zip(raw, npy_paths)]
RESULTS["file_read"], RESULTS["decoders_numpy"], RESULTS["decoders_numpy_float"] = \
    raw, arrays, floats

shutil.rmtree(workdir)  # the files written for the examples
