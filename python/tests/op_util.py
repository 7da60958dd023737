"""Test helper: one operator over a batch fed from Python."""

import stoker
from stoker import fn


def run_op(op, images, layout="HWC", seed=0, **kwargs):
    """fn.<op>(external_source(images), **kwargs) for one iteration; the samples as arrays.
    `op` may be dotted (e.g. "random.normal")."""
    pipe = stoker.Pipeline(batch_size=len(images), num_threads=2, seed=seed)
    with pipe:
        x = fn.external_source(lambda: images, layout=layout)
        target = fn
        for part in op.split("."):
            target = getattr(target, part)
        pipe.set_outputs(target(x, **kwargs))
    (out,) = pipe.run()
    return [out[i].numpy() for i in range(len(images))]
