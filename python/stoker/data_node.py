"""DALI's ``nvidia.dali.data_node``: DataNode, the values of a pipeline definition."""

from stoker.node import DataNode

__all__ = ["DataNode"]
