"""A model backend of another installed package, held to the Backend contract at every call.

:func:`lensbench.backends.providers.make_backend` wraps what a package's factory builds in
:class:`PluginBackend`. A call whose result is not a :class:`~lensbench.core.types.Completion`
(None, a plain string), whose ``text`` is None or not a string, whose ``reasoning`` /
``finish_reason`` are not strings or None, or whose ``usage`` is not a dict, is a server failure of
that request: a retryable :class:`~lensbench.core.errors.TransportError` (kind ``"malformed"``), so
the engine retries it and then records an ``error`` outcome (docs/protocol.md, general rules: a 200 reply with no
answer is a server failure, never scored). An exception that is not a TransportError is one too
(kind ``"other"``). An empty string is an answer, as from any server. Issue 30 item 5.
"""

from __future__ import annotations

from typing import Any

from lensbench.backends.base import Backend
from lensbench.core.errors import TransportError
from lensbench.core.types import Completion, Request

__all__ = ["PluginBackend", "check_completion"]


def check_completion(result: Any, prefix: str) -> Completion:
    """``result`` when it is a well-typed Completion; raises TransportError (retryable, ``malformed``)
    saying what model backend ``prefix`` returned instead."""
    where = f"model backend {prefix!r}"
    if not isinstance(result, Completion):
        raise TransportError(f"{where} returned {type(result).__name__}, not a Completion (a server failure)",
                             kind="malformed")
    if result.text is None:
        raise TransportError(f"{where} returned no text (text=None; a server failure)", kind="malformed")
    if not isinstance(result.text, str):
        raise TransportError(f"{where} returned text of type {type(result.text).__name__}, not str (a server "
                             "failure)", kind="malformed")
    for name in ("reasoning", "finish_reason", "served_model"):
        v = getattr(result, name)
        if v is not None and not isinstance(v, str):
            raise TransportError(f"{where} returned {name} of type {type(v).__name__}, not str (a server failure)",
                                 kind="malformed")
    if not isinstance(result.usage, dict):
        raise TransportError(f"{where} returned usage of type {type(result.usage).__name__}, not a dict (a server "
                             "failure)", kind="malformed")
    return result


class PluginBackend(Backend):
    """``inner`` (a package's backend for spec prefix ``prefix``) with every result checked by
    :func:`check_completion` and any other exception of its calls turned into a retryable
    TransportError. Fingerprint, display name, batch size, the summaries and any other attribute are
    ``inner``'s."""

    def __init__(self, inner: Backend, prefix: str):
        self.inner, self.prefix = inner, prefix
        self.fingerprint = inner.fingerprint
        self.display_name = inner.display_name
        self.batch_size = inner.batch_size

    def __getattr__(self, name: str) -> Any:
        """Any other attribute is ``inner``'s (its settings, its answer ...)."""
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def _failure(self, exc: Exception) -> TransportError:
        return TransportError(f"model backend {self.prefix!r} raised {type(exc).__name__}: {exc}", kind="other")

    async def generate(self, request: Request) -> Completion:
        """``inner.generate(request)``, checked. Raises TransportError."""
        try:
            result = await self.inner.generate(request)
        except TransportError:
            raise
        except Exception as exc:  # noqa: BLE001 - another package's failure is a failed call
            raise self._failure(exc) from None
        return check_completion(result, self.prefix)

    async def generate_batch(self, requests: list[Request]) -> list[Completion | TransportError]:
        """``inner.generate_batch(requests)``, each result checked (a bad one becomes its TransportError;
        a result list of the wrong length fails the batch)."""
        try:
            results = await self.inner.generate_batch(requests)
        except TransportError:
            raise
        except Exception as exc:  # noqa: BLE001 - another package's failure is a failed call
            raise self._failure(exc) from None
        if not isinstance(results, list) or len(results) != len(requests):
            raise TransportError(f"model backend {self.prefix!r} returned {type(results).__name__} for a batch of "
                                 f"{len(requests)}, not one result per request", kind="malformed")
        out: list[Completion | TransportError] = []
        for r in results:
            try:
                out.append(r if isinstance(r, TransportError) else check_completion(r, self.prefix))
            except TransportError as exc:
                out.append(exc)
        return out

    def prefetch(self, request: Request) -> None:
        """``inner.prefetch`` (a failure there is left to the call itself)."""
        try:
            self.inner.prefetch(request)
        except Exception:  # noqa: BLE001,S110 - preparing ahead is optional; the call reports its own failure
            pass

    def media_summary(self) -> dict | None:
        """``inner``'s."""
        return self.inner.media_summary()

    def endpoint_summary(self) -> dict | None:
        """``inner``'s."""
        return self.inner.endpoint_summary()

    async def aclose(self) -> None:
        """``inner``'s."""
        await self.inner.aclose()
