"""The one place ``lensbench reproduce`` gets a run's metric tables: the benchmark's own unit tables
(``unit_tables`` of the run's benchmark class, :attr:`lensbench.report.runs.LoadedRun.facts`: the same tables its
aggregate and its CIs read) plus the paper's own extra tables.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lensbench.core.records import SampleRecord
from lensbench.scoring.bootstrap import UnitTable

__all__ = ["metric_tables"]


def metric_tables(facts: Any, benchmark: str, records: Sequence[SampleRecord],
                  extra: Callable[[str, list[SampleRecord], dict[str, UnitTable]], dict[str, Any]] | None = None
                  ) -> dict[str, UnitTable]:
    """``{key: UnitTable}`` of a run's records: the benchmark's unit tables, then ``extra(benchmark, records,
    unit tables)`` (a paper's own tables, possibly derived from the unit tables; a key there replaces the unit
    table of that key); ``facts``: the benchmark's class (:attr:`lensbench.report.runs.LoadedRun.facts`). ``{}`` for
    no records or a benchmark that is not installed (``facts`` None)."""
    recs = list(records)
    out = dict(facts.unit_tables(recs)) if recs and facts is not None else {}
    if extra is not None and recs:
        out.update({k: v for k, v in extra(benchmark, recs, dict(out)).items() if v is not None})
    return out
