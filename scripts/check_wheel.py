"""Checks a stoker wheel as a user gets it: installed into a fresh virtual environment (no system
site-packages), every shared object in the installed package must find its libraries inside the
package or among the system libraries the manylinux policy allows (so no build-time Debian
package is needed at run time); then a CPU pipeline runs from it, and `stoker --version` and
`stoker info` answer.

    python3 scripts/check_wheel.py dist/stoker-*.whl [--python PY] [--pip-args "..."] [--gpu]

--python: the interpreter the virtual environment is made with (default: this one; the check
itself needs auditwheel, which `make wheel` installs, and Pillow for the decoding check).
--pip-args: extra arguments for the install (e.g. "--no-index --find-links DIR" where there is
no package index). --gpu: also run the ResNet-50 training pipeline with mixed decoding, and with
CHECK_VIDEO=<file> NVDEC decoding and optical flow (a machine with a GPU)."""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

CPU_PIPELINE = r"""
import numpy as np, stoker
from stoker import fn, types
p = stoker.Pipeline(batch_size=4, num_threads=2, seed=1)
with p:
    x = fn.random.uniform(shape=[8, 8, 3], range=[0, 255])
    x = fn.cast(x, dtype=types.UINT8)
    p.set_outputs(fn.resize(x, size=[4, 4]), fn.crop_mirror_normalize(x, crop=[4, 4]))
a, b = p.run()
assert a.as_array().shape == (4, 4, 4, 3) and b.as_array().shape == (4, 3, 4, 4)
print("cpu pipeline ok:", stoker.__file__)
"""

# The codec libraries inside the wheel at work: a JPEG, a PNG, a WebP, a TIFF and a JPEG 2000 (written by
# Pillow outside the venv) read by readers.file and decoded on the CPU, against the pixels Pillow wrote.
DECODE_PIPELINE = r"""
import sys, numpy as np, stoker
from stoker import fn
folder = sys.argv[1]
p = stoker.Pipeline(batch_size=5, num_threads=2, seed=1)
with p:
    data, _ = fn.readers.file(
        files=[f"{folder}/a.{ext}" for ext in ("png", "jpg", "webp", "tif", "jp2")])
    p.set_outputs(fn.decoders.image(data))
(images,) = p.run()
want = np.load(f"{folder}/a.npy")
png, jpg, webp, tif, jp2 = (np.asarray(images.at(i)) for i in range(5))
assert np.array_equal(png, want), "PNG decoded differently"
assert jpg.shape == want.shape and np.abs(jpg.astype(int) - want).mean() < 8, "JPEG"
assert np.array_equal(webp, want), "WebP (lossless) decoded differently"
assert np.array_equal(tif, want), "TIFF (LZW) decoded differently"
assert np.array_equal(jp2, want), "JPEG 2000 (lossless) decoded differently"
print("decoding ok: libpng, libjpeg-turbo, libwebp, libtiff and OpenJPEG inside the wheel")
"""

GPU_PIPELINE = r"""
import io, os, sys, numpy as np, stoker
from PIL import Image
from stoker import fn, types
folder = sys.argv[1]
rng = np.random.default_rng(0)
for c in range(2):  # a small class-folder dataset of JPEGs
    os.makedirs(f"{folder}/{c}", exist_ok=True)
    for k in range(8):
        Image.fromarray(rng.integers(0, 255, (120, 160, 3), np.uint8)).save(
            f"{folder}/{c}/{k}.jpg", quality=90)
# The ResNet-50 training pipeline: mixed decoding with a random crop, resize, flip, normalise.
p = stoker.Pipeline(batch_size=8, num_threads=2, device_id=0, seed=1)
with p:
    jpegs, labels = fn.readers.file(file_root=folder, random_shuffle=True, name="Reader")
    images = fn.decoders.image_random_crop(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_x=224, resize_y=224)
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT16, output_layout="CHW",
                                      mean=[123.7, 116.3, 103.5], std=[58.4, 57.1, 57.4],
                                      mirror=fn.random.coin_flip())
    p.set_outputs(images, labels.gpu())
for _ in range(3):
    x, y = p.run()
assert x.device == "gpu" and x.as_cpu().as_array().shape == (8, 3, 224, 224)
print("ResNet-50 pipeline (mixed decoding) ok")
video = os.environ.get("CHECK_VIDEO")
if video:  # NVDEC, then optical flow between its frames
    data = [np.fromfile(video, np.uint8)]
    p = stoker.Pipeline(batch_size=1, num_threads=2, device_id=0)
    with p:
        frames = fn.decoders.video(fn.external_source(source=lambda: data, batch=True),
                                   device="mixed", sequence_length=4)
        p.set_outputs(frames, fn.optical_flow(frames, output_grid=4))
    frames, flow = p.run()
    assert frames.device == "gpu" and flow.device == "gpu"
    print("NVDEC", frames.as_cpu().at(0).shape, "and optical flow", flow.as_cpu().at(0).shape,
          "ok")
"""


