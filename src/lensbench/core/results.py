"""A run's summary (``result.json``): metrics and counts of one benchmark on one model."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["RunResult"]


@dataclass
class RunResult:
    """A finished (or partial) run's summary, as written to ``result.json``.

    ``metrics`` maps metric name -> {column -> value in percent (or the metric's unit)};
    ``counts`` has at least ``n`` (scored units), ``n_unparseable``, ``n_error``; ``ci``: the run's
    confidence intervals with the design they were drawn with
    (:func:`lensbench.scoring.intervals.interval_block`), or None.
    """

    benchmark: str
    model: str
    metrics: dict[str, Any]
    counts: dict[str, Any]
    options: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    complete: bool = True
    run_dir: str = ""
    ci: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-able dict (the ``--format json`` document of a single run)."""
        doc = {
            "benchmark": self.benchmark,
            "model": self.model,
            "complete": self.complete,
            "metrics": self.metrics,
            "counts": self.counts,
            "options": self.options,
            "extra": self.extra,
            "run_dir": self.run_dir,
        }
        if self.ci is not None:
            doc["ci"] = self.ci
        return doc

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "RunResult":
        """Inverse of :meth:`to_json`. Raises KeyError naming a missing field."""
        return cls(benchmark=d["benchmark"], model=d["model"], metrics=d["metrics"], counts=d["counts"],
                   options=d.get("options", {}), extra=d.get("extra", {}), complete=d.get("complete", True),
                   run_dir=d.get("run_dir", ""), ci=d.get("ci"))
