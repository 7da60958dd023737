import os
import shutil

import pytest

SHARED = os.environ.get("STOKER_SHARED_DATA") or os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "shared", "data")


@pytest.fixture
def address_space_cap():
    """For tests whose subprocess caps its address space (RLIMIT_AS): the sanitizers reserve
    terabytes of it for shadow memory, so no such cap holds under `make test-sanitize` or
    `make test-tsan`."""
    preload = os.environ.get("LD_PRELOAD", "")
    if "libasan" in preload or "libtsan" in preload:
        pytest.skip("an RLIMIT_AS cap cannot hold under a sanitizer (its shadow memory)")


@pytest.fixture
def dali():
    """NVIDIA DALI 2.4, the peer compared with (scripts/setup installs it); skipped where it is
    absent or cannot load: its libraries do not load beside the sanitizer build's preloaded
    runtime (`make test-sanitize`), though `import nvidia.dali` itself succeeds there."""
    mod = pytest.importorskip("nvidia.dali", reason="NVIDIA DALI 2.4 (scripts/setup) compares")
    if "libasan" in os.environ.get("LD_PRELOAD", ""):
        pytest.skip("DALI does not load in the sanitizer build")
    return mod


@pytest.fixture(scope="session")
def shared_data():
    if not os.path.isdir(SHARED):
        pytest.skip(f"shared test data not found at {SHARED} (set STOKER_SHARED_DATA)")
    return os.path.abspath(SHARED)


@pytest.fixture(scope="session")
def djpeg():
    path = shutil.which("djpeg")
    if path is None:
        pytest.skip("djpeg (libjpeg-turbo-progs) is not installed: run scripts/setup")
    return path


@pytest.fixture(scope="session")
def jpeg_folder(tmp_path_factory):
    """24 synthetic JPEGs in 3 class folders (generated once per session)."""
    pytest.importorskip("PIL", reason="Pillow is needed to write the test JPEGs")
    from stoker.datasets import make_jpeg_folder

    root = tmp_path_factory.mktemp("jpegs")
    make_jpeg_folder(str(root), num_images=24, num_classes=3, seed=5)
    return str(root)


@pytest.fixture(scope="session")
def ten_files(tmp_path_factory):
    """10 tiny files, each in its own class folder: a sample's label is its index (for epoch and
    sharding tests; the bytes are never decoded)."""
    root = tmp_path_factory.mktemp("ten")
    for i in range(10):
        d = root / f"c{i}"
        d.mkdir()
        (d / "x.jpg").write_bytes(bytes([i]) * 3)
    return str(root)


def pytest_configure(config):
    # Subprocesses (demo, shutdown tests) must import the same stoker as this process, whatever
    # their working directory.
    import stoker

    root = os.path.dirname(os.path.dirname(os.path.abspath(stoker.__file__)))
    parts = [root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join(parts)
