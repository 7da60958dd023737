"""A GPU this build has no kernels for is named at build(), with the architectures compiled --
not a CUDA error mid-epoch. Which branch runs depends on the build: a wheel (or `make build`,
native) covers the GPU and the pipeline runs; a build for another architecture
(-DSTOKER_CUDA_ARCHITECTURES=80-real on a Hopper) must refuse it with the message."""

import subprocess
import sys

import numpy as np
import pytest

import stoker
from stoker import _stoker, fn

def covers(archs, major, minor):
    """CUDA's compatibility rules for CMake's entries: SASS ("86-real", or the SASS half of
    "86") runs on the same major with an equal or higher minor; PTX ("120", "120-virtual") is
    compiled by the driver for any equal or higher compute capability."""
    for a in archs:
        if a in ("native", "all", "all-major"):
            return True
        base, _, kind = a.partition("-")
        am, an = int(base[:-1]), int(base[-1])
        if kind != "virtual" and am == major and an <= minor:
            return True
        if kind != "real" and (am, an) <= (major, minor):
            return True
    return False


def test_covers_follows_cudas_rules():
    wheel = "75-real 80-real 86-real 89-real 90-real 100-real 120".split()
    assert covers(wheel, 9, 0) and covers(wheel, 8, 7) and covers(wheel, 12, 1)
    assert covers(wheel, 13, 0)  # PTX of sm_120
    assert not covers(["80-real"], 9, 0) and covers(["80-real"], 8, 6)
    assert not covers(["86-real"], 8, 0) and not covers(["90-real"], 10, 0)
    assert covers(["80-virtual"], 9, 0) and not covers(["90-virtual"], 8, 9)


def _gpu_pipeline():
    @stoker.pipeline_def(batch_size=2, num_threads=1, device_id=0)
    def pipe():
        x = fn.external_source(source=lambda: [np.ones((4, 4, 3), np.uint8)] * 2, batch=True)
        return fn.flip(x.gpu(), horizontal=1)
    return pipe()


@pytest.mark.skipif(not _stoker.cuda_available(), reason="needs a GPU")
def test_a_gpu_without_kernels_is_refused_at_build_naming_it_and_the_list():
    info = _stoker.build_info()
    archs = info["cuda_architectures"].split()
    d = info["devices"][0]
    major, minor = (int(v) for v in d["compute_capability"].split("."))
    expected = covers(archs, major, minor)
    assert d["kernels"] is expected, (archs, d["compute_capability"])
    text = subprocess.run([sys.executable, "-m", "stoker", "info"], capture_output=True,
                          text=True, timeout=120).stdout
    assert ("NO KERNELS FOR THIS GPU" in text) is not expected, text
    p = _gpu_pipeline()
    if expected:
        p.build()
        out = np.asarray(p.run()[0].as_cpu()[0])
        assert out.shape == (4, 4, 3) and (out == 1).all()
        return
    with pytest.raises(RuntimeError) as e:
        p.build()
    msg = str(e.value)
    assert f"GPU 0 ({d['name']}, compute capability {major}.{minor}) cannot run this build" in msg
    assert f"compiled for the CUDA architectures {info['cuda_architectures']}" in msg
    assert f"-DSTOKER_CUDA_ARCHITECTURES={major}{minor}" in msg
