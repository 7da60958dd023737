"""Index files for container readers.

    python -m stoker.tools.index tfrecord|recordio|webdataset FILE [FILE ...]

writes FILE.idx next to each file (or -o PATH for one file):
- tfrecord: DALI's tfrecord2idx format, one "offset size" line per record. Every record's
  CRCs are checked while indexing; a corrupt file is reported with the record's offset.
  Pass the result as readers.tfrecord(index_path=...).
- recordio: MXNet's .idx format, "key<TAB>offset" with keys 0, 1, ... in file order (as
  im2rec writes them). Pass it as readers.mxnet(index_path=...).
- webdataset: DALI's wds2idx format v1.2, "v1.2 <samples>" then one line per sample of
  "ext offset size path" groups. Pass it as readers.webdataset(index_paths=...).
"""

import argparse
import json
import sys

from stoker import _stoker

_INDEXERS = {
    "tfrecord": (_stoker.tfrecord_index, "records"),
    "recordio": (_stoker.recordio_index, "records"),
    "webdataset": (_stoker.webdataset_index, "samples"),
}


def _count(fmt, text):
    lines = text.count("\n")
    return lines - 1 if fmt == "webdataset" else lines  # the v1.2 header line


def main(argv=None, prog="python -m stoker.tools.index"):
    ap = argparse.ArgumentParser(prog=prog, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("format", choices=sorted(_INDEXERS))
    ap.add_argument("files", nargs="+")
    ap.add_argument("-o", "--output", help="index path (only with one file)")
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    args = ap.parse_args(argv)
    if args.output and len(args.files) != 1:
        ap.error("--output needs exactly one file")
    indexer, unit = _INDEXERS[args.format]
    status, done = 0, []
    for path in args.files:
        out = args.output or path + ".idx"
        try:
            text = indexer(path)
        except (ValueError, OSError) as e:
            print(f"error: {e}", file=sys.stderr)
            status = 1
            continue
        with open(out, "w") as f:
            f.write(text)
        done.append({"file": path, unit: _count(args.format, text), "index": out})
        if not args.json:
            print(f"{path}: {done[-1][unit]} {unit} -> {out}")
    if args.json:
        print(json.dumps(done, indent=1))
    return status


if __name__ == "__main__":
    sys.exit(main())
