"""DALI's ``nvidia.dali.data_node``: DataNode, the values of a pipeline definition."""

from stoker.node import DataNode
from stoker.subscript import newaxis

__all__ = ["DataNode", "newaxis"]
