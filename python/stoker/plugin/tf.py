"""DALI's ``nvidia.dali.plugin.tf``: DALIDataset (and its experimental inputs), implemented in
stoker.plugins.tf."""

from stoker.plugins.tf import *  # noqa: F401,F403
from stoker.plugins.tf import __all__  # noqa: F401
