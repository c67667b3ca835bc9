"""The package version, in a module of its own so that setup.cfg (``attr:``) and the code read
it without importing the rest of the package."""

__version__ = "1.0.0"
