"""The model backend contract and the registry of backend spec prefixes.

A model is named by a spec ``PREFIX[:ARG]`` (``openai:gpt-4o``, ``replay:results.json``,
``random``, ``constant:Yes``). Every backend implements one small async interface.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from lensbench.core.errors import TransportError
from lensbench.core.replay import ReplayFormat
from lensbench.core.types import Completion, Request

__all__ = ["Backend", "BackendConfig"]


#: seconds a request's timeout grows per MB of its body: sending is part of the timed call, and a request
#: with large images is slower to send, decode and prefill (``benchmarks/timeout_rebuy.py``; README "Timeouts")
TIMEOUT_S_PER_MB = 10.0


def request_timeout(timeout_s: float, body_bytes: int) -> float:
    """The timeout (seconds) of one HTTP call: ``timeout_s`` plus :data:`TIMEOUT_S_PER_MB` per MB (10^6 bytes)
    of its body, the allowance rounded to 0.1 s (a text request keeps ``timeout_s`` as given; a 1.3 MB
    request body with one 1 MB image gets 13.3 s more). A request that is merely slow is then not sent
    (and paid) twice: a provider finishes the first one even after the client gave up on it."""
    return timeout_s + round(TIMEOUT_S_PER_MB * max(0, body_bytes) / 1e6, 1)


class BackendConfig(BaseModel):
    """Settings shared by backends (from CLI flags); each backend reads what it needs.

    ``base_urls``: endpoints to spread requests over; ``api_key_env``: name of the environment
    variable holding the key (the key itself is never stored); ``timeout_s``: per-request
    timeout in seconds (connect + send + reply; a request's body adds :func:`request_timeout`'s
    allowance); ``image_format``/``image_max_side``: how images are sent;
    ``replay_model``: which model's replies to take from a multi-model replay file;
    ``seed``: for the random baseline; ``answer_space``: benchmark default answer space;
    ``replay_formats``: the benchmark's own recorded-reply formats (:class:`lensbench.core.replay.ReplayFormat`).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    base_urls: list[str] = Field(default_factory=list)
    api_key_env: str = "OPENAI_API_KEY"
    timeout_s: float = Field(default=120.0, gt=0)
    image_format: str = "auto"
    image_max_side: int | None = None
    replay_model: str | None = None
    seed: int = 0
    answer_space: list[str] | None = None
    replay_formats: tuple[ReplayFormat, ...] = ()
    extra: dict[str, Any] = Field(default_factory=dict)


class Backend(ABC):
    """An async model backend.

    ``fingerprint`` identifies the model and every setting that changes what it is sent (it
    enters each request's key). :meth:`generate` returns a :class:`Completion` or raises
    :class:`~lensbench.core.errors.TransportError` (``retryable`` set) for a failed call.
    """

    fingerprint: str = ""
    display_name: str = ""
    #: requests the backend generates together in one :meth:`generate_batch` call; > 1 makes the
    #: engine send it length-grouped batches (:mod:`lensbench.runtime.batching`) instead of singles.
    batch_size: int = 1
    #: replies come from a file (replay): a failure is part of the file, never a sign that an endpoint is
    #: down, so such failures do not count toward the engine's ``abort_after``.
    recorded: bool = False

    @abstractmethod
    async def generate(self, request: Request) -> Completion:
        """Send one request. Raises TransportError on failure (never returns an error as text)."""

    async def generate_batch(self, requests: list[Request]) -> list[Completion | TransportError]:
        """Generate ``requests`` together; one result per request, in order: a Completion, or the
        TransportError that request failed with (``retryable`` set). Raising TransportError fails the
        whole batch. Default: :meth:`generate` one after another; a refused connection ends the batch
        (the endpoint is not listening: the requests after it get the same error without being sent)."""
        out: list[Completion | TransportError] = []
        for r in requests:
            try:
                out.append(await self.generate(r))
            except TransportError as exc:
                out.append(exc)
                if exc.kind == "refused":
                    return out + [exc] * (len(requests) - len(out))
        return out

    def check_request(self, request: Request) -> None:
        """Refuse a request this backend can never answer (raises ConfigError naming why), before anything of
        its batch is sent (the engine calls it for every request it is about to send). Default: nothing
        (the replay backend refuses a request of another input mode than its recorded reply's)."""

    def prefetch(self, request: Request) -> None:
        """Start preparing ``request``'s media ahead of sending it (default: nothing)."""

    def media_summary(self) -> dict | None:
        """What was done to the images sent (passed through / re-encoded), if the backend sends images."""
        return None

    def endpoint_summary(self) -> dict | None:
        """How requests were spread over endpoints (served / failed / set aside per endpoint), if any."""
        return None

    async def aclose(self) -> None:
        """Release connections (default: nothing)."""
