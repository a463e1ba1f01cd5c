"""The item x run response matrix behind ``lensbench analyze items``: who answered what, from run folders.

One *item* is one record ``sample_id`` (an RGB-Th-Bench question, an IF-Bench question/language/rotation,
a GroundingME sample, ...); one *respondent* is one run (a model under one protocol setting). A cell is
1.0 (outcome ``correct``), 0.0 (``wrong`` or ``unparseable``: docs/protocol.md, general rules score an unreadable
reply as the protocol scores it, i.e. not right) or NaN (``error`` / ``scored`` / not in the run: never
scored, so never counted). Blind runs (a ``blind`` option, or ``--input blind``) are kept apart: they are
no respondent of the ability scale, only evidence that an item is answerable without its image.

Every item carries its *cluster* (the benchmark's resampled unit, docs/protocol.md, general rules: RGB-Th-Bench's
scene, IF-Bench's image, ...) taken from the benchmark's own headline table
(:meth:`~lensbench.benchmarks.base.Benchmark.unit_tables`), its key (``target``), each run's parsed
answer, and a *question key* (the text sent plus the sha256 of every image) that finds duplicates.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from lensbench.core.errors import ConfigError
from lensbench.core.records import SampleRecord
from lensbench.report.runinfo import protocol_settings
from lensbench.views.runs import LoadedRun, read_run, run_tables
from lensbench.scoring.bootstrap import UnitTable

__all__ = ["ResponseMatrix", "load_matrix", "is_blind", "question_key", "item_clusters", "describe_run"]

_SCORE = {"correct": 1.0, "wrong": 0.0, "unparseable": 0.0}


def is_blind(run: LoadedRun) -> bool:
    """True for a run made without the image: a ``blind`` option set, or ``input``/``pattern`` ``blind``,
    ``text-only`` or ``no-video`` (the benchmarks' language-prior baselines)."""
    s = protocol_settings(run)
    return bool(s.get("blind") is True or str(s.get("input")) in ("blind", "text-only")
                or str(s.get("pattern")) in ("text-only", "no-video", "blind"))


def question_key(record: SampleRecord) -> str:
    """A short hash of what the item asks: every text part (whitespace collapsed, case folded) and every
    image's sha256, in order. Two items with the same key ask the same question of the same media."""
    h = hashlib.sha256()
    for m in record.messages:
        for part in m.get("content") or []:
            if part.get("type") == "text":
                h.update(re.sub(r"\s+", " ", str(part.get("text", ""))).strip().casefold().encode())
            else:
                h.update(str(part.get("sha256") or part.get("frames") or part.get("path")).encode())
            h.update(b"\x00")
    return h.hexdigest()[:16]


def item_clusters(table: UnitTable | None, items: Sequence[str]) -> dict[str, str]:
    """``{item: cluster}``: the cluster of the headline-table unit equal to the item, else of the longest
    unit the item's id starts with (``unit/...``), else the item itself (its own cluster)."""
    if table is None:
        return {i: i for i in items}
    assert table.clusters is not None
    by_unit = dict(zip(table.units, table.clusters))
    out = {}
    for i in items:
        c = by_unit.get(i)
        if c is None:
            parts = i.split("/")
            for k in range(len(parts) - 1, 0, -1):
                c = by_unit.get("/".join(parts[:k]))
                if c is not None:
                    break
        out[i] = c if c is not None else i
    return out


@dataclass
class ResponseMatrix:
    """Scores of R runs on I items.

    Attributes:
        benchmark: the benchmark's CLI name (all runs share it).
        items: I item ids (``sample_id``), in first-seen order.
        runs: the R respondent runs (blind runs excluded); ``labels``: R unique display names.
        x: (I, R) float array, 1.0 right / 0.0 not right / NaN not scored.
        answers: (I, R) parsed answers as strings ("" when none).
        targets: item -> key (str); ``clusters``: item -> cluster id; ``cluster``: what a cluster is.
        qkeys: item -> :func:`question_key`; ``text``: item -> the last text part sent (for reports).
        blind: item -> list of 0/1 scores of the blind runs that scored it; ``blind_runs``: their labels.
    """

    benchmark: str
    items: list[str]
    runs: list[LoadedRun]
    labels: list[str]
    x: np.ndarray
    answers: np.ndarray
    targets: dict[str, str]
    clusters: dict[str, str]
    cluster: str
    qkeys: dict[str, str]
    text: dict[str, str]
    blind: dict[str, list[float]] = field(default_factory=dict)
    blind_runs: list[str] = field(default_factory=list)

    @property
    def ability(self) -> np.ndarray:
        """(R,) proportion right of each run over the items it scored (NaN-aware)."""
        return np.nanmean(self.x, axis=0)


def _last_text(r: SampleRecord) -> str:
    q = r.extra.get("question") if isinstance(r.extra, dict) else None
    if q:
        return str(q)
    texts = [p.get("text", "") for m in r.messages for p in (m.get("content") or []) if p.get("type") == "text"]
    return texts[-1].strip().splitlines()[-1] if texts and texts[-1].strip() else ""


def _unique(runs: list[LoadedRun]) -> list[str]:
    """Each run's model name; a name two runs share gets the run folder's name too."""
    names = [r.model for r in runs]
    return [n if names.count(n) == 1 else f"{n} [{r.path.name}]" for n, r in zip(names, runs)]


def load_matrix(run_dirs: Sequence[str | Path | LoadedRun]) -> ResponseMatrix:
    """Read the runs (folders, or runs already read with their records, as the viewer has them) and build
    their :class:`ResponseMatrix`.

    Raises ConfigError (naming the folder) when a folder is no readable run, when the runs are of
    different benchmarks, or when fewer than 2 non-blind runs scored anything.
    """
    runs, blind_runs = [], []
    for d in run_dirs:
        run = d if isinstance(d, LoadedRun) else read_run(d)
        if run.records is None:
            raise ConfigError(f"{d}: no readable samples.jsonl ({'; '.join(run.problems) or 'not a run folder'})")
        (blind_runs if is_blind(run) else runs).append(run)
    benches = sorted({r.benchmark for r in runs + blind_runs})
    if len(benches) != 1:
        raise ConfigError(f"the runs are of different benchmarks ({', '.join(benches)}): analyse one benchmark at a time")
    runs = [r for r in runs if any(rec.outcome in _SCORE for rec in r.records or [])]
    if len(runs) < 2:
        raise ConfigError(f"item analysis needs at least 2 runs with scored items (got {len(runs)} besides blind runs)")
    items: dict[str, None] = {}
    targets, qkeys, text = {}, {}, {}
    for run in runs + blind_runs:
        for rec in run.records or []:
            if rec.outcome in _SCORE:
                items.setdefault(rec.sample_id)
                if rec.sample_id not in targets:
                    targets[rec.sample_id] = "" if rec.target is None else str(rec.target)
                    qkeys[rec.sample_id] = question_key(rec)
                    text[rec.sample_id] = _last_text(rec)
    ids = list(items)
    pos = {i: k for k, i in enumerate(ids)}
    x = np.full((len(ids), len(runs)), np.nan)
    answers = np.full((len(ids), len(runs)), "", dtype=object)
    for j, run in enumerate(runs):
        for rec in run.records or []:
            if rec.outcome in _SCORE:
                x[pos[rec.sample_id], j] = _SCORE[rec.outcome]
                answers[pos[rec.sample_id], j] = "" if rec.answer is None else str(rec.answer)
    blind: dict[str, list[float]] = {}
    for run in blind_runs:
        for rec in run.records or []:
            if rec.outcome in _SCORE:
                blind.setdefault(rec.sample_id, []).append(_SCORE[rec.outcome])
    headline = next(iter(run_tables(runs[0]).values()), None)
    return ResponseMatrix(benches[0], ids, runs, _unique(runs), x, answers, targets,
                          item_clusters(headline, ids), headline.cluster if headline else "item", qkeys, text,
                          blind, _unique(blind_runs))


def describe_run(run: LoadedRun) -> dict[str, Any]:
    """``{"model", "path", "settings"}`` of a run, for the JSON report."""
    return {"model": run.model, "path": str(run.path), "settings": protocol_settings(run)}
