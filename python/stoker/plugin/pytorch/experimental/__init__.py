"""DALI's ``nvidia.dali.plugin.pytorch.experimental``: the DALI proxy (``proxy``), which lets
the Dataset of a torch DataLoader's workers hand its samples to one stoker pipeline run by a
server thread in the main process."""

from . import proxy  # noqa: F401
