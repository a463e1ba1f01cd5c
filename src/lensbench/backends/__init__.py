"""Model backends; see :mod:`lensbench.backends.base`."""

from .base import Backend, BackendConfig, make_backend, register_backend

__all__ = ["Backend", "BackendConfig", "make_backend", "register_backend"]
