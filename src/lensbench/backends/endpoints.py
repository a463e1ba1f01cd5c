"""Spreading one model's requests over several endpoints: least outstanding requests, with cool-down.

Each request goes to the endpoint with the fewest requests in flight (ties: the one that served
fewer so far, then the first), so a faster server — which finishes sooner — gets more of the
load, unlike round robin. An endpoint whose ``fail_threshold`` consecutive calls failed with a
retryable transport error (refused, timeout, 429/5xx, malformed or empty reply) is set aside for
``base_cooldown_s * 2**k`` seconds (``k`` = times it was set aside since its last success; at most
``max_cooldown_s``); meanwhile its requests go to the others. When every endpoint is set aside,
the one whose cool-down ends first is used (a request is never held back).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from lensbench.core.errors import TransportError

__all__ = ["EndpointPool", "EndpointStats", "connect_failure"]


@dataclass
class EndpointStats:
    """Counters of one endpoint: requests in flight, answered (``served``), failed calls, times set
    aside, and the monotonic time until which it is set aside (0 = available)."""

    url: str
    outstanding: int = 0
    served: int = 0
    failed: int = 0
    set_aside: int = 0
    consecutive_failures: int = 0
    strikes: int = 0
    until: float = 0.0


class EndpointPool:
    """Least-outstanding choice over ``urls`` (shown, redacted URLs) with failure cool-down.

    Args:
        urls: one label per endpoint (order = index used by :meth:`acquire`/:meth:`release`).
        fail_threshold: consecutive retryable failures that set an endpoint aside (>= 1).
        base_cooldown_s, max_cooldown_s: first and longest cool-down (seconds).
        clock: monotonic clock (tests pass a fake).
    Not thread-safe: use it from one event loop.
    """

    def __init__(self, urls: list[str], *, fail_threshold: int = 3, base_cooldown_s: float = 5.0,
                 max_cooldown_s: float = 300.0, clock: Callable[[], float] = time.monotonic):
        self.stats = [EndpointStats(u) for u in urls]
        self.fail_threshold = max(1, fail_threshold)
        self.base_cooldown_s = base_cooldown_s
        self.max_cooldown_s = max_cooldown_s
        self.clock = clock

    def acquire(self) -> int:
        """Index of the endpoint for the next request (its in-flight count goes up by one)."""
        now = self.clock()
        ready = [i for i, s in enumerate(self.stats) if s.until <= now]
        if ready:
            i = min(ready, key=lambda j: (self.stats[j].outstanding, self.stats[j].served, j))
        else:
            i = min(range(len(self.stats)), key=lambda j: (self.stats[j].until, j))
        self.stats[i].outstanding += 1
        return i

    def release(self, i: int, ok: bool, counts_as_failure: bool = True) -> None:
        """Record the end of a request on endpoint ``i``: ``ok`` (answered), or a failure that sets the
        endpoint towards cool-down when ``counts_as_failure`` (retryable transport failures)."""
        s = self.stats[i]
        s.outstanding -= 1
        if ok:
            s.served += 1
            s.consecutive_failures = 0
            s.strikes = 0
            return
        s.failed += 1
        if not counts_as_failure:
            return
        s.consecutive_failures += 1
        if s.consecutive_failures >= self.fail_threshold and len(self.stats) > 1:
            s.until = self.clock() + min(self.max_cooldown_s, self.base_cooldown_s * 2 ** s.strikes)
            s.strikes += 1
            s.set_aside += 1
            s.consecutive_failures = 0

    def summary(self) -> dict:
        """``{"policy": "least_outstanding", "endpoints": [{"url", "served", "failed", "set_aside"}]}``
        (for the run manifest)."""
        return {"policy": "least_outstanding",
                "endpoints": [{"url": s.url, "served": s.served, "failed": s.failed, "set_aside": s.set_aside}
                              for s in self.stats]}


def connect_failure(shown: str, exc: BaseException) -> TransportError:
    """The TransportError (kind ``"refused"``: nothing answered, retried, then the run stops) for a connection
    that could not be made to ``shown``, saying which: an unknown host (DNS), a refused connection, or another
    failure to connect (unreachable network, reset). Used by both HTTP clients."""
    import socket

    if isinstance(exc, socket.gaierror):
        what = f"unknown host: cannot resolve the host of {shown} ({exc.strerror or exc})"
    elif isinstance(exc, ConnectionRefusedError):
        what = f"connection refused at {shown}: {exc}"
    else:
        what = f"cannot connect to {shown}: {exc}"
    return TransportError(what, kind="refused", url=shown)
