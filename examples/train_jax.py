"""A JAX training loop fed by stoker through stoker.plugins.jax: a small classifier (no flax)
trained with plain SGD on images decoded, resized and normalised by the pipeline.

    python examples/train_jax.py --data /data/train
    python examples/train_jax.py --steps 30          # generated, learnable sample data
"""

import argparse
import os
import tempfile

import jax
import jax.numpy as jnp

import stoker
from stoker import fn, types
from stoker.plugins.jax import Iterator


@stoker.pipeline_def
def pipe_def(root, size):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, pad_last_batch=True,
                                    name="reader")
    images = fn.decoders.image_random_crop(jpegs)
    images = fn.resize(images, size=(size, size))
    images = fn.crop_mirror_normalize(images, mirror=fn.random.coin_flip(),
                                      mean=[128.0] * 3, std=[64.0] * 3, output_layout="HWC")
    return images, fn.cast(labels, dtype=types.INT32)


def loss_fn(params, x, y):
    h = jax.nn.relu(x.reshape(x.shape[0], -1) @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    logp = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))


@jax.jit
def train_step(params, x, y, lr):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads), loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data")
    ap.add_argument("--size", type=int, default=16)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--lr", type=float, default=0.05)
    args = ap.parse_args()
    root = args.data
    if root is None:
        from stoker.datasets import make_jpeg_folder
        root = os.path.join(tempfile.mkdtemp(), "train")
        make_jpeg_folder(root, num_images=32, num_classes=4, seed=3, separable=True)
    pipe = pipe_def(root, args.size, batch_size=args.batch_size, num_threads=2, seed=1)
    it = Iterator(pipe, ["images", "labels"], reader_name="reader", auto_reset=True)
    classes = len([d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))])
    k1, k2 = jax.random.split(jax.random.PRNGKey(0))
    features = args.size * args.size * 3
    params = {"w1": jax.random.normal(k1, (features, 64)) * features ** -0.5,
              "b1": jnp.zeros(64),
              "w2": jax.random.normal(k2, (64, classes)) * 64 ** -0.5,
              "b2": jnp.zeros(classes)}
    losses = []
    while len(losses) < args.steps:
        for step in it:  # auto_reset: the next epoch starts by itself
            params, loss = train_step(params, step["images"], step["labels"].reshape(-1),
                                      args.lr)
            losses.append(float(loss))
            print(f"step {len(losses)}: loss {losses[-1]:.4f}", flush=True)
            if len(losses) >= args.steps:
                break
    k = max(1, len(losses) // 4)
    print(f"loss {sum(losses[:k]) / k:.4f} (first {k} steps) -> {sum(losses[-k:]) / k:.4f} "
          f"(last {k})")


if __name__ == "__main__":
    main()
