"""IV-Bench's unit tables: Table 2 accuracy, one table per frames/resolution configuration, the video as cluster.

Paper Table 2 and IV-Bench README, Protocol: accuracy (%) per task; P-Avg, R-Avg and Overall are sample-weighted
(micro) over the perception / reasoning / all scored queries, not means of the task columns. Rows:
the scored queries (an ``error`` record, a failed call or an undecodable video, never counts);
cluster: the video. In a sweep the configurations are in :func:`~lensbench.benchmarks.ivbench.sweep.config_key`
order (frames, then short side): the first one's table is ``accuracy`` (as ``result.json``'s ``accuracy``),
the others ``accuracy#2``, ... (``UnitTable.setting`` names each).

Labels read (:meth:`IVBench.score <lensbench.benchmarks.ivbench.benchmark.IVBench.score>` writes them):
``task`` (the release's ``question_type``: its Table 2 column and group come from
:data:`~lensbench.benchmarks.ivbench.data.TASK_ABBREV`; an unknown task is a column of its own, in
no group), ``video_id``, ``frames``, ``resolution``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from lensbench.benchmarks.ivbench.data import PERCEPTION, REASONING, TABLE2_COLUMNS, TASK_ABBREV
from lensbench.benchmarks.ivbench.sweep import config_key, config_label, sweep_in_order
from lensbench.core.records import SampleRecord
from lensbench.scoring.bootstrap import UnitTable
from lensbench.scoring.units import Headline, hit, make_table, scored

__all__ = ["CLUSTER", "HEADLINES", "accuracy_table", "accuracy_tables", "table2_block", "config_of", "sweep_cells"]

CLUSTER = "video"
HEADLINES = (Headline("accuracy", "Overall", "Overall", named=False),)


def config_of(r: SampleRecord) -> tuple[Any, Any]:
    """The record's ``(frames, short side)`` configuration."""
    return r.labels.get("frames"), r.labels.get("resolution")


def _column(r: SampleRecord) -> str:
    task = str(r.labels["task"])
    return TASK_ABBREV.get(task, task)


def _group(r: SampleRecord) -> str | None:
    task = r.labels["task"]
    return "P-Avg" if task in PERCEPTION else "R-Avg" if task in REASONING else None


def accuracy_table(records: Sequence[SampleRecord], setting: dict[str, Any] | None = None) -> UnitTable:
    """The accuracy table of one configuration's records: columns = tasks as first seen; categories
    ``Overall``, the group averages (``P-Avg``, ``R-Avg``, as first seen) and each task."""
    recs = scored(records)
    tasks = list(dict.fromkeys(_column(r) for r in recs))
    ti = {t: i for i, t in enumerate(tasks)}
    groups: dict[str, list[int]] = {}
    for r in recs:
        g = _group(r)
        if g is not None and ti[_column(r)] not in groups.setdefault(g, []):
            groups[g].append(ti[_column(r)])
    rows = [(r.sample_id, str(r.labels.get("video_id", r.sample_id)), ti[_column(r)], hit(r), 1.0) for r in recs]
    cats = {"Overall": list(range(len(tasks))), **groups, **{t: [i] for i, t in enumerate(tasks)}}
    return make_table("accuracy", rows, tasks, cluster=CLUSTER, pool="micro", categories=cats, setting=setting)


def accuracy_tables(records: Sequence[SampleRecord]) -> dict[str, UnitTable]:
    """One :func:`accuracy_table` per configuration, in :func:`config_key` order (see the module docstring)."""
    by_cfg: dict[tuple[Any, Any], list[SampleRecord]] = defaultdict(list)
    for r in records:
        by_cfg[config_of(r)].append(r)
    multi = len(by_cfg) > 1
    return {("accuracy" if k == 0 else f"accuracy#{k + 1}"):
            accuracy_table(rs, {"frames": cfg[0], "resolution": cfg[1]} if multi else None)
            for k, (cfg, rs) in enumerate(sorted(by_cfg.items(), key=lambda kv: config_key(kv[0])))}


def table2_block(t: UnitTable | None) -> tuple[dict[str, float | None], dict[str, int]]:
    """``(accuracy, n)`` per Table 2 column (:data:`TABLE2_COLUMNS`) of one configuration's table: the
    percentage (None where nothing is scored) and the number of scored queries."""
    acc: dict[str, float | None] = {}
    n: dict[str, int] = {}
    for c in TABLE2_COLUMNS:
        known = t is not None and c in t.categories
        acc[c] = t.value(c) if known else None  # type: ignore[union-attr]
        n[c] = t.n_units(c) if known else 0  # type: ignore[union-attr]
    return acc, n


def sweep_cells(metrics: dict[str, Any], tables: Callable[[], dict[str, tuple[str, Any]]]
                ) -> list[tuple[Headline, str, dict[str, Any], str]]:
    """The leaderboard cells of a sweep run: one per configuration (``metrics["sweep"]`` matched to the
    tables by frames and resolution; ``tables()``: ``{table key: (metric, setting)}``); ``[]`` for a run
    of one configuration. Cells in :func:`config_key` order, each named by its label
    (:func:`~lensbench.benchmarks.ivbench.sweep.config_label`; the leaderboard orders numbers numerically), so a
    table that sorts its columns by name keeps them in frame order."""
    sweep = metrics.get("sweep")
    if not isinstance(sweep, list) or len(sweep) < 2:
        return []
    h = HEADLINES[0]
    settings = tables()
    out = []
    sweep = sweep_in_order(sweep)
    names = [config_label(e.get("frames"), e.get("resolution")) for e in sweep]
    for entry, name in zip(sweep, names):
        want = {"frames": entry.get("frames"), "resolution": entry.get("resolution")}
        key = next((k for k, (metric, setting) in settings.items() if metric == h.metric and setting == want), "")
        out.append((h, key, {h.metric: entry.get("accuracy") or {}}, name))
    return out
