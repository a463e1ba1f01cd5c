"""Version of the package (one place)."""

__version__ = "0.2.0"
