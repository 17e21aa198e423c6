"""ragbench: a workbench for grounded, cited answers over private documents."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ragbench")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0.0.0"
