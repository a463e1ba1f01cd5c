"""The model backend contract and the registry of backend spec prefixes.

A model is named by a spec ``PREFIX[:ARG]`` (``openai:gpt-4o``, ``replay:results.json``,
``random``, ``constant:Yes``). Every backend implements one small async interface.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from ..errors import ConfigError
from ..types import Completion, Request

__all__ = ["Backend", "BackendConfig", "register_backend", "make_backend", "BACKENDS"]


class BackendConfig(BaseModel):
    """Settings shared by backends (from CLI flags); each backend reads what it needs.

    ``base_urls``: endpoints to spread requests over; ``api_key_env``: name of the environment
    variable holding the key (the key itself is never stored); ``timeout_s``: per-request
    timeout in seconds; ``image_format``/``image_max_side``: how images are sent;
    ``replay_model``: which model's replies to take from a multi-model replay file;
    ``seed``: for the random baseline; ``answer_space``: benchmark default answer space.
    """

    base_urls: list[str] = Field(default_factory=list)
    api_key_env: str = "OPENAI_API_KEY"
    timeout_s: float = Field(default=120.0, gt=0)
    image_format: str = "jpeg"
    image_max_side: int | None = None
    replay_model: str | None = None
    seed: int = 0
    answer_space: list[str] | None = None
    extra: dict[str, Any] = Field(default_factory=dict)


class Backend(ABC):
    """An async model backend.

    ``fingerprint`` identifies the model and every setting that changes what it is sent (it
    enters each request's key). :meth:`generate` returns a :class:`Completion` or raises
    :class:`lensbench.errors.TransportError` (``retryable`` set) for a failed call.
    """

    fingerprint: str = ""
    display_name: str = ""

    @abstractmethod
    async def generate(self, request: Request) -> Completion:
        """Send one request. Raises TransportError on failure (never returns an error as text)."""

    async def aclose(self) -> None:
        """Release connections (default: nothing)."""


BACKENDS: dict[str, tuple[Callable[[str, BackendConfig], Backend], str]] = {}


def register_backend(prefix: str, help: str = ""):
    """Decorator registering ``factory(arg, config) -> Backend`` for specs ``prefix[:arg]``."""

    def deco(factory):
        BACKENDS[prefix] = (factory, help or (factory.__doc__ or "").strip().splitlines()[0])
        return factory

    return deco


def _load_builtin() -> None:
    from . import baselines, llamacpp, openai_compat, replay  # noqa: F401  (registration side effects)


def make_backend(spec: str, config: BackendConfig | None = None) -> Backend:
    """Build the backend for ``spec`` (``PREFIX[:ARG]``).

    Raises:
        ConfigError: unknown prefix (lists the known ones) or a bad argument.
    """
    _load_builtin()
    prefix, _, arg = spec.partition(":")
    if prefix not in BACKENDS:
        raise ConfigError(f"unknown model backend {prefix!r} in --model {spec!r}; known: {', '.join(sorted(BACKENDS))}")
    return BACKENDS[prefix][0](arg, config or BackendConfig())
