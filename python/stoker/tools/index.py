"""Index files for container readers.

    python -m stoker.tools.index tfrecord FILE [FILE ...]   # writes FILE.idx next to each

A TFRecord index is DALI's tfrecord2idx format: one "offset size" line per record. Every
record's CRCs are checked while indexing; a corrupt file is reported with the record's offset.
"""

import argparse
import sys

from stoker import _stoker


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m stoker.tools.index", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("format", choices=["tfrecord"])
    ap.add_argument("files", nargs="+")
    ap.add_argument("-o", "--output", help="index path (only with one file)")
    args = ap.parse_args(argv)
    if args.output and len(args.files) != 1:
        ap.error("--output needs exactly one file")
    status = 0
    for path in args.files:
        out = args.output or path + ".idx"
        try:
            text = _stoker.tfrecord_index(path)
        except (ValueError, OSError) as e:
            print(f"error: {e}", file=sys.stderr)
            status = 1
            continue
        with open(out, "w") as f:
            f.write(text)
        print(f"{path}: {text.count(chr(10))} records -> {out}")
    return status


if __name__ == "__main__":
    sys.exit(main())
