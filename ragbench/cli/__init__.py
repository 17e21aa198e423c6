"""The `ragbench` command line, one module per command group; it calls the facade only."""

from ragbench.cli.main import main

__all__ = ["main"]
