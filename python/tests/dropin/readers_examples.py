# DALI's data-loading examples for its record and annotation formats
# (docs/examples/general/data_loading/): "TensorFlow TFRecord" (dataloading_tfrecord.ipynb: an
# index made by tfrecord2idx, features from nvidia.dali.tfrecord, decode and crop-normalise),
# "WebDataset" (dataloading_webdataset.ipynb: jpg/cls samples, an index as wds2idx writes it),
# "COCO Reader" (coco_reader.ipynb: boxes, labels, polygons and vertices, then ltrb, skip_empty
# and image_ids) and the file reader's file_list mode, unshuffled. Written for nvidia.dali; the
# data folder and device come from the environment. Trimmed to fit: small batches, centre crops
# instead of the examples' random crop positions, no resize (compared in image_operators.py).
import hashlib
import io
import os
import shutil
import struct
import tarfile
import tempfile

import numpy as np

from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn
import nvidia.dali.tfrecord as tfrec
import nvidia.dali.types as types

data_root = os.environ["DROPIN_DATA"]
containers = os.path.join(data_root, "containers")
device_id = int(os.environ["DROPIN_DEVICE_ID"]) if os.environ.get("DROPIN_DEVICE_ID") else None
decoder_device = "mixed" if device_id is not None else "cpu"
workdir = tempfile.mkdtemp(prefix="readers_examples_")
RESULTS, COMPARE = {}, {}


def run(pipe, iterations):
    """Every output's samples over `iterations` runs, as numpy arrays."""
    pipe.build()
    outs = None
    for _ in range(iterations):
        batch = [[np.array(o.as_cpu().at(i)) for i in range(len(o))] for o in pipe.run()]
        outs = batch if outs is None else [a + b for a, b in zip(outs, batch)]
    return outs


def digest(samples):
    return [hashlib.sha1(s.tobytes()).hexdigest() for s in samples]


def decoded(key, images):
    RESULTS[key] = images
    if decoder_device == "mixed":
        # stoker's mixed decoder gives part of a batch to libjpeg-turbo on CPU threads; where
        # DALI's nvJPEG decodes the same image, the two differ in IDCT and chroma upsampling:
        # 0.3 to 2.2 levels on average over these photos, 2.95 on one 224x224 crop (H200,
        # November 2026); where both use nvJPEG they are equal.
        COMPARE[key] = ("mean_abs", 4.0)


# --- TFRecord: the index, as DALI's tfrecord2idx writes it ("offset size" per record) ---
def tfrecord2idx(tfrecord, index):
    with open(tfrecord, "rb") as f, open(index, "w") as idx:
        while True:
            current = f.tell()
            byte_len = f.read(8)
            if len(byte_len) == 0:
                break
            f.read(4)  # crc
            proto_len = struct.unpack("q", byte_len)[0]
            f.read(proto_len)
            f.read(4)  # crc
            idx.write(str(current) + " " + str(f.tell() - current) + "\n")


tfrecords = {name: os.path.join(containers, "tfrecord", name) for name in (
    "tfx-flowers/flowers.tfrecord", "tfx-cifar10/cifar10_train.tfrecord",
    "tfx-cifar10/cifar10_test.tfrecord", "pytorch-data/example.tfrecord")}
indexes = {}
for name, path in tfrecords.items():
    indexes[name] = os.path.join(workdir, name.replace("/", "_") + ".idx")
    tfrecord2idx(path, indexes[name])


@pipeline_def(batch_size=8, num_threads=2, device_id=device_id)
def tfrecord_pipeline():
    inputs = fn.readers.tfrecord(
        path=tfrecords["tfx-flowers/flowers.tfrecord"],
        index_path=indexes["tfx-flowers/flowers.tfrecord"],
        features={"image_raw": tfrec.FixedLenFeature((), tfrec.string, ""),
                  "label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
                  "height": tfrec.FixedLenFeature([], tfrec.int64, 0),
                  "width": tfrec.FixedLenFeature([1], tfrec.int64, 0),
                  "depth": tfrec.VarLenFeature(tfrec.int64, 0)})
    images = fn.decoders.image(inputs["image_raw"], device=decoder_device, output_type=types.RGB)
    output = fn.crop_mirror_normalize(images, dtype=types.FLOAT, crop=(128, 128),
                                      mean=[0.0, 0.0, 0.0], std=[1.0, 1.0, 1.0])
    return output, inputs["label"], inputs["height"], inputs["width"], inputs["depth"]


