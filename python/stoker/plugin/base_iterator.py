"""DALI's ``nvidia.dali.plugin.base_iterator``: LastBatchPolicy and the iterators' base."""

from stoker.plugins._iterator import BaseIterator, LastBatchPolicy

_DaliBaseIterator = BaseIterator

__all__ = ["LastBatchPolicy"]
