"""DALI's two tutorials of the parallel external source ("Parallel External Source" and
"Parallel External Source - Fork", docs/examples/general/data_loading in DALI's repository),
their code cells run in order as a notebook runs them, with only the imports changed. The cells
that draw the images with matplotlib are replaced by a print of what they would draw. They run in
a fresh interpreter (as a notebook kernel: the main module has no file, so spawned workers do not
run the cells again), in a folder laid out as DALI's docs are ("../../data/images/" with its
file_list.txt), on the GPU where there is one and on the CPU here (STOKER_FORCE_CPU=1)."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from stoker import _stoker

PRINT_BATCH = '''
def digest(batch):
    import hashlib, numpy as np
    return [hashlib.sha1(np.ascontiguousarray(np.asarray(batch.as_cpu().at(i))).tobytes())
            .hexdigest() for i in range(len(batch))]
'''

# "Parallel External Source": cells 1-4, 6, 9-11 and 12 (display cells 5, 7, 8 and 12's
# drawing: printed instead).
TUTORIAL = '''
import numpy as np
from stoker import pipeline_def  # was: from nvidia.dali import pipeline_def
import stoker.fn as fn  # was: import nvidia.dali.fn as fn

batch_size = 4

class ExternalInputIterator:
    def __init__(self, batch_size):
        self.images_dir = "../../data/images/"
        self.batch_size = batch_size
        with open(self.images_dir + "file_list.txt", 'r') as f:
            file_label = [line.rstrip().split(' ') for line in f if line != '']
            self.files, self.labels = zip(*file_label)

    def __iter__(self):
        self.i = 0
        # Only full batches
        self.n = (len(self.files) // self.batch_size) * self.batch_size
        return self

    def __next__(self):
        if self.i >= self.n:
            raise StopIteration()
        encoded_imgs, labels = [], []
        for _ in range(self.batch_size):
            jpeg_filename = self.files[self.i]
            label = self.labels[self.i]
            with open(self.images_dir + jpeg_filename, 'rb') as f:
                encoded_imgs.append(np.frombuffer(f.read(), dtype=np.uint8))
            labels.append(np.int32([label]))
            self.i += 1
        return encoded_imgs, labels

class ExternalInputCallable:
    def __init__(self, batch_size):
        self.images_dir = "../../data/images/"
        self.batch_size = batch_size
        with open(self.images_dir + "file_list.txt", 'r') as f:
            file_label = [line.rstrip().split(' ') for line in f if line != '']
            self.files, self.labels = zip(*file_label)
        self.full_iterations = len(self.files) // batch_size

    def __call__(self, sample_info):
        sample_idx = sample_info.idx_in_epoch
        if sample_info.iteration >= self.full_iterations:
            # Indicate end of the epoch
            raise StopIteration()
        jpeg_filename = self.files[sample_idx]
        label = np.int32([self.labels[sample_idx]])
        with open(self.images_dir + jpeg_filename, 'rb') as f:
            encoded_img = np.frombuffer(f.read(), dtype=np.uint8)
        return encoded_img, label

def my_callback(sample_info):
    return np.full((5, 5), sample_info.idx_in_epoch)

@pipeline_def(batch_size=batch_size, num_threads=2, device_id=0)
def iterable_pipeline():
    jpegs, labels = fn.external_source(source=ExternalInputIterator(batch_size), num_outputs=2)
    decode = fn.decoders.image(jpegs, device="mixed")
    return decode, labels


@pipeline_def(batch_size=batch_size, num_threads=2, device_id=0)
def callable_pipeline():
    jpegs, labels = fn.external_source(source=ExternalInputCallable(batch_size), num_outputs=2, batch=False)
    decode = fn.decoders.image(jpegs, device="mixed")
    return decode, labels

iter_pipe = iterable_pipeline()
iter_pipe.build()
iter_out = iter_pipe.run()

call_pipe = callable_pipeline()
call_pipe.build()
call_out = call_pipe.run()

external_input_callable_def = """
import numpy as np

class ExternalInputCallable:
    def __init__(self, batch_size):
        self.images_dir = "../../data/images/"
        self.batch_size = batch_size
        with open(self.images_dir + "file_list.txt", 'r') as f:
            file_label = [line.rstrip().split(' ') for line in f if line is not '']
            self.files, self.labels = zip(*file_label)
        self.n = len(self.files)

    def __call__(self, sample_info):
        jpeg_filename = self.files[sample_info.idx_in_epoch]
        label = np.int32([self.labels[sample_info.idx_in_epoch]])
        with open(self.images_dir + jpeg_filename, 'rb') as f:
            encoded_img = np.frombuffer(f.read(), dtype=np.uint8)
        return encoded_img, label
