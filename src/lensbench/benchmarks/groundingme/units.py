"""GroundingME's unit table: Acc@0.5 per L-2 category, each sample its own cluster.

Paper Table 3 and GroundingME README, Protocol: a sample is right at IoU 0.5 (``hit_at(scores, 0.5)``: IoU >= 0.5, a
Rejection item right iff rejected; in ``--official-compat`` mode the official rule's IoU); an L-1
category and Total pool their samples (sample-weighted, not means of the L-2 columns). Rows: the
scored samples (an ``error`` never counts); cluster: the sample. Columns: ``L1/L2`` as first seen.

Labels read (:meth:`GroundingME._record <lensbench.benchmarks.groundingme.benchmark.GroundingME>`
writes them): ``L-1``, ``L-2``; scores: ``iou``, ``hit@0.5``.
"""

from __future__ import annotations

from collections.abc import Sequence

from lensbench.benchmarks.groundingme.score import hit_at
from lensbench.core.records import SampleRecord
from lensbench.scoring.bootstrap import UnitTable
from lensbench.scoring.units import Headline, make_table, scored

__all__ = ["CLUSTER", "HEADLINES", "acc_table", "column_of"]

CLUSTER = "sample"
HEADLINES = (Headline("Acc@0.5", "Total", "Total"),)


def column_of(r: SampleRecord) -> str:
    """The record's ``L1/L2`` column (``L1`` for a record without an L-2 label)."""
    l2 = r.labels.get("L-2")
    return str(r.labels["L-1"]) if l2 is None else f"{r.labels['L-1']}/{l2}"


def acc_table(records: Sequence[SampleRecord]) -> UnitTable:
    """The Acc@0.5 table (module docstring); categories ``Total``, each L-1 and each ``L1/L2``."""
    recs = scored(records)
    columns = list(dict.fromkeys(column_of(r) for r in recs))
    ci = {c: i for i, c in enumerate(columns)}
    l1s: dict[str, list[int]] = {}
    for c in columns:
        l1s.setdefault(c.split("/", 1)[0], []).append(ci[c])
    rows = [(r.sample_id, r.sample_id, ci[column_of(r)], float(hit_at(r.scores, 0.5)), 1.0) for r in recs]
    cats = {"Total": list(range(len(columns))), **l1s, **{c: [i] for c, i in ci.items() if "/" in c}}
    return make_table("Acc@0.5", rows, columns, cluster=CLUSTER, pool="micro", categories=cats)
