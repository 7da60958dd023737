"""DALI's ``nvidia.dali.plugin.pytorch.fn``: torch_python_function."""

from stoker.python_function import torch_python_function

__all__ = ["torch_python_function"]
