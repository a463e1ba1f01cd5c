"""Benchmark modules; each registers itself with :func:`lensbench.benchmarks.base.register`."""

from __future__ import annotations

import importlib
import pkgutil

__all__ = ["load_all"]

_LOADED = False


def load_all() -> None:
    """Import every module of this package once, so that all benchmarks are registered."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    for info in pkgutil.iter_modules(__path__):
        if info.name != "base":
            importlib.import_module(f"{__name__}.{info.name}")
