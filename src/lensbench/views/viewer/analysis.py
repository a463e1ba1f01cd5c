"""The data of the viewer's Items and Judge tabs (issue 34): the item analysis of a benchmark's runs
(:func:`lensbench.analysis.items.analyze_items`) and each run's stored judge-noise reports
(``RUN/analysis/judge-*/judge-noise.json``, written by ``lensbench analyze judge``; docs/analysis.md).

Both are plain JSON-able dicts put in the page's index; the page's ``analysis.js`` draws them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

from lensbench.core.errors import LensbenchError
from lensbench.report.runs import LoadedRun

__all__ = ["MIN_RUNS", "IRT_MAX_CELLS", "items_data", "judge_data"]

#: the fewest runs of one benchmark (with records, blind ones included) that get an Items tab section
MIN_RUNS = 3
#: the 2PL is fitted only while items x runs stays at or below this (its fit grows with both: 5.3 s for the
#: 1,624 RGB-Th-Bench items x 18 recorded runs on one core; beyond the cap the page shows the classical statistics
#: and flags with the 2PL left to ``lensbench analyze items``, and says so)
IRT_MAX_CELLS = 10_000


def _first_scored(x_row: Any) -> int:
    """Index of the first run that scored the item (its row of the response matrix), 0 if none."""
    for j, v in enumerate(x_row):
        if not math.isnan(v):
            return j
    return 0


def items_data(runs: Sequence[LoadedRun], *, n_resamples: int, seed: int = 0, irt_max_cells: int = IRT_MAX_CELLS,
               warn: Callable[[str], None] = lambda _msg: None) -> dict[str, dict[str, Any]]:
    """benchmark -> its item analysis for the Items tab, for each benchmark with at least :data:`MIN_RUNS` runs
    with records: :func:`lensbench.analysis.items.to_json` without the subset search (``subset`` null) and less
    the unflagged items (``items`` holds the flagged
    ones, most suspect first, each with ``run``: the page index of the first run that scored it, for its sample
    link), plus ``n_items``, ``n_flagged``, ``irt_skipped`` (True when items x runs > ``irt_max_cells``) and
    ``page_runs`` (page index of each matrix run, ``runs`` order). A benchmark whose runs cannot be analysed
    (too few scored runs, no scipy) is left out with a ``warn``; never raises for a bad run."""
    from lensbench.analysis.items import analyze_items, ranked_items, to_json

    by_bench: dict[str, list[int]] = {}
    for i, r in enumerate(runs):
        if r.records is not None:
            by_bench.setdefault(r.benchmark, []).append(i)
    out: dict[str, dict[str, Any]] = {}
    for bench, idx in by_bench.items():
        if len(idx) < MIN_RUNS:
            continue
        group = [runs[i] for i in idx]
        n_items = len({rec.sample_id for r in group for rec in r.records or []})
        fit = n_items * len(group) <= irt_max_cells
        try:
            rep = analyze_items(group, n_resamples=n_resamples, seed=seed, irt=fit, subset=False)
        except (LensbenchError, ValueError) as exc:
            warn(f"no item analysis of {bench}: {str(exc).splitlines()[0]}")
            continue
        doc = to_json(rep)
        where = {id(r): i for i, r in enumerate(runs)}
        m = rep.matrix
        flagged = [k for k in ranked_items(rep) if rep.flags.flags[m.items[k]]]
        doc["items"] = doc["items"][:len(flagged)]  # to_json lists them most suspect first: flagged ones lead
        for row, k in zip(doc["items"], flagged):
            row["run"] = where[id(m.runs[_first_scored(m.x[k])])]
        doc.update(n_items=len(m.items), n_flagged=len(flagged), irt_skipped=not fit,
                   page_runs=[where[id(r)] for r in m.runs])
        out[bench] = doc
    return out


def judge_data(runs: Sequence[LoadedRun], warn: Callable[[str], None] = lambda _msg: None) -> list[dict[str, Any]]:
    """Every ``RUN/analysis/judge-*/judge-noise.json`` of ``runs``, in run then folder-name order: the file's
    document (:meth:`lensbench.tools.analysis.judge.JudgeNoise.to_json`) plus ``run`` (page index) and
    ``name`` (the ``judge-*`` folder). An unreadable file goes to ``warn`` naming it and is left out."""
    out = []
    for i, r in enumerate(runs):
        for f in sorted((r.path / "analysis").glob("judge-*/judge-noise.json")):
            try:
                doc = json.loads(f.read_text(encoding="utf-8"))
                if not isinstance(doc, dict) or not isinstance(doc.get("disagreements"), list):
                    raise ValueError("no 'disagreements' list")
            except (OSError, ValueError) as exc:
                warn(f"{f}: not a judge-noise report ({exc}); left out of the Judge tab")
                continue
            out.append({**doc, "run": i, "name": f.parent.name})
    return out
