"""DALI's plugin paths (``nvidia.dali.plugin.pytorch``, ``.jax``, ``.tf``, ``.paddle``,
``.base_iterator``)
under stoker's name: ``from stoker.plugin.pytorch import DALIGenericIterator`` works as in DALI.
The implementations live in ``stoker.plugins`` (stoker's own names); these modules re-export
them under DALI's module and class names."""
