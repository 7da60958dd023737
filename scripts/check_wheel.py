"""Checks a stoker wheel as a user gets it: installed into a fresh virtual environment (no system
site-packages), every shared object in the installed package must find its libraries inside the
package or among the system libraries the manylinux policy allows (so no build-time Debian
package is needed at run time); then a CPU pipeline runs from it, and `stoker --version` and
`stoker info` answer.

    python3 scripts/check_wheel.py dist/stoker-*.whl [--pip-args "..."] [--gpu]

--pip-args: extra arguments for the install (e.g. "--no-index --find-links DIR" where there is
no package index). --gpu: also decode JPEGs with device="mixed" and check the batch is on the
GPU (a machine with a GPU)."""

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

GPU_PIPELINE = r"""
import io, numpy as np, stoker
from PIL import Image
from stoker import fn, types
buf = io.BytesIO()
Image.fromarray((np.arange(64 * 48 * 3) % 251).astype(np.uint8).reshape(48, 64, 3)).save(
    buf, "JPEG", quality=90)
data = [np.frombuffer(buf.getvalue(), np.uint8)] * 4
p = stoker.Pipeline(batch_size=4, num_threads=2, device_id=0)
with p:
    enc = fn.external_source(source=lambda: data, batch=True)
    p.set_outputs(fn.decoders.image(enc, device="mixed", output_type=types.RGB))
(out,) = p.run()
assert out.device == "gpu" and out.as_cpu().as_array().shape == (4, 48, 64, 3)
print("mixed decoding ok")
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


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("wheel")
    ap.add_argument("--pip-args", default="")
    ap.add_argument("--gpu", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as venv:
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
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
        stoker_cmd = os.path.join(venv, "bin", "stoker")
        subprocess.run([stoker_cmd, "--version"], **run)
        subprocess.run([stoker_cmd, "info"], **run)
        if args.gpu:
            subprocess.run([py, "-c", GPU_PIPELINE], **run)
    print("wheel ok:", os.path.basename(args.wheel))


if __name__ == "__main__":
    main()