# 25 records in batches of 8: the fourth batch starts the second epoch.
out = run(tfrecord_pipeline(), 4)
decoded("tfrecord_images", out[0])
for k, name in enumerate(["label", "height", "width", "depth"], 1):
    RESULTS["tfrecord_" + name] = out[k]


@pipeline_def(batch_size=16, num_threads=2, device_id=device_id)
def cifar_pipeline():
    # Two files, one index each; PNG images, an int64 label and an id string.
    names = ["tfx-cifar10/cifar10_train.tfrecord", "tfx-cifar10/cifar10_test.tfrecord"]
    inputs = fn.readers.tfrecord(path=[tfrecords[n] for n in names],
                                 index_path=[indexes[n] for n in names],
                                 features={"image": tfrec.FixedLenFeature((), tfrec.string, ""),
                                           "label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
                                           "id": tfrec.FixedLenFeature([], tfrec.string, "")})
    images = fn.decoders.image(inputs["image"], device=decoder_device, output_type=types.RGB)
    return images, inputs["label"], inputs["id"]


out = run(cifar_pipeline(), 9)  # 128 + 128 records: the 9th batch starts the second file
RESULTS["cifar_images"] = out[0][112:]  # PNG is lossless: the same pixels on every backend
RESULTS["cifar_labels"], RESULTS["cifar_ids"] = out[1], out[2]


@pipeline_def(batch_size=3, num_threads=1, device_id=device_id)
def var_len_pipeline():
    inputs = fn.readers.tfrecord(path=tfrecords["pytorch-data/example.tfrecord"],
                                 index_path=indexes["pytorch-data/example.tfrecord"],
                                 features={"x_float": tfrec.VarLenFeature(tfrec.float32, 0.0),
                                           "x_int": tfrec.VarLenFeature([5], tfrec.int64, 0),
                                           "x_byte": tfrec.FixedLenFeature((), tfrec.string, "")})
    return inputs["x_float"], inputs["x_int"], inputs["x_byte"]


RESULTS["tfrecord_var_len"] = run(var_len_pipeline(), 2)  # 4 records: the 2nd batch wraps

# --- WebDataset: a tar of jpg/cls samples and its index (wds2idx's v1.2 format) ---
photos = os.path.join(data_root, "photos", "dali-imagenet-classes")
with open(os.path.join(photos, "image_list.txt")) as f:
    entries = [line.split() for line in f if line.strip()]
small = [(p, label) for p, label in entries if "_640" in p or "_960_720" in p]
wds_tar, wds_idx = os.path.join(workdir, "train.tar"), os.path.join(workdir, "train.idx")
with tarfile.open(wds_tar, "w", format=tarfile.GNU_FORMAT) as tar:
    for i, (p, label) in enumerate(small):
        for ext, payload in (("cls", label.encode()),
                             ("jpg", open(os.path.join(photos, p), "rb").read())):
            info = tarfile.TarInfo(f"{i:06d}.{ext}")
            info.size, info.mtime = len(payload), 1600000000
            tar.addfile(info, fileobj=io.BytesIO(payload))
with tarfile.open(wds_tar) as tar:
    members = [m for m in tar.getmembers() if m.isfile()]
with open(wds_idx, "w") as idx:
    idx.write(f"v1.2 {len(members) // 2}\n")
    for a, b in zip(members[::2], members[1::2]):
        idx.write(" ".join(f"{m.name.split('.', 1)[1]} {m.offset_data} {m.size} {m.name}"
                           for m in (a, b)) + "\n")


