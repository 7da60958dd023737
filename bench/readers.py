"""Reader throughput against the raw sequential read of the same files (issue 3's benchmark).

    PYTHONPATH=build/python python3 bench/readers.py --gb 1.0 --dir /tmp/stoker-bench [--json F]

Writes a dataset of about --gb GiB per format (random payloads of 20-400 KB, mean ~110 KB,
like ImageNet JPEGs; the readers do not decode) as a class-folder tree, TFRecord shards with
Example records, MXNet RecordIO shards and webdataset tar shards. Everything is read once to
put it in the page cache, then for each format:
- raw: the files read start to end with 1 MiB reads (`cat`-like, one thread) and with
  `cat` itself; the faster of the two is the baseline;
- the stoker pipeline of only that reader (batch 256, its own I/O threads), both with mmap and
  with pread (dont_use_mmap=True), one epoch per repeat.
Formats: readers.file and readers.numpy (a file per sample), readers.tfrecord, readers.mxnet,
readers.webdataset (8 shards each) and readers.caffe (one LMDB; only where the lmdb package and
liblmdb exist; LMDB is always mapped, so its two modes read alike).
Each figure is the median of --repeats runs after one warm-up run. Prints a Markdown table
(records/s, MB/s, % of raw) for bench/RESULTS.md.
"""

import argparse
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import tarfile
import time

import numpy as np

import stoker
import stoker.tfrecord as tfr
from stoker import _stoker, fn
from stoker.tools import convert

MB = 1e6


# --- dataset writers ------------------------------------------------------------------------

def _payloads(total_bytes, seed=0):
    """(payload bytes, label) pairs summing to about total_bytes: slices of one random pool."""
    rng = np.random.default_rng(seed)
    pool = rng.integers(0, 256, 64 << 20, dtype=np.uint8).tobytes()
    done = 0
    while done < total_bytes:
        size = int(np.clip(rng.lognormal(np.log(95_000), 0.55), 20_000, 400_000))
        start = int(rng.integers(0, len(pool) - size))
        yield pool[start:start + size], int(rng.integers(0, 1000))
        done += size


def _datum(image, label):
    """caffe.Datum {data: 4, label: 5, encoded: 7} as convert_imageset --encoded writes it."""
    return (convert.field(4, image) + convert.varint(5 << 3) + convert.varint(label) +
            convert.varint(7 << 3) + convert.varint(1))


def have_lmdb():
    try:
        import lmdb  # noqa: F401
    except ImportError:
        return False
    return _stoker.lmdb_available()


