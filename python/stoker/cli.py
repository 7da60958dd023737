"""The `stoker` command (also `python -m stoker`).

    stoker info [--json]                     what this build has and sees (CUDA, GPUs, nvJPEG's
                                             decoders, codec libraries)
    stoker convert SRC_ROOT OUT_DIR [...]    a class-folder tree -> TFRecord / RecordIO /
                                             webdataset shards with their indexes
    stoker index FORMAT FILE [FILE ...]      index files for readers.tfrecord / mxnet / webdataset
    stoker diagnose --data DIR [...]         loader alone, model on synthetic data, model fed by
                                             the loader: % of synthetic and the bottleneck
    stoker bench --data DIR [...]            the loader alone at several thread counts

`stoker COMMAND --help` describes each command's options.
"""

import argparse
import json
import sys


def _version(v):
    """13000 -> "13.0" (CUDA's encoding), 0 -> None."""
    return f"{v // 1000}.{v % 1000 // 10}" if v else None


def info(as_json=False):
    import stoker
    from stoker import _stoker

    raw = _stoker.build_info()
    out = {"stoker": stoker.__version__, "path": stoker.__file__,
           "python": sys.version.split()[0],
           "cuda": {"built": raw["cuda_built"], "runtime": _version(raw["cuda_runtime"]),
                    "driver": _version(raw["cuda_driver"])},
           "devices": raw["devices"], "libjpeg_turbo": raw["libjpeg_turbo"],
           "libpng": raw["libpng"], "lmdb": raw["lmdb"], "ffmpeg": raw["ffmpeg"] or None}
    if as_json:
        return json.dumps(out, indent=1)
    cuda = out["cuda"]
    lines = [f"stoker {out['stoker']} ({out['path']}), Python {out['python']}"]
    if not cuda["built"]:
        lines.append("CUDA: not built with CUDA (CPU operators only)")
    else:
        driver = cuda["driver"] or "none (no NVIDIA driver found)"
        lines.append(f"CUDA: built with runtime {cuda['runtime']}; driver {driver}")
    if not out["devices"]:
        lines.append("GPUs: none seen" + (" (device='mixed'/'gpu' operators need one)"
                                          if cuda["built"] else ""))
    for i, d in enumerate(out["devices"]):
        yes = {True: "yes", False: "no"}
        note = f" ({d['nvjpeg_note']})" if d["nvjpeg_note"] else ""
        lines.append(f"GPU {i}: {d['name']}, compute {d['compute_capability']}, "
                     f"{d['memory_gib']:.1f} GiB; nvJPEG hardware decoder "
                     f"{yes[d['nvjpeg_hardware']]}, CUDA decoder {yes[d['nvjpeg_cuda']]}{note}")
    lines.append(f"libjpeg-turbo {out['libjpeg_turbo']}; libpng {out['libpng']}; "
                 f"liblmdb (readers.caffe, caffe2): {'yes' if out['lmdb'] else 'no'}")
    lines.append(f"FFmpeg (readers.video): {out['ffmpeg'] or 'no (built without it)'}")
    return "\n".join(lines)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    ap = argparse.ArgumentParser(prog="stoker", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    p_info = sub.add_parser("info", help="what this build has and sees")
    p_info.add_argument("--json", action="store_true", help="machine-readable output")
    # convert and index keep their own parsers (python -m stoker.tools.*): the rest of the
    # command line goes to them unchanged.
    sub.add_parser("convert", help="class folders -> TFRecord/RecordIO/webdataset shards",
                   add_help=False)
    sub.add_parser("index", help="index files for the container readers", add_help=False)
    sub.add_parser("diagnose", help="what limits training: the loader (which part) or the model",
                   add_help=False)
    sub.add_parser("bench", help="the loader alone at several thread counts", add_help=False)
    if argv and argv[0] in ("convert", "index", "diagnose", "bench"):
        from stoker.tools import bench, convert, diagnose, index
        tool = {"convert": convert, "index": index, "diagnose": diagnose, "bench": bench}[argv[0]]
        return tool.main(argv[1:], prog=f"stoker {argv[0]}") or 0
    args = ap.parse_args(argv)
    if args.command == "info":
        print(info(args.json))
        return 0
    ap.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
