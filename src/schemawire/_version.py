"""The package version: the one place it is written (hatch reads it from here)."""

__all__ = ["__version__"]

__version__ = "0.1.0"
