"""A run's confidence intervals as one JSON block: written to ``result.json`` by the run, read by reports.

``{"design": {cluster, method, n_resamples, seed, level, min_clusters}, "tables": {key: {"metric",
"setting", "intervals": {category: [value, low, high, n clusters, n units]}, "too_few_clusters":
{category: n}}}}`` with the keys of the benchmark's unit tables
(:meth:`lensbench.benchmarks.base.Benchmark.unit_tables`: ``QAcc``, ``accuracy#2``, ...). Computed once
per run with the default design; a report asking for the same design reads it instead of resampling
(issue 25: statistics computed once and cached per run). A category with a value but fewer than
``min_clusters`` clusters has null bounds and is listed in ``too_few_clusters`` (docs/protocol.md, general rules).
"""

from __future__ import annotations

from typing import Any

from lensbench.scoring.bootstrap import (DEFAULT_RESAMPLES, MIN_CLUSTERS, Design, Interval, UnitTable, bootstrap_ci,
                                         method_key, too_few_clusters, too_few_text)

__all__ = ["design_for", "interval_block", "intervals_from_block", "tables_block", "MIN_CLUSTERS", "too_few_clusters",
           "too_few_text"]


def design_for(cluster: str, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0, level: float = 0.95) -> Design:
    """The :class:`Design` of a benchmark's CIs: its ``cluster`` (in words), the given count, seed and level."""
    return Design(cluster, n_resamples, seed, level)


def tables_block(tables: dict[str, UnitTable], design: Design) -> dict[str, Any]:
    """The JSON block (see the module docstring) of every category of every table."""
    out: dict[str, Any] = {}
    for key, t in tables.items():
        ivs = {c: bootstrap_ci(t, c, n_resamples=design.n_resamples, seed=design.seed, level=design.level,
                               method=design.method, min_clusters=design.min_clusters) for c in t.categories}
        out[key] = {"metric": t.metric, "setting": t.setting,
                    "intervals": {c: [iv.value, iv.low, iv.high, iv.n, iv.n_units] for c, iv in ivs.items()},
                    "too_few_clusters": {c: iv.n for c, iv in ivs.items() if iv.too_few}}
    return {"design": design.to_json(), "tables": out}


def interval_block(tables: dict[str, UnitTable], cluster: str, **design: Any) -> dict[str, Any] | None:
    """The block of a run's unit ``tables`` (None when there are none) resampling ``cluster``;
    ``design``: ``n_resamples``, ``seed``, ``level`` (defaults: :func:`design_for`)."""
    if not tables:
        return None
    return tables_block(tables, design_for(cluster, **design))


def intervals_from_block(block: dict[str, Any] | None, design: Design) -> dict[tuple[str, str], Interval] | None:
    """``{(table key, category): Interval}`` from a stored block drawn with ``design``; None when the
    block is missing, malformed or was drawn another way."""
    if not isinstance(block, dict) or block.get("design") != design.to_json():
        return None
    out = {}
    try:
        for key, t in block["tables"].items():
            for cat, (value, low, high, n, n_units) in t["intervals"].items():
                out[(key, cat)] = Interval(value, low, high, int(n), design.seed, design.n_resamples,
                                           method_key(design.method), design.level, design.cluster, int(n_units),
                                           design.min_clusters)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    return out