def allowed_libraries():
    """The manylinux policy's system libraries (auditwheel's own table)."""
    import auditwheel.policy
    path = os.path.join(os.path.dirname(auditwheel.policy.__file__), "manylinux-policy.json")
    names = set()
    for policy in json.load(open(path)):
        names.update(policy.get("lib_whitelist", []))
    # The loader and the virtual DSO are no libraries to ship.
    return names | {"linux-vdso.so.1", "ld-linux-x86-64.so.2"}


def check_dependencies(site):
    allowed = allowed_libraries()
    package = [os.path.join(site, d) for d in os.listdir(site) if d.startswith("stoker")]
    bad = []
    checked = 0
    for root in package:
        for folder, _, files in os.walk(root):
            for f in files:
                if ".so" not in f:
                    continue
                path = os.path.join(folder, f)
                checked += 1
                out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
                for line in out.splitlines():
                    m = re.match(r"\s*(\S+)(?: => (\S+))?", line)
                    if not m:
                        continue
                    name, where = m.group(1), m.group(2) or ""
                    if "not found" in line:
                        bad.append(f"{f}: {name} not found")
                    elif name in allowed or os.path.basename(name) in allowed:
                        continue
                    elif not any(where.startswith(r) for r in package):
                        bad.append(f"{f}: {name} => {where} (outside the package)")
    assert checked, f"no shared objects under {package}"
    if bad:
        raise SystemExit("libraries the wheel does not carry:\n  " + "\n  ".join(bad))
    print(f"dependencies ok: {checked} shared objects resolve inside the package or to the "
          f"manylinux allow-list")


def write_images(folder):
    try:
        import numpy as np
        from PIL import Image
    except ImportError:
        return None
    os.makedirs(folder)
    y, x = np.mgrid[0:48, 0:64]
    pixels = np.stack([x * 4, y * 5, (x + y) * 2], axis=-1).astype(np.uint8)  # smooth: JPEG-kind
    Image.fromarray(pixels).save(os.path.join(folder, "a.png"))
    Image.fromarray(pixels).save(os.path.join(folder, "a.jpg"), quality=95)
    Image.fromarray(pixels).save(os.path.join(folder, "a.webp"), lossless=True)
    Image.fromarray(pixels).save(os.path.join(folder, "a.tif"), compression="tiff_lzw")
    Image.fromarray(pixels).save(os.path.join(folder, "a.jp2"), irreversible=False)
    np.save(os.path.join(folder, "a.npy"), pixels)
    return folder


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("wheel")
    ap.add_argument("--pip-args", default="")
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as venv:
        subprocess.run([args.python, "-m", "venv", venv], check=True)
        py = os.path.join(venv, "bin", "python")
        extra = ["pillow"] if args.gpu else []
        subprocess.run([py, "-m", "pip", "install", "-q", os.path.abspath(args.wheel), *extra,
                        *shlex.split(args.pip_args)], check=True)
        site = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True, check=True).stdout.strip()
        check_dependencies(site)
        # Away from the checkout, so that nothing but the installed package can be imported.
        run = dict(cwd=venv, check=True)
        subprocess.run([py, "-c", CPU_PIPELINE], **run)
        images = write_images(os.path.join(venv, "images"))
        if images:
            subprocess.run([py, "-c", DECODE_PIPELINE, images], **run)
        else:
            print("decoding not checked: Pillow is missing beside this script")
        stoker_cmd = os.path.join(venv, "bin", "stoker")
        subprocess.run([stoker_cmd, "--version"], **run)
        subprocess.run([stoker_cmd, "info"], **run)
        if args.gpu:
            subprocess.run([py, "-c", GPU_PIPELINE, os.path.join(venv, "jpegs")], **run)
    print("wheel ok:", os.path.basename(args.wheel), "with", os.path.basename(args.python))


if __name__ == "__main__":
    main()
