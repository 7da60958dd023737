"""What a user's data or a user's keyboard must never do to the process: pipelines dropped without
close() free their threads at once; Ctrl-C interrupts a waiting run() promptly; a container
file that shrinks under a running pipeline, a .npy with too many dimensions, or a PNG whose
header promises more than its bytes hold give clear errors instead of killing the process or
allocating what the input does not justify. Crash cases run in a subprocess."""

import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import stoker
from stoker import fn


def _threads():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("Threads:"))


def _stoker_threads():
    """stoker names its threads "stoker-..."; other libraries' threads (CUDA's, torch's, a pool
    of an earlier test winding down) come and go on their own schedule."""
    names = []
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                names.append(f.read().strip())
        except FileNotFoundError:  # the thread ended while we looked
            pass
    return sum(n.startswith("stoker") for n in names)


# A parent that ignores SIGINT (a background job of a non-interactive shell) passes that on,
# and Python then never raises KeyboardInterrupt: the children take Python's own handler.
SIGINT_DEFAULT = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"


def _run_script(code, timeout=60):
    return subprocess.run([sys.executable, "-c", SIGINT_DEFAULT + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=timeout)


def test_tfrecord_module_is_an_attribute_of_the_package():
    import importlib
    pkg = importlib.reload(stoker)
    assert pkg.tfrecord.FixedLenFeature([1], pkg.tfrecord.int64, -1).shape == [1]


def test_dropping_a_pipeline_frees_its_threads_without_the_garbage_collector(jpeg_folder):
    import gc
    gc.collect()
    gc.disable()
    try:
        baseline, named = _threads(), _stoker_threads()
        for k in range(30):
            @stoker.pipeline_def(batch_size=4, num_threads=3, seed=k)
            def pipe_def():
                jpegs, labels = fn.readers.file(file_root=jpeg_folder, random_shuffle=True)
                return fn.resize(fn.decoders.image(jpegs), size=(16, 16)), labels
            pipe = pipe_def()
            pipe.run()
            assert _stoker_threads() > named
            del pipe
            assert _stoker_threads() == named, f"pipeline {k}: threads left running after del"
            # Unnamed threads a pipeline started (a decoder library's) must end with it too; an
            # earlier test's threads may still be ending, so fewer than before is fine.
            assert _threads() <= baseline, f"pipeline {k}: threads left running after del"
        with pytest.raises(NameError):
            pipe  # noqa: B018
    finally:
        gc.enable()


def test_a_value_outliving_its_pipeline_says_so():
    pipe = stoker.Pipeline(batch_size=1)
    with pipe:
        value = fn.random.uniform()
    del pipe
    with pytest.raises(RuntimeError, match="the pipeline this value belongs to no longer exists"):
        value.gpu()


_SLOW_PIPELINE = """
import os, signal, sys, threading, time
import numpy as np
import stoker
from stoker import fn
big = np.random.default_rng(0).integers(0, 255, (700, 700, 3), dtype=np.uint8)
pipe = stoker.Pipeline(batch_size=64, num_threads=1, seed=0)
with pipe:
    images = fn.external_source(lambda: [big] * 64, layout="HWC")
    pipe.set_outputs(fn.gaussian_blur(images, sigma=25))
pipe.build()
"""


def test_ctrl_c_interrupts_a_waiting_run_and_the_process_exits_promptly():
    done = _run_script(_SLOW_PIPELINE + """
t0 = time.monotonic()
threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try:
    pipe.run()
    print("no interrupt", time.monotonic() - t0)
except KeyboardInterrupt:
    print("interrupted after", round(time.monotonic() - t0, 3), flush=True)
sys.stdout.flush()
os.environ["T_EXIT"] = str(time.monotonic())
""", timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    seconds = float(done.stdout.split("interrupted after")[1])
    assert 0.45 < seconds < 0.9, done.stdout


def test_process_exits_promptly_while_a_batch_is_being_made():
    t0 = time.monotonic()
    done = _run_script(_SLOW_PIPELINE + """
t = time.monotonic()
import threading
threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
pipe.run()
""", timeout=120)
    total = time.monotonic() - t0
    assert "KeyboardInterrupt" in done.stderr and done.returncode != 0
    # Start-up and the first images are a second or two; the rest of the batch (tens of
    # seconds on one thread) is not waited for.
    assert total < 10, total


def _tfrecords(tmp_path, n=40):
    from stoker.tools.convert import write_shard
    path = str(tmp_path / "data.tfrecord")
    write_shard("tfrecord", path, [(bytes([i]) * 5000, i, "jpg") for i in range(n)])
    return path


@pytest.mark.parametrize("on_error", ["raise", "skip"])
@pytest.mark.parametrize("mmap", [True, False])
def test_a_container_file_that_shrinks_under_the_pipeline_is_an_error(tmp_path, on_error, mmap):
    path = _tfrecords(tmp_path)
    done = _run_script(f"""
import os
import stoker
from stoker import fn, tfrecord
pipe = stoker.Pipeline(batch_size=4, num_threads=1, seed=0, on_error={on_error!r})
with pipe:
    out = fn.readers.tfrecord(path={path!r}, index_path={path + '.idx'!r},
                              dont_use_mmap={not mmap},
                              features={{"image/encoded": tfrecord.FixedLenFeature((), tfrecord.string, "")}})
    pipe.set_outputs(out["image/encoded"])
pipe.build()
os.truncate({path!r}, 3000)  # a dataset rewritten under the running job
try:
    for _ in range(12):
        pipe.run()
    print("ran on")
except Exception as e:
    print("ERROR", type(e).__name__, e)
""")
    assert done.returncode == 0, f"the process died ({done.returncode}): {done.stderr[-1500:]}"
    assert "ERROR" in done.stdout, done.stdout
    assert "data.tfrecord" in done.stdout and "offset" in done.stdout, done.stdout


def _npy_with_dims(path, ndim):
    header = "{'descr': '<u1', 'fortran_order': False, 'shape': (%s), }" % (
        "1, " * ndim)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + b"\x07")


@pytest.mark.parametrize("ndim", [65, 129, 300])
def test_npy_with_more_dimensions_than_numpy_allows_is_refused_at_read_time(tmp_path, ndim):
    _npy_with_dims(tmp_path / "deep.npy", ndim)
    done = _run_script(f"""
import stoker
from stoker import fn
pipe = stoker.Pipeline(batch_size=1, num_threads=1, seed=0)
with pipe:
    pipe.set_outputs(fn.readers.numpy(file_root={str(tmp_path)!r}))
try:
    (b,) = pipe.run()
    print("converted", b.as_array().shape)
except ValueError as e:
    print("ERROR", e)
""")
    assert done.returncode == 0, f"the process died ({done.returncode}): {done.stderr[-1500:]}"
    assert "ERROR" in done.stdout and "deep.npy" in done.stdout, done.stdout
    assert f"declares {ndim} dimensions; at most 64" in done.stdout


def test_npy_with_64_dimensions_is_read(tmp_path):
    _npy_with_dims(tmp_path / "a.npy", 64)
    pipe = stoker.Pipeline(batch_size=1, num_threads=1, seed=0)
    with pipe:
        pipe.set_outputs(fn.readers.numpy(file_root=str(tmp_path)))
    (b,) = pipe.run()
    assert b[0].numpy().shape == (1,) * 64 and b[0].numpy().ravel()[0] == 7


def test_reshape_refuses_more_than_64_dimensions():
    pipe = stoker.Pipeline(batch_size=1, num_threads=1, seed=0)
    with pipe:
        pipe.set_outputs(fn.reshape(fn.random.uniform(shape=[1]), shape=[1] * 65))
    with pytest.raises(ValueError, match="reshape: 65 dimensions asked for; at most 64"):
        pipe.run()


def _png_header_only(width, height):
    import struct
    import zlib

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", b"\x78\x9c\x03\x00")[:30]


@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_a_truncated_png_promising_a_huge_image_allocates_nothing(dtype):
    blob = _png_header_only(11000, 11000)
    assert len(blob) < 80
    pipe = stoker.Pipeline(batch_size=1, num_threads=1, seed=0)
    with pipe:
        data = fn.external_source(lambda: [np.frombuffer(blob, np.uint8)])
        pipe.set_outputs(fn.decoders.image(data, dtype=getattr(stoker.types, dtype.upper())))
    with pytest.raises(ValueError, match=r"truncated PNG: \d+ bytes cannot hold the 11000x11000 "
                                         r"image the header declares"):
        pipe.run()
    host = pipe.memory_stats()["host"]
    assert host["peak_bytes_in_use"] < 16 << 20, host


def test_a_failed_batch_allocation_names_the_sample_and_its_file(tmp_path):
    from PIL import Image
    (tmp_path / "c").mkdir()
    for name, size in (("small.png", 8), ("large.png", 900)):
        Image.fromarray(np.zeros((size, size, 3), np.uint8)).save(tmp_path / "c" / name)
    pipe = stoker.Pipeline(batch_size=2, num_threads=1, seed=0, host_memory_budget=1 << 20)
    with pipe:
        pngs, _ = fn.readers.file(file_root=str(tmp_path), file_filters=["*.png"])
        pipe.set_outputs(fn.decoders.image(pngs))
    with pytest.raises(RuntimeError, match=r"decoders\.image.*memory budget.*the largest sample is "
                                           r"sample 0 \(source '.*large\.png'\), "
                                           r"2430000 elements"):
        pipe.run()


def test_close_from_another_thread_wakes_a_waiting_run():
    done = _run_script("""
import threading, time
import numpy as np
from stoker import fn, pipeline_def
def slow(a):
    time.sleep(0.5)
    return a
@pipeline_def(batch_size=4, num_threads=1, device_id=None)
def p():
    x = fn.external_source(lambda: [np.ones(3, np.uint8)] * 4, batch=True)
    return fn.python_function(x, function=slow)
pipe = p()
pipe.build()
def runner():
    try:
        pipe.run()
        print("ran")
    except Exception as e:
        print("run raised", type(e).__name__, e, flush=True)
t = threading.Thread(target=runner)
t.start()
time.sleep(0.7)
t0 = time.monotonic()
pipe.close()
t.join(10)
print("alive" if t.is_alive() else f"joined after {time.monotonic() - t0:.2f}")
""", timeout=60)
    assert done.returncode == 0, done.stderr[-1500:]
    assert "run raised RuntimeError the pipeline was closed" in done.stdout, done.stdout
    assert "joined after" in done.stdout, done.stdout