"""


with open("external_input_tmp_module.py", 'w') as f:
    f.write(external_input_callable_def)

import external_input_tmp_module

@pipeline_def(batch_size=batch_size, num_threads=2, device_id=0, py_num_workers=4, py_start_method='spawn')
def parallel_pipeline():
    jpegs, labels = fn.external_source(source=external_input_tmp_module.ExternalInputCallable(batch_size),
                                       num_outputs=2, batch=False,
                                       parallel=True)
    decode = fn.decoders.image(jpegs, device="mixed")
    return decode, labels

if __name__ == '__main__':
    parallel_pipe = parallel_pipeline()
    parallel_pipe.build()

if __name__ == '__main__':
    parallel_out = parallel_pipe.run()
    print(json.dumps({name: [digest(out[0]), [int(np.asarray(x)[0]) for x in out[1]]]
                      for name, out in [("iterable", iter_out), ("callable", call_out),
                                        ("parallel", parallel_out)]}))
'''

# "Parallel External Source - Fork": every code cell; display cells printed instead.
FORK_TUTORIAL = '''
import numpy as np
from stoker import pipeline_def  # was: from nvidia.dali import pipeline_def
import stoker.fn as fn  # was: import nvidia.dali.fn as fn

batch_size = 6

class ExternalInputCallable:
    def __init__(self, batch_size):
        self.images_dir = "../../data/images/"
        self.batch_size = batch_size
        with open(self.images_dir + "file_list.txt", 'r') as f:
            file_label = [line.rstrip().split(' ') for line in f if line is not '']
            self.files, self.labels = zip(*file_label)
        self.n = len(self.files)

    def __call__(self, sample_info):
        if sample_info.idx_in_epoch >= self.n:
            raise StopIteration()
        jpeg_filename = self.files[sample_info.idx_in_epoch]
        label = np.int32([self.labels[sample_info.idx_in_epoch]])
        with open(self.images_dir + jpeg_filename, 'rb') as f:
            encoded_img = np.frombuffer(f.read(), dtype=np.uint8)
        return encoded_img, label

@pipeline_def(batch_size=batch_size, num_threads=2, device_id=0, py_num_workers=4)
def training_pipeline():
    jpegs, labels = fn.external_source(source=ExternalInputCallable(batch_size),
                                       num_outputs=2, batch=False,
                                       parallel=True)
    decode = fn.decoders.image(jpegs, device="mixed")
    contrast = fn.random.uniform(range=(1, 3.0))
    enhance = fn.brightness_contrast(decode, contrast=contrast)
    return enhance, labels

@pipeline_def(batch_size=batch_size, num_threads=2, device_id=0, py_num_workers=4)
def validation_pipeline():
    jpegs, labels = fn.external_source(source=ExternalInputCallable(batch_size),
                                       num_outputs=2, batch=False,
                                       parallel=True)
    decode = fn.decoders.image(jpegs, device="mixed")
    enhance = fn.brightness_contrast(decode, contrast=1.5)
    return enhance, labels

train_pipe = training_pipeline()
val_pipe = validation_pipeline()

pipelines = [train_pipe, val_pipe]

for pipe in pipelines:
    pipe.start_py_workers()

for pipe in pipelines:
    pipe.build()

train_out = train_pipe.run()
val_out = val_pipe.run()

print(json.dumps({name: [[list(out[0].as_cpu().at(i).shape) for i in range(batch_size)],
                         [int(np.asarray(x)[0]) for x in out[1]]]
                  for name, out in [("train", train_out), ("val", val_out)]}))
'''


@pytest.fixture
def docs_folder(jpeg_folder, tmp_path):
    """DALI's docs layout: examples two levels below data/images (file_list.txt: name label)."""
    images = tmp_path / "data" / "images"
    images.mkdir(parents=True)
    lines = []
    for label, cls in enumerate(sorted(os.listdir(jpeg_folder))):
        for name in sorted(os.listdir(os.path.join(jpeg_folder, cls))):
            shutil.copy(os.path.join(jpeg_folder, cls, name), images / f"{cls}_{name}")
            lines.append(f"{cls}_{name} {label}")
    (images / "file_list.txt").write_text("\n".join(lines) + "\n")
    work = tmp_path / "examples" / "data_loading"
    work.mkdir(parents=True)
    return work, lines


def run_cells(code, cwd):
    env = dict(os.environ)
    if not _stoker.cuda_available():
        env["STOKER_FORCE_CPU"] = "1"  # their "mixed" decoders on the CPU
    source = "import json\n" + PRINT_BATCH + code
    done = subprocess.run([sys.executable, "-c", source], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_parallel_external_source_tutorial_runs(docs_folder):
    work, lines = docs_folder
    out = run_cells(TUTORIAL, work)
    labels = [int(line.split()[1]) for line in lines[:4]]
    # the iterable, the callable and the parallel callable give the same decoded batch
    assert out["iterable"] == out["callable"] == out["parallel"]
    assert out["parallel"][1] == labels
    assert len(set(out["parallel"][0])) == 4  # four different images


def test_the_fork_tutorial_runs(docs_folder):
    work, lines = docs_folder
    out = run_cells(FORK_TUTORIAL, work)
    labels = [int(line.split()[1]) for line in lines[:6]]
    assert out["train"][1] == out["val"][1] == labels
    assert out["train"][0] == out["val"][0]  # the same images, shaped HWC
    assert all(len(s) == 3 and s[2] == 3 for s in out["train"][0])
