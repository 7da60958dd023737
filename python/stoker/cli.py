"""The `stoker` command (also `python -m stoker`).

    stoker --version                         the installed version
    stoker info [--json]                     what this build has and sees (CUDA and the GPU
                                             architectures compiled, GPUs, nvJPEG's decoders,
                                             NVDEC, NVOFA, nvCOMP, codec libraries)
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


def _package_version():
    from stoker._version import __version__
    return __version__


def _version(v):
    """13000 -> "13.0" (CUDA's encoding), 0 -> None."""
    return f"{v // 1000}.{v % 1000 // 10}" if v else None


def _arch_names(archs):
    """CMake's ["75-real", ..., "120"] as "sm_75, ..., sm_120 (+PTX)"."""
    names = []
    for a in archs:
        if not a[:1].isdigit():  # "native", "all", "all-major": CMake's words, as they are
            names.append(a)
            continue
        base, _, kind = a.partition("-")
        names.append(f"sm_{base}" + ("" if kind == "real" else
                                     " (PTX only)" if kind == "virtual" else " (+PTX)"))
    return names


def info(as_json=False):
    import stoker
    from stoker import _stoker

    raw = _stoker.build_info()
    out = {"stoker": stoker.__version__, "path": stoker.__file__,
           "python": sys.version.split()[0],
           "cuda": {"built": raw["cuda_built"], "runtime": _version(raw["cuda_runtime"]),
                    "driver": _version(raw["cuda_driver"]),
                    "architectures": raw["cuda_architectures"].split()},
           "devices": raw["devices"], "libjpeg_turbo": raw["libjpeg_turbo"],
           "libpng": raw["libpng"], "libwebp": raw["libwebp"] or None,
           "libtiff": raw["libtiff"] or None, "openjpeg": raw["openjpeg"] or None,
           "libsndfile": raw["libsndfile"] or None,
           "lmdb": raw["lmdb"],
           "cfitsio": raw["cfitsio"] or None,
           "ffmpeg": raw["ffmpeg"] or None,
           "nvcomp": raw["nvcomp"] or True, "nvjpeg2k": raw["nvjpeg2k"] or True,
           "nvtiff": raw["nvtiff"] or True}
    if as_json:
        return json.dumps(out, indent=1)
    cuda = out["cuda"]
    lines = [f"stoker {out['stoker']} ({out['path']}), Python {out['python']}"]
    if not cuda["built"]:
        lines.append("CUDA: not built with CUDA (CPU operators only)")
    else:
        driver = cuda["driver"] or "none (no NVIDIA driver found)"
        lines.append(f"CUDA: built with runtime {cuda['runtime']}; driver {driver}; kernels "
                     f"for {', '.join(_arch_names(cuda['architectures']))}")
    if not out["devices"]:
        lines.append("GPUs: none seen" + (" (device='mixed'/'gpu' operators need one)"
                                          if cuda["built"] else ""))
    for i, d in enumerate(out["devices"]):
        yes = {True: "yes", False: "no"}
        note = f" ({d['nvjpeg_note']})" if d["nvjpeg_note"] else ""
        kernels = "" if d["kernels"] else " -- NO KERNELS FOR THIS GPU in this build"
        lines.append(f"GPU {i}: {d['name']}, compute {d['compute_capability']}, "
                     f"{d['memory_gib']:.1f} GiB{kernels}; nvJPEG hardware decoder "
                     f"{yes[d['nvjpeg_hardware']]}, CUDA decoder {yes[d['nvjpeg_cuda']]}{note}")
        lines.append(f"  NVDEC (readers.video, decoders.video mixed): "
                     f"{d['nvdec'] and 'no: ' + d['nvdec'] or 'yes'}; NVOFA (optical_flow): "
                     f"{d['nvofa'] and 'no: ' + d['nvofa'] or 'yes'}")
    lines.append(f"libjpeg-turbo {out['libjpeg_turbo']}; libpng {out['libpng']}; "
                 f"libwebp {out['libwebp'] or 'no (WebP refused)'}; "
                 f"libtiff {out['libtiff'] or 'no (TIFF refused)'}; "
                 f"OpenJPEG {out['openjpeg'] or 'no (JPEG 2000 refused)'}; "
                 f"liblmdb (readers.caffe, caffe2): {'yes' if out['lmdb'] else 'no'}; "
                 f"cfitsio (experimental.readers.fits): {out['cfitsio'] or 'no'}")
    lines.append(f"FFmpeg (readers.video): {out['ffmpeg'] or 'no (built without it)'}")
    lines.append(f"libsndfile (decoders.audio): {out['libsndfile'] or 'no (built without it)'}")
    if cuda["built"]:
        nvcomp = out["nvcomp"]
        lines.append("nvCOMP (decoders.inflate on the GPU): " +
                     ("yes" if nvcomp is True else f"no: {nvcomp} (inflates on the CPU instead)"))
        for key, name, what in (("nvjpeg2k", "nvJPEG2000", "JPEG 2000"), ("nvtiff", "nvTIFF", "TIFF")):
            lines.append(f"{name} ({what} in mixed decoding): " +
                         ("yes" if out[key] is True else f"no: {out[key]} (decoded on the CPU)"))
    return "\n".join(lines)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    ap = argparse.ArgumentParser(prog="stoker", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action="version", version=f"stoker {_package_version()}")
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
