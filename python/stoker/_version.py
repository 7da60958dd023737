"""stoker's version: the one place it is written (the package, `stoker --version`, the wheel's
metadata through pyproject.toml, and CMake's project version read it)."""

__version__ = "0.1.0"
