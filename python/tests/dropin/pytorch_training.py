# DALI's PyTorch plugin example (docs/examples/frameworks/pytorch/pytorch-basic_example.ipynb):
# a training pipeline fed to a model through DALIGenericIterator, then DALI's ResNet-50
# example's validation pipeline (its epochs run as plain `for` loops: no reset() between them,
# as in DALI's training scripts). Written for nvidia.dali; the data folder and device come from
# the environment.
import os

import numpy as np
import torch

from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali.plugin.pytorch import DALIClassificationIterator, DALIGenericIterator
from nvidia.dali.plugin.pytorch import LastBatchPolicy

images_dir = os.path.join(os.environ["DROPIN_DATA"], "photos", "dali-imagenet-classes")
device_id = int(os.environ["DROPIN_DEVICE_ID"]) if os.environ.get("DROPIN_DEVICE_ID") else None
decoder_device = "mixed" if device_id is not None else "cpu"
RESULTS, COMPARE = {}, {}


@pipeline_def(num_threads=4, device_id=device_id)
def get_dali_pipeline():
    images, labels = fn.readers.file(file_root=images_dir, random_shuffle=True, name="Reader")
    # decode data on the GPU
    images = fn.decoders.image_random_crop(images, device=decoder_device,
                                           output_type=types.RGB)
    # the rest of processing happens on the GPU as well
    images = fn.resize(images, resize_x=256, resize_y=256)
    images = fn.crop_mirror_normalize(images, crop_h=224, crop_w=224,
                                      mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                      std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
                                      mirror=fn.random.coin_flip())
    return images, labels


torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.AdaptiveAvgPool2d(4), torch.nn.Flatten(),
                            torch.nn.Linear(48, 1000))
if device_id is not None:
    model = model.cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
train_data = DALIGenericIterator([get_dali_pipeline(batch_size=16)], ["data", "label"],
                                 reader_name="Reader")
steps = []
for epoch in range(2):
    for i, data in enumerate(train_data):
        x, y = data[0]["data"], data[0]["label"]
        loss = torch.nn.functional.cross_entropy(model(x), y.squeeze(-1).long().to(x.device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        steps.append((epoch, tuple(x.shape), str(x.dtype), tuple(y.shape), str(y.dtype)))
RESULTS["train_steps"] = steps
RESULTS["train_len"] = len(train_data)


@pipeline_def(num_threads=2, device_id=device_id)
def create_dali_pipeline(data_dir, crop, size):
    images, labels = fn.readers.file(file_root=data_dir, shard_id=0, num_shards=1,
                                     random_shuffle=False, pad_last_batch=True, name="Reader")
    images = fn.decoders.image(images, device=decoder_device, output_type=types.RGB)
    images = fn.resize(images, resize_shorter=size, interp_type=types.INTERP_TRIANGULAR,
                       antialias=False)
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                      crop=(crop, crop),
                                      mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                      std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
                                      mirror=False)
    labels = labels.gpu() if device_id is not None else labels
    return images, labels


pipe = create_dali_pipeline(batch_size=10, data_dir=images_dir, crop=64, size=73, seed=12)
val_loader = DALIClassificationIterator(pipe, reader_name="Reader",
                                        last_batch_policy=LastBatchPolicy.PARTIAL,
                                        auto_reset=True)
epochs = []
for epoch in range(3):
    labels, images = [], []
    for i, data in enumerate(val_loader):
        labels.append(data[0]["label"].cpu().numpy())
        images.append(data[0]["data"].cpu().numpy())
    epochs.append((labels, images))
RESULTS["val_labels"] = [e[0] for e in epochs]
RESULTS["val_images"] = [e[1] for e in epochs]
COMPARE["val_images"] = ("mean_abs", 0.01)  # resize: DALI's tabulated filters (1/255 ~ 0.017)
RESULTS["val_len"] = len(val_loader)
