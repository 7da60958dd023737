"""Example 2: feeding a pipeline from Python with fn.external_source, and per-sample arguments.

Batches come from a generator of numpy arrays; each sample is flipped horizontally or not
according to another external source; the epoch ends when the generator does.
"""

import numpy as np

import stoker
from stoker import fn, types


def batches(n_batches=3, batch_size=4, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(n_batches):
        yield [rng.integers(0, 256, (rng.integers(20, 40), 32, 3), dtype=np.uint8)
               for _ in range(batch_size)]


def main():
    pipe = stoker.Pipeline(batch_size=4, num_threads=2, seed=1)
    with pipe:
        images = fn.external_source(batches(), layout="HWC", dtype=types.UINT8)
        flip = fn.external_source(lambda: [np.int32(i % 2) for i in range(4)])
        flipped = fn.flip(images, horizontal=flip)
        resized = fn.resize(flipped, size=(16, 16))
        pipe.set_outputs(images, flipped, resized)
    for step, (originals, flipped, resized) in enumerate(pipe):
        print(f"batch {step}: input shapes {originals.shape}, output {resized.as_array().shape}")
        for i in range(len(originals)):
            src = np.asarray(originals[i])
            expect = src[:, ::-1] if i % 2 else src  # odd samples were flipped
            np.testing.assert_array_equal(np.asarray(flipped[i]), expect)
    print("done")


if __name__ == "__main__":
    main()
