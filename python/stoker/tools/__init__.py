"""Command-line tools (python -m stoker.tools.<name>)."""
