"""Backends + store + engine opened and closed in one place.

Everything that sends requests (``lensbench run``, the papers' side pipelines such as GroundingME
negatives or IV-Bench synthesis) goes through a :class:`Session`: the backends are built from
their specs, the store is the run folder's ``responses.sqlite``, the engine sends what is not
stored yet, and closing releases connections and child processes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field
from rich.console import Console

from lensbench.backends.base import Backend, BackendConfig
from lensbench.backends.providers import make_backend
from lensbench.backends.reaper import sweep_server_tmpdirs
from lensbench.core.types import Request, StoredResponse
from lensbench.runtime.engine import Engine, RetryPolicy
from lensbench.runtime.store import RunStore

__all__ = ["EndpointSettings", "Session", "build_backend"]


class EndpointSettings(BaseModel):
    """How to reach one backend: ``spec`` (``PREFIX[:ARG]``), endpoints, the API-key variable name.

    ``base_urls``: OpenAI-compatible endpoints to spread requests over; ``api_key_env``: the
    NAME of the environment variable holding the key (the key itself is never stored).
    """

    spec: str
    base_urls: list[str] = Field(default_factory=list)
    api_key_env: str = "OPENAI_API_KEY"


def build_backend(endpoint: EndpointSettings, config: BackendConfig | None = None) -> Backend:
    """The backend for ``endpoint`` with the shared ``config`` (timeouts, image encoding, seed ...).

    Raises ConfigError for an unknown prefix or a bad argument.
    """
    cfg = (config or BackendConfig()).model_copy(update={"base_urls": endpoint.base_urls,
                                                          "api_key_env": endpoint.api_key_env})
    return make_backend(endpoint.spec, cfg)


class Session:
    """An open run store + engine over ``backends`` (role -> backend); use as an async context manager.

    Args:
        store_dir: folder of ``responses.sqlite`` (created).
        backends: ``{"model": ..., "judge": ...}``.
        concurrency: requests in flight at most (>= 1); retry: the retry policy;
        progress: show the progress display (or a display object to report to); console: where it goes;
        seed: the engine's jitter seed;
        offline: send nothing (requests without a stored reply come back as errors);
        limiters: role -> asyncio.Semaphore shared with other sessions on the same endpoint.
    """

    def __init__(self, store_dir: str | Path, backends: dict[str, Backend], *, concurrency: int = 8,
                 retry: RetryPolicy | None = None, progress=True, console: Console | None = None,
                 seed: int = 0, offline: bool = False, limiters=None):
        self.store = RunStore(store_dir)
        sweep_server_tmpdirs()  # scratch folders of launched servers whose lensbench was killed (issue 30)
        self.backends = backends
        self.engine = Engine(backends, self.store, concurrency=concurrency, retry=retry, progress=progress,
                             console=console, seed=seed, offline=offline,
                             limiters=limiters)

    async def generate(self, requests: Sequence[Request], label: str = "requests") -> dict[str, StoredResponse]:
        """Send what is not stored yet; ``{request.id: StoredResponse}`` for all (see :meth:`Engine.run`)."""
        return await self.engine.run(list(requests), label)

    async def generate_stream(self, batches, label: str = "requests", total: int | None = None
                              ) -> dict[str, StoredResponse]:
        """Send request batches as they arrive (an async iterator of request lists; see :meth:`Engine.run_stream`)."""
        return await self.engine.run_stream(batches, label, total)

    async def aclose(self) -> None:
        """Close every backend, then the store (idempotent)."""
        try:
            for b in self.backends.values():
                await b.aclose()
        finally:
            self.store.close()

    async def __aenter__(self) -> "Session":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()
