# DALI's PaddlePaddle example (docs/examples/frameworks/paddle/paddle-basic_example.ipynb), its
# cells in order, written for nvidia.dali: a legacy Pipeline subclass reading a Caffe LMDB, fed
# to DALIGenericIterator for several pipelines (one shard each), its labels checked; then a
# tiny Paddle model trained for a few steps on a deterministic pipeline over two epochs (plain
# `for` loops). The data folder and device come from the environment; N and BATCH_SIZE are
# smaller (62 images, CPU). On a machine without a GPU (or with Paddle's CPU build) the
# pipelines run on the CPU, and DALI's iterator, which builds paddle.CUDAPlace(device_id) and
# asks Paddle for the CUDA stream even for CPU pipelines, gets the CPU place and no stream for
# those two (the stand-ins below; stoker asks neither for CPU pipelines).
import os.path
import types as pytypes

import numpy as np
import paddle

test_data_root = os.environ["DROPIN_DATA"]
device_id = int(os.environ["DROPIN_DEVICE_ID"]) if os.environ.get("DROPIN_DEVICE_ID") else None
if not paddle.is_compiled_with_cuda():
    device_id = None
decoder_device, device = ("mixed", "gpu") if device_id is not None else ("cpu", "cpu")
if device_id is None:
    _cuda_place = paddle.CUDAPlace
    paddle.CUDAPlace = lambda d: paddle.CPUPlace() if d is None else _cuda_place(d)
    paddle.device.cuda.current_stream = lambda d=None: pytypes.SimpleNamespace(cuda_stream=None)
RESULTS, COMPARE = {}, {}

# Caffe LMDB
lmdb_folder = os.path.join(test_data_root, "containers", "caffe-lmdb")

N = 2  # number of pipelines (GPUs in the notebook)
BATCH_SIZE = 8  # batch size per pipeline
ITERATIONS = 32
IMAGE_SIZE = 3

from nvidia.dali.pipeline import Pipeline  # noqa: E402
import nvidia.dali.ops as ops  # noqa: E402
import nvidia.dali.types as types  # noqa: E402


class CaffeReadPipeline(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, num_gpus, shard_id):
        super(CaffeReadPipeline, self).__init__(batch_size, num_threads, device_id)

        self.input = ops.readers.Caffe(path=lmdb_folder,
                                       random_shuffle=True, shard_id=shard_id,
                                       num_shards=num_gpus)
        self.decode = ops.decoders.Image(device=decoder_device, output_type=types.RGB)
        self.resize = ops.Resize(device=device,
                                 interp_type=types.INTERP_LINEAR)
        self.cmn = ops.CropMirrorNormalize(device=device,
                                           dtype=types.FLOAT,
                                           crop=(227, 227),
                                           mean=[128., 128., 128.],
                                           std=[1., 1., 1.])
        self.uniform = ops.random.Uniform(range=(0.0, 1.0))
        self.resize_rng = ops.random.Uniform(range=(256, 480))

    def define_graph(self):
        inputs, labels = self.input(name="Reader")
        images = self.decode(inputs)
        images = self.resize(images, resize_shorter=self.resize_rng())
        output = self.cmn(images, crop_pos_x=self.uniform(),
                          crop_pos_y=self.uniform())
        return (output, labels)


from nvidia.dali.plugin.paddle import DALIGenericIterator  # noqa: E402

label_range = (0, 999)
pipes = [CaffeReadPipeline(batch_size=BATCH_SIZE, num_threads=2, device_id=device_id,
                           num_gpus=N, shard_id=k) for k in range(N)]
pipes[0].build()
dali_iter = DALIGenericIterator(pipes, ["data", "label"], pipes[0].epoch_size("Reader"))
steps, labels = [], []
for i, data in enumerate(dali_iter):
    if i >= ITERATIONS:
        break
    # Testing correctness of labels
    for d in data:
        label = d["label"]
        image = d["data"]
        ## labels need to be integers
        assert np.equal(np.mod(label, 1), 0).all()
        ## labels need to be in range pipe_name[2]
        assert (np.array(label) >= label_range[0]).all()
        assert (np.array(label) <= label_range[1]).all()
    steps.append([(type(d["data"]).__name__, d["data"].shape(), str(d["data"]._dtype()),
                   d["label"].shape(), str(d["label"]._dtype()), d["data"].lod())
                  for d in data])
    labels.append([np.array(d["label"]) for d in data])
print("OK")
RESULTS["ok"] = True
RESULTS["steps"] = steps  # 62 samples, 2 x 8 a step: 4 steps, every one of each pipeline
RESULTS["labels"] = labels
COMPARE["labels"] = "shape"  # random_shuffle: the shuffle's random stream is stoker's own
RESULTS["len"] = len(dali_iter)

# A few training steps of a tiny model on a deterministic pipeline, two epochs as plain `for`
# loops (the last batch PARTIAL), as DALI's Paddle training scripts run them.
from nvidia.dali import fn, pipeline_def  # noqa: E402
from nvidia.dali.plugin.paddle import DALIClassificationIterator, LastBatchPolicy  # noqa: E402


@pipeline_def(batch_size=BATCH_SIZE, num_threads=2, device_id=device_id, seed=12)
def train_pipeline():
    jpegs, labels = fn.readers.caffe(path=lmdb_folder, random_shuffle=False, name="Reader",
                                     pad_last_batch=True)
    images = fn.decoders.image(jpegs, device=decoder_device, output_type=types.RGB)
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, crop=(64, 64),
                                      mean=[128., 128., 128.], std=[64., 64., 64.])
    return images, labels


paddle.seed(0)
model = paddle.nn.Sequential(paddle.nn.AdaptiveAvgPool2D(4), paddle.nn.Flatten(),
                             paddle.nn.Linear(48, 1000))
optimizer = paddle.optimizer.SGD(learning_rate=0.01, parameters=model.parameters())
train_iter = DALIClassificationIterator(train_pipeline(), reader_name="Reader",
                                        last_batch_policy=LastBatchPolicy.PARTIAL)
losses, train_labels, first_images = [], [], []
for epoch in range(2):
    for i, data in enumerate(train_iter):
        x = paddle.to_tensor(data[0]["data"])
        y = paddle.to_tensor(data[0]["label"]).astype("int64")
        loss = paddle.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.clear_grad()
        losses.append(float(loss))
        train_labels.append(np.array(data[0]["label"]))
        if i == 0:
            first_images.append(np.array(data[0]["data"]))
RESULTS["train_steps"] = len(losses)  # 8 steps an epoch, the last of 6 samples
RESULTS["train_labels"] = train_labels
RESULTS["first_images"] = first_images
COMPARE["first_images"] = ("tolerance", 1e-5)  # crop_mirror_normalize's float arithmetic
RESULTS["losses"] = np.array(losses)
COMPARE["losses"] = ("tolerance", 1e-4)
