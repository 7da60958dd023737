"""DALI's ``nvidia.dali.plugin.jax.fn``: jax_function (stoker.plugins.jax_function)."""

from stoker.plugins.jax_function import jax_function

__all__ = ["jax_function"]