def write_datasets(root, total_bytes, shards=8):
    os.makedirs(root, exist_ok=True)
    stamp = os.path.join(root, f"done-{total_bytes}")
    sets = {
        "file": [os.path.join(root, "files")],
        "numpy": [os.path.join(root, "npy")],
        "caffe": [os.path.join(root, "lmdb")],
        "tfrecord": [os.path.join(root, f"data-{k}.tfrecord") for k in range(shards)],
        "mxnet": [os.path.join(root, f"data-{k}.rec") for k in range(shards)],
        "webdataset": [os.path.join(root, f"data-{k}.tar") for k in range(shards)],
    }
    if os.path.exists(stamp):
        return sets
    samples = list(_payloads(total_bytes))
    per = (len(samples) + shards - 1) // shards
    os.makedirs(os.path.join(root, "npy"), exist_ok=True)
    for i, (img, label) in enumerate(samples):
        d = os.path.join(root, "files", f"c{label % 100:03d}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"{i:07d}.jpg"), "wb") as f:
            f.write(img)
        np.save(os.path.join(root, "npy", f"{i:07d}.npy"), np.frombuffer(img, np.uint8))
    if have_lmdb():
        import lmdb
        env = lmdb.open(sets["caffe"][0], map_size=2 * total_bytes + (1 << 30))
        with env.begin(write=True) as txn:
            for i, (img, label) in enumerate(samples):
                txn.put(f"{i:08d}".encode(), _datum(img, label))
        env.close()
    for k in range(shards):
        part = list(enumerate(samples))[k * per:(k + 1) * per]
        with open(sets["tfrecord"][k], "wb") as f:
            for i, (img, label) in part:
                f.write(convert.tfrecord(convert.example(img, label)))
        with open(sets["mxnet"][k], "wb") as f:
            for i, (img, label) in part:
                f.write(convert.recordio(img, label, i))
        with tarfile.open(sets["webdataset"][k], "w") as tar:
            for i, (img, label) in part:
                for ext, data in [("jpg", img), ("cls", str(label).encode())]:
                    info = tarfile.TarInfo(f"{i:07d}.{ext}")
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
    open(stamp, "w").close()
    return sets


def all_files(paths):
    out = []
    for p in paths:
        if os.path.isdir(p):
            for d, _, names in sorted(os.walk(p)):
                out += [os.path.join(d, n) for n in sorted(names)]
        else:
            out.append(p)
    return out


# --- measurements ---------------------------------------------------------------------------

def raw_python(files):
    buf = bytearray(1 << 20)
    view = memoryview(buf)
    total = 0
    for path in files:
        with open(path, "rb", buffering=0) as f:
            while True:
                n = f.readinto(view)
                if not n:
                    break
                total += n
    return total


def raw_cat(files):
    with open(os.devnull, "wb") as null:
        for k in range(0, len(files), 2000):
            subprocess.run(["cat", *files[k:k + 2000]], stdout=null, check=True)


def timed(fn_, repeats):
    fn_()  # warm-up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn_()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def reader_node(fmt, paths, **io):
    if fmt == "file":
        return fn.readers.file(file_root=paths[0], name="R", **io)
    if fmt == "tfrecord":
        out = fn.readers.tfrecord(path=paths, name="R", features={
            "image/encoded": tfr.FixedLenFeature((), tfr.string, ""),
            "image/class/label": tfr.FixedLenFeature([1], tfr.int64, -1)}, **io)
        return out["image/encoded"], out["image/class/label"]
    if fmt == "mxnet":
        return fn.readers.mxnet(path=paths, name="R", **io)
    if fmt == "numpy":
        return fn.readers.numpy(file_root=paths[0], name="R", **io), None
    if fmt == "caffe":
        return fn.readers.caffe(path=paths[0], name="R", **io)
    return fn.readers.webdataset(paths=paths, ext=["jpg", "cls"], name="R", **io)


def run_reader(fmt, paths, batch, threads, repeats, **io):
    pipe = stoker.Pipeline(batch_size=batch, num_threads=threads, seed=0)
    with pipe:
        pipe.set_outputs(*[o for o in reader_node(fmt, paths, **io) if o is not None])
    pipe.build()
    n = pipe.epoch_size("R")
    iters = n // batch
    nbytes = [0]

    def epoch():
        total = 0
        for _ in range(iters):
            data = pipe.run()[0]
            total += sum(data[i].shape[0] for i in range(len(data)))
        nbytes[0] = total

    t = timed(epoch, repeats)
    return iters * batch / t, nbytes[0] / t, n


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gb", type=float, default=1.0, help="GiB per format")
    ap.add_argument("--dir", default="/tmp/stoker-bench-readers")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--formats", default="file,numpy,tfrecord,mxnet,webdataset,caffe")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args(argv)

    t = time.perf_counter()
    sets = write_datasets(args.dir, int(args.gb * (1 << 30)))
    print(f"dataset ready in {time.perf_counter() - t:.1f} s under {args.dir}", file=sys.stderr)
    rows = []
    for fmt in args.formats.split(","):
        if fmt == "caffe" and not have_lmdb():
            print("caffe: skipped (needs the lmdb package and stoker built with liblmdb)",
                  file=sys.stderr)
            continue
        files = all_files(sets[fmt])
        if fmt == "caffe":
            files = [f for f in files if f.endswith("data.mdb")]
        size = sum(os.path.getsize(f) for f in files)
        raw_python(files)  # into the page cache
        t_py = timed(lambda: raw_python(files), args.repeats)
        t_cat = timed(lambda: raw_cat(files), args.repeats)
        raw = size / min(t_py, t_cat)
        row = dict(format=fmt, files=len(files), bytes=size, raw_python_MBps=size / t_py / MB,
                   raw_cat_MBps=size / t_cat / MB)
        for mode, io in [("mmap", {}), ("pread", dict(dont_use_mmap=True))]:
            rps, bps, n = run_reader(fmt, sets[fmt], args.batch, args.threads, args.repeats,
                                     **io)
            # The reader covers the file set at size * rps / n bytes/s (containers carry a
            # little framing beyond the payloads): compared with the raw read of those bytes.
            row["records"] = n
            row[f"{mode}_records_per_s"] = rps
            row[f"{mode}_payload_MBps"] = bps / MB
            row[f"{mode}_pct_of_raw"] = 100 * size * rps / n / raw
        rows.append(row)
        print(json.dumps(row), file=sys.stderr)
    print(table(rows, args))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(rows=rows, env=environment(args)), f, indent=1)
    return rows


def environment(args):
    return dict(date=time.strftime("%Y-%m-%d"), host=platform.node(), cpus=os.cpu_count(),
                python=platform.python_version(), numpy=np.__version__,
                stoker=getattr(stoker, "__version__", "?"), gib=args.gb, batch=args.batch,
                threads=args.threads, repeats=args.repeats)


def table(rows, args):
    env = environment(args)
    lines = [f"{env['date']}, {env['cpus']} CPUs, {env['gib']} GiB per format from the page "
             f"cache, batch {env['batch']}, {env['threads']} compute threads, median of "
             f"{env['repeats']} (after a warm-up), Python {env['python']}.", "",
             "| reader | files | records | raw read MB/s (1 MiB reads / cat) | mmap records/s | "
             "mmap MB/s | mmap % of raw | pread records/s | pread MB/s | pread % of raw |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(
            f"| readers.{r['format']} | {r['files']} | {r['records']} | "
            f"{r['raw_python_MBps']:,.0f} / {r['raw_cat_MBps']:,.0f} | "
            f"{r['mmap_records_per_s']:,.0f} | {r['mmap_payload_MBps']:,.0f} | "
            f"{r['mmap_pct_of_raw']:.0f}% | {r['pread_records_per_s']:,.0f} | "
            f"{r['pread_payload_MBps']:,.0f} | {r['pread_pct_of_raw']:.0f}% |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
