"""The one place ``lensbench reproduce`` gets a run's metric tables: the benchmark's unit tables
(:func:`lensbench.scoring.units.unit_tables`, public) plus the paper's own extra tables.

Kept to one small adapter so that moving each benchmark's unit tables into its folder (issue 21) is one
edit here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lensbench.core.records import SampleRecord
from lensbench.scoring.bootstrap import UnitTable
from lensbench.scoring.units import unit_tables

__all__ = ["metric_tables"]


def metric_tables(benchmark: str, records: Sequence[SampleRecord],
                  extra: Callable[[str, list[SampleRecord], dict[str, UnitTable]], dict[str, Any]] | None = None
                  ) -> dict[str, UnitTable]:
    """``{key: UnitTable}`` of a run's records: the benchmark's unit tables, then ``extra(benchmark, records,
    unit tables)`` (a paper's own tables, possibly derived from the unit tables; a key there replaces the unit
    table of that key). ``{}`` for no records."""
    recs = list(records)
    out = dict(unit_tables(benchmark, recs)) if recs else {}
    if extra is not None and recs:
        out.update({k: v for k, v in extra(benchmark, recs, dict(out)).items() if v is not None})
    return out
