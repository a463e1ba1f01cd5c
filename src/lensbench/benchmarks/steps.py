"""The typed pieces the benchmark steps pass on: what ``load`` returns, what a request carries, what is not sent.

* :class:`Loaded`: the samples of :meth:`~lensbench.benchmarks.base.Benchmark.load` (a list, in protocol
  order) with the counts loading noted (samples left out for missing media, ...): nothing is left on
  the benchmark object for later steps to read.
* :class:`Meta`: ``Request.meta`` of a benchmark's model request: the sample it belongs to (the base
  class groups replies by it) and the facts its record needs (target, labels, extra), plus what some
  backends read (``answer_space`` for the random baseline, ``replay_match`` for a benchmark's replay
  format). A benchmark may add its own keys (a ``TypedDict`` of its own).
* :class:`Unsent`: a unit the protocol cannot send (IV-Bench: a query whose video does not decode):
  nothing goes to the model, its record is an ``error`` with the reason.
* :class:`Batches`: requests that become ready over time (IV-Bench: one batch per decoded video), sent
  while later ones are still being prepared.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from lensbench.core.types import Request

__all__ = ["Loaded", "Meta", "Unsent", "Batches", "Planned"]


class Loaded(list):
    """The samples a benchmark loaded, in protocol order (a list: slicing gives a plain list of them), and
    ``counts``: what loading noted, folded into the run's counts by ``aggregate`` (e.g.
    ``{"n_skipped_missing": 3}``)."""

    def __init__(self, samples=(), counts: Mapping[str, Any] | None = None):
        super().__init__(samples)
        self.counts: dict[str, Any] = dict(counts or {})


class _SampleOf(TypedDict):
    sample_id: str


class Meta(_SampleOf, total=False):
    """``Request.meta`` of a benchmark's request (not part of the request's key; see the module docstring):
    ``sample_id`` (required), ``target``, ``labels``, ``extra``, ``answer_space``, ``replay_match``."""

    target: Any
    labels: dict[str, Any]
    extra: dict[str, Any]
    answer_space: Any
    replay_match: list[Any]


@dataclass(frozen=True)
class Unsent:
    """A unit of sample ``meta["sample_id"]`` that cannot be sent: scored as an ``error`` with ``error`` as the
    reason (``id``: the unit's record id; ``meta``: as a request's, :class:`Meta`)."""

    id: str
    meta: Mapping[str, Any]
    error: str


@dataclass
class Batches:
    """Requests (and unsent units) that become ready over time: an async iterator of lists; ``total``: the
    number of units expected (progress only)."""

    batches: AsyncIterator[list[Request | Unsent]]
    total: int | None = None


#: what ``expand`` returns: the units in protocol order, or batches of them
Planned = list[Request | Unsent] | Batches