@pipeline_def(batch_size=4, num_threads=2, device_id=device_id)
def wds_pipeline(wds_data=wds_tar):
    img_raw, cls = fn.readers.webdataset(paths=wds_data, index_paths=wds_idx, ext=["jpg", "cls"],
                                         missing_component_behavior="error")
    img = fn.decoders.image(img_raw, device=decoder_device, output_type=types.RGB)
    output = fn.crop_mirror_normalize(img, dtype=types.FLOAT, crop=(224, 224),
                                      mean=[0.0, 0.0, 0.0], std=[1.0, 1.0, 1.0])
    return output, cls


out = run(wds_pipeline(), 4)  # 14 samples in batches of 4: the last batch wraps
decoded("wds_images", out[0])
RESULTS["wds_cls"] = out[1]


@pipeline_def(batch_size=4, num_threads=1, device_id=device_id)
def wds_shared_shards():
    # The webdataset project's own test shards, without indexes: a directory entry and
    # gzipped members (compressed.tar), POSIX pax headers (testgz.tar).
    shards = [os.path.join(containers, "webdataset", n) for n in ("compressed.tar", "testgz.tar")]
    return fn.readers.webdataset(paths=shards, ext=["txt.gz"])


RESULTS["wds_shared_shards"] = run(wds_shared_shards(), 3)[0]

# --- COCO Reader ---
coco = os.path.join(data_root, "photos", "dali-coco")
file_root, annotations_file = os.path.join(coco, "images"), os.path.join(coco, "instances.json")


@pipeline_def(batch_size=16, num_threads=2, device_id=device_id)
def coco_pipeline():
    jpegs, bboxes, labels, polygons, vertices = fn.readers.coco(
        file_root=file_root, annotations_file=annotations_file, polygon_masks=True, ratio=True)
    images = fn.decoders.image(jpegs, device=decoder_device, output_type=types.RGB)
    return images, bboxes, labels, polygons, vertices


out = run(coco_pipeline(), 1)
RESULTS["coco_images"] = out[0][:6]
if decoder_device == "mixed":
    # Most of these photos are progressive JPEGs, which DALI decodes with nvJPEG on the GPU
    # and stoker with libjpeg-turbo (docs/dali_differences.md: ~7 levels on a noisy image).
    COMPARE["coco_images"] = ("mean_abs", 8.0)
for k, name in enumerate(["bboxes", "labels", "polygons", "vertices"], 1):
    RESULTS["coco_" + name] = out[k]


@pipeline_def(batch_size=16, num_threads=2, device_id=device_id)
def coco_options_pipeline():
    jpegs, bboxes, labels, image_ids = fn.readers.coco(
        file_root=file_root, annotations_file=annotations_file, ltrb=True, ratio=True,
        skip_empty=True, image_ids=True, size_threshold=200.0, name="Coco")
    return jpegs, bboxes, labels, image_ids


# Boxes under 200 px go, and with them 5 images left empty: 56 images in batches of 16, the
# fourth batch crosses into the second epoch.
pipe = coco_options_pipeline()
out = run(pipe, 5)
RESULTS["coco_skip_empty_epoch_size"] = pipe.epoch_size("Coco")
RESULTS["coco_ltrb_jpegs"] = digest(out[0])
for k, name in enumerate(["bboxes", "labels", "image_ids"], 1):
    RESULTS["coco_ltrb_" + name] = out[k]

# --- readers.file with a file list ("relative/path label" lines), shuffling off ---


@pipeline_def(batch_size=8, num_threads=2, device_id=device_id)
def file_list_pipeline():
    jpegs, labels = fn.readers.file(file_root=photos, file_list=os.path.join(photos,
                                                                             "image_list.txt"),
                                    random_shuffle=False, name="Reader")
    return jpegs, labels


pipe = file_list_pipeline()
out = run(pipe, 7)  # 47 files in batches of 8: the sixth batch wraps into the second epoch
RESULTS["file_list_jpegs"], RESULTS["file_list_labels"] = digest(out[0]), out[1]
RESULTS["file_list_epoch_size"] = pipe.epoch_size("Reader")

shutil.rmtree(workdir)  # the files written for the examples
