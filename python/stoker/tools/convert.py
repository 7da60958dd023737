"""Container files from a class-folder tree (or any (bytes, label) samples).

    python -m stoker.tools.convert SRC_ROOT OUT_DIR [--formats tfrecord,recordio,webdataset]
                                   [--shards 8] [--prefix data] [--json] [--quiet]

SRC_ROOT holds one sub-folder per class, as readers.file reads it: labels are the sorted
folder names' positions, samples are taken in readers.file's order (folders, then files,
sorted). Each format gets `--shards` files of consecutive samples, with their index files:
- tfrecord: tf.train.Example records {"image/encoded": bytes, "image/class/label": int64},
  framed with masked CRC-32C; index "offset size" per record (readers.tfrecord(index_path=)).
- recordio: MXNet image records (IRHeader flag 0, the label as float, id = sample number), split
  where the data holds the magic number at an aligned offset, as MXNet's writer does; index
  "key<TAB>offset" (readers.mxnet(index_path=)).
- webdataset: tar shards with "<key>.jpg" (the file's extension) and "<key>.cls" (the label
  as text); index in DALI's wds2idx v1.2 format (readers.webdataset(index_paths=)).
"""

import argparse
import io
import json
import os
import struct
import sys
import tarfile

from stoker import _stoker

FORMATS = ("tfrecord", "recordio", "webdataset")
_EXTENSIONS = {"tfrecord": "tfrecord", "recordio": "rec", "webdataset": "tar"}
_RECORDIO_MAGIC = 0xCED7230A
_IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp", ".pnm", ".ppm",
                     ".pgm", ".jp2")


def folder_samples(root):
    """[(path, label)] of a class-folder tree, in readers.file's order."""
    classes = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
    if not classes:
        raise ValueError(f"{root}: no class sub-folders")
    out = []
    for label, c in enumerate(classes):
        for f in sorted(os.listdir(os.path.join(root, c))):
            if f.lower().endswith(_IMAGE_EXTENSIONS):
                out.append((os.path.join(root, c, f), label))
    return out


def varint(v):
    """A protobuf varint (negative ints as their 64-bit two's complement, as protobuf does)."""
    out = bytearray()
    v &= (1 << 64) - 1
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def field(number, payload):
    """A length-delimited protobuf field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def example(image, label):
    """A serialized tf.train.Example {image/encoded: bytes, image/class/label: int64}."""
    def entry(key, feature):  # Features.feature map entry: key 1, value 2
        return field(1, field(1, key.encode()) + field(2, feature))
    img = field(1, field(1, image))           # Feature.bytes_list (1) .value (1)
    lab = field(3, field(1, varint(label)))  # Feature.int64_list (3) .value (1), packed
    return field(1, entry("image/encoded", img) + entry("image/class/label", lab))


def tfrecord(payload):
    """One TFRecord frame: length, its masked CRC-32C, the payload, its masked CRC-32C."""
    length = struct.pack("<Q", len(payload))
    return (length + struct.pack("<I", _stoker.masked_crc32c(length)) + payload +
            struct.pack("<I", _stoker.masked_crc32c(payload)))


def recordio(image, label, rec_id):
    """One MXNet image record: IRHeader + image, in parts split at aligned occurrences of the
    magic number (the reader re-inserts it between parts), each part padded to 4 bytes."""
    data = struct.pack("<IfQQ", 0, float(label), rec_id, 0) + image
    magic = struct.pack("<I", _RECORDIO_MAGIC)
    pieces, start, pos = [], 0, data.find(magic)
    while pos != -1:
        if pos % 4 == 0:
            pieces.append(data[start:pos])
            start = pos + 4
        pos = data.find(magic, pos + 1)
    pieces.append(data[start:])
    out = bytearray()
    for k, piece in enumerate(pieces):
        if len(pieces) == 1:
            flag = 0
        else:
            flag = 1 if k == 0 else (3 if k == len(pieces) - 1 else 2)
        out += magic + struct.pack("<I", flag << 29 | len(piece)) + piece
        out += b"\0" * ((4 - len(piece) % 4) % 4)
    return bytes(out)


def _write_index(fmt, path):
    indexer = {"tfrecord": _stoker.tfrecord_index, "recordio": _stoker.recordio_index,
               "webdataset": _stoker.webdataset_index}[fmt]
    with open(path + ".idx", "w") as f:
        f.write(indexer(path))


def write_shard(fmt, path, samples, first_id=0):
    """Writes `samples` ([(bytes, label, extension)]) as one `fmt` file at `path` and its
    index at path + ".idx"."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format '{fmt}'; expected one of {', '.join(FORMATS)}")
    if fmt == "webdataset":
        with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
            for i, (data, label, ext) in enumerate(samples):
                key = f"{first_id + i:08d}"
                for name, payload in ((f"{key}.{ext}", data), (f"{key}.cls", b"%d" % label)):
                    info = tarfile.TarInfo(name)
                    info.size = len(payload)
                    tar.addfile(info, io.BytesIO(payload))
    else:
        with open(path, "wb") as f:
            for i, (data, label, _) in enumerate(samples):
                f.write(tfrecord(example(data, label)) if fmt == "tfrecord"
                        else recordio(data, label, first_id + i))
    _write_index(fmt, path)


def check_formats(formats):
    """Raises ValueError naming any format convert cannot write."""
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ValueError(f"unknown container format {', '.join(map(repr, unknown))} "
                         f"(known: {', '.join(FORMATS)})")


def convert(samples, out_dir, formats=FORMATS, shards=8, prefix="data", progress=None):
    """Writes [(path, label)] as `shards` files per format in out_dir; returns {format: [paths]}.
    Shard k holds samples [k*n/shards, (k+1)*n/shards) in order. progress(text), when given,
    hears of each shard written."""
    check_formats(formats)
    os.makedirs(out_dir, exist_ok=True)
    shards = max(1, min(shards, len(samples)))
    bounds = [len(samples) * k // shards for k in range(shards + 1)]
    out = {fmt: [] for fmt in formats}
    for k in range(shards):
        part = []
        for path, label in samples[bounds[k]:bounds[k + 1]]:
            with open(path, "rb") as f:
                part.append((f.read(), label, os.path.splitext(path)[1].lstrip(".").lower()))
        for fmt in formats:
            path = os.path.join(out_dir, f"{prefix}-{k:05d}.{_EXTENSIONS[fmt]}")
            write_shard(fmt, path, part, first_id=bounds[k])
            out[fmt].append(path)
        if progress:
            progress(f"[{k + 1}/{shards}] {bounds[k + 1]} of {len(samples)} samples written")
    return out


def main(argv=None, prog="python -m stoker.tools.convert"):
    ap = argparse.ArgumentParser(prog=prog, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("src_root")
    ap.add_argument("out_dir")
    ap.add_argument("--formats", default=",".join(FORMATS))
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--prefix", default="data")
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    ap.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = ap.parse_args(argv)
    formats = [f for f in args.formats.split(",") if f]
    unknown = set(formats) - set(FORMATS)
    if unknown:
        ap.error(f"unknown formats {sorted(unknown)}; expected {', '.join(FORMATS)}")
    samples = folder_samples(args.src_root)
    progress = None if args.quiet else (lambda s: print(s, file=sys.stderr, flush=True))
    written = convert(samples, args.out_dir, formats, args.shards, args.prefix, progress)
    if args.json:
        print(json.dumps({"samples": len(samples), "files": written}, indent=1))
        return
    for fmt, paths in written.items():
        print(f"{fmt}: {len(samples)} samples in {len(paths)} files under {args.out_dir}")


if __name__ == "__main__":
    main()
