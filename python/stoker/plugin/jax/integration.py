"""DALI's ``nvidia.dali.plugin.jax.integration`` (no public names in DALI): its helpers
_to_jax_array (a batch or tensor as a jax.Array, through DLPack) and _jax_device."""

import jax.dlpack

from stoker.plugins.jax import _device as _jax_device  # noqa: F401


def _to_jax_array(tensor, copy):
    """`tensor` (a stoker batch or tensor) as a jax.Array through DLPack; copy=True copies it
    (DALI's signature; stoker's batches stay valid while the array holds them)."""
    array = jax.dlpack.from_dlpack(tensor)
    return array.copy() if copy else array
