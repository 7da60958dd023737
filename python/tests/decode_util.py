"""Helpers for the decoder tests: decode byte strings one at a time through a pipeline."""

import numpy as np

import stoker
from stoker import fn


def decode(blobs, output_type="ANY_DATA", **kwargs):
    """Decodes each blob alone; returns arrays, or the exception for blobs that fail."""
    out = []
    for blob in blobs:
        pipe = stoker.Pipeline(batch_size=1, num_threads=1, seed=0)
        with pipe:
            data = fn.external_source((lambda b: lambda: [np.frombuffer(b, np.uint8)])(blob))
            pipe.set_outputs(fn.decoders.image(data, output_type=output_type, **kwargs))
        try:
            out.append(pipe.run()[0][0].numpy().copy())
        except (ValueError, RuntimeError) as e:
            out.append(e)
    return out


def luma(rgb):
    """PIL's (ITU-R 601) gray: L = (19595 R + 38470 G + 7471 B + 32768) >> 16."""
    r, g, b = (rgb[..., k].astype(np.uint32) for k in range(3))
    return ((19595 * r + 38470 * g + 7471 * b + 32768) >> 16).astype(np.uint8)[..., None]
