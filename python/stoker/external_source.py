"""DALI's ``nvidia.dali.external_source``: the external_source operator (function and class)."""

from stoker.fn import external_source
from stoker.ops import ExternalSource

__all__ = ["ExternalSource", "external_source"]
