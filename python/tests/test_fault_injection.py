"""Fault injection over every reader: the file a sample comes from is deleted, truncated, replaced,
made unreadable or turned into a FIFO (a source that never delivers), with mmap and with pread,
under on_error "raise" and "skip", after build and after the first run (fault_cases.py, one
process per reader). Whatever happens must be one of: the pipeline runs on (the bytes were
already read, or an open descriptor still reads them), a counted skip, or an error naming the
file -- never a signal, a hang, or a sample delivered twice within an epoch."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from stoker import _stoker

HERE = os.path.dirname(os.path.abspath(__file__))
READERS = ["file", "tfrecord", "mxnet", "webdataset", "numpy", "caffe", "caffe2", "coco",
           "video", "fits"]
EPOCH = {"video": 9}  # sequences of three videos; the others: 12 samples
CASES = 5 * 2 * 2 * 2  # faults x mmap x on_error x when


def _video(tmp_path):
    given = os.environ.get("STOKER_TEST_VIDEOS")
    if given and os.path.exists(os.path.join(given, "h264.mp4")):
        return os.path.join(given, "h264.mp4")
    if shutil.which("ffmpeg") is None:
        pytest.skip("no test video: the ffmpeg tool is missing and STOKER_TEST_VIDEOS is unset")
    path = str(tmp_path / "v.mp4")
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
                    "testsrc2=size=64x48:rate=25:duration=1", "-c:v", "libx264", "-g", "8",
                    "-pix_fmt", "yuv420p", path], check=True)
    return path


@pytest.mark.parametrize("reader", READERS)
def test_a_damaged_file_gives_a_run_a_skip_or_an_error_naming_it(reader, tmp_path):
    args = []
    if reader in ("caffe", "caffe2"):
        pytest.importorskip("lmdb")
        if not _stoker.lmdb_available():
            pytest.skip("stoker was built without liblmdb")
    if reader == "fits":
        pytest.importorskip("astropy")
        if not _stoker.build_info().get("cfitsio"):
            pytest.skip("stoker was built without cfitsio")
    if reader == "video":
        if not _stoker.build_info().get("ffmpeg"):
            pytest.skip("stoker was built without FFmpeg")
        args = [_video(tmp_path)]
    pytest.importorskip("PIL")
    try:
        done = subprocess.run([sys.executable, os.path.join(HERE, "fault_cases.py"), reader, *args],
                              capture_output=True, text=True, timeout=240)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        started = [line for line in out.splitlines() if line.startswith("START")]
        pytest.fail(f"hang: no end within 240 s; the case running: {started[-1:]}")
    lines = done.stdout.splitlines()
    started = [line for line in lines if line.startswith("START")]
    cases = [json.loads(line[5:]) for line in lines if line.startswith("CASE")]
    assert done.returncode == 0, (f"the process died ({done.returncode}; 135: SIGBUS) in "
                                  f"{started[-1:]}: {done.stderr[-2000:]}")
    assert len(cases) == CASES, done.stderr[-2000:]

    epoch = EPOCH.get(reader, 12)
    problems = []
    for c in cases:
        name = f"{c['fault']} {'mmap' if c['mmap'] else 'pread'} {c['on_error']} {c['when']}"
        if c["status"] == "error":
            target = c["target"]
            # LMDB is named by its folder; the others by the file.
            if os.path.basename(target) not in c["error"] and \
                    os.path.dirname(target) not in c["error"]:
                problems.append(f"{name}: the error does not name {target}: {c['error']}")
        skipped = {m.group(1) for w in c["skipped"]
                   for m in [re.search(r"source '([^']*)'", w)] if m}
        if c["skipped"] and c["on_error"] != "skip":
            problems.append(f"{name}: skipped under on_error='raise'")
        # Within one epoch no sample twice: the first epoch's samples, less those skipped.
        first = c["sources"][:max(0, epoch - max(len(skipped), 1 if c["skipped"] else 0))]
        if len(first) != len(set(first)):
            problems.append(f"{name}: a sample delivered twice within an epoch: {first}")
    assert not problems, "\n".join(problems)
