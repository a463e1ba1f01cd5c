"""Each benchmark's independent units and headline metrics, as :class:`UnitTable` s built from sample records.

What is resampled for a confidence interval (issue 15, "Statistics"):

* IF-Bench ``Score``: the question, with all its rotations and languages. Columns =
  (language, dimension); a (question, language) cell = mean correctness over its rotations
  (the soft circular score), left out when one of its calls failed; Avg = mean over languages
  of the mean over dimensions (paper Sec. 3.3, Tab. 2).
* RGB-Th-Bench ``QAcc``: questions resampled within the (scene, skill) unit they belong to (each
  unit is a stratum); ``SAcc``: the (scene, skill) units, resampled within their skill. Columns
  = the 14 paper skills; Overall = mean over skills (paper Table 3); the extra Text-Reference
  skills are left out as in the paper's Overall.
* IV-Bench ``accuracy``: the video (all its questions). One column per task; Overall =
  sample-weighted accuracy (Table 2). Only the first frames/resolution configuration counts.
* GroundingME ``Acc@0.5``: the sample. Columns = L-1 categories; Total = hits / samples.
* GOBench ``SPS``: the image. Columns = the SPS dimensions; "mean" = mean over dimensions.

Records with outcome ``error`` never count. Label names are read with fallbacks (first present):
see the ``_KEYS`` table.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lensbench.core.records import SampleRecord
from lensbench.scoring.bootstrap import UnitTable

__all__ = ["unit_tables", "HEADLINES", "label", "TABLE_BUILDERS"]

#: label -> accepted names in ``labels`` (then ``extra``), first present wins.
_KEYS: dict[str, tuple[str, ...]] = {
    "scene": ("scene", "scene_key", "unit_scene"),
    "skill": ("abbrev", "skill_abbrev", "skill"),
    "extra_skill": ("extra_skill", "extra"),
    "question": ("qid", "question_id", "question"),
    "dimension": ("dimension", "abbrev", "dim"),
    "language": ("language", "lang"),
    "video": ("video_id", "video"),
    "task": ("column", "task_abbrev", "abbrev", "task"),
    "config": ("config",),
    "frames": ("frames", "num_frames"),
    "resolution": ("resolution",),
    "l1": ("L-1", "l1", "subtask_l1", "L1"),
    "image": ("image_id", "image", "image_name"),
}

#: benchmark -> [(metric key in result.json, column, table category)], the leaderboard's headline(s).
HEADLINES: dict[str, list[tuple[str, str, str]]] = {
    "rgb-th-bench": [("QAcc", "Overall", "Overall"), ("SAcc", "Overall", "Overall")],
    "if-bench": [("Score", "Avg", "Avg")],
    "iv-bench": [("accuracy", "Overall", "Overall")],
    "gobench": [("SPS", "mean", "mean")],
    "groundingme": [("Acc@0.5", "Total", "Total")],
}


def label(rec: SampleRecord, key: str, default: Any = None) -> Any:
    """The record's value of the logical label ``key`` (see ``_KEYS``), from labels then extra."""
    for name in _KEYS.get(key, (key,)):
        for src in (rec.labels, rec.extra):
            if name in src and src[name] is not None:
                return src[name]
    return default


def _scored(records: Sequence[SampleRecord]) -> list[SampleRecord]:
    return [r for r in records if r.outcome != "error"]


def _hit(rec: SampleRecord) -> float:
    return 1.0 if rec.outcome == "correct" else 0.0


def _table(metric: str, units: list[str], columns: list[str], cells: dict[tuple[int, int], list[float]],
           groups: Sequence[int], pool: str, categories: dict[str, list[int]], strata: Sequence[int] | None = None,
           ) -> UnitTable:
    """Build a table from ``cells[(unit, column)] = [numerator, denominator]`` sums."""
    num = np.zeros((len(units), len(columns)))
    den = np.zeros_like(num)
    for (u, c), (n, d) in cells.items():
        num[u, c], den[u, c] = n, d
    return UnitTable(metric, units, columns, num, den, np.asarray(groups, int),
                     None if strata is None else np.asarray(strata, int), pool, categories)


def _index(values: list[Any]) -> dict[Any, int]:
    out: dict[Any, int] = {}
    for v in values:
        out.setdefault(v, len(out))
    return out


def _group_cats(recs: Sequence[SampleRecord], key: str, columns: list[str], name) -> dict[str, list[int]]:
    """Categories from the ``group`` label: ``name(group) -> [column indices]`` (RGB-Th-Bench
    RGB-Txt / RGB-Th-Txt; IV-Bench P-Avg / R-Avg)."""
    col = {c: i for i, c in enumerate(columns)}
    out: dict[str, list[int]] = {}
    for r in recs:
        g = r.labels.get("group")
        c = str(label(r, key))
        if g is not None and c in col and col[c] not in out.setdefault(name(g), []):
            out[name(g)].append(col[c])
    return out


def _rgbth(records: Sequence[SampleRecord]) -> dict[str, UnitTable]:
    recs = [r for r in records if label(r, "extra_skill", False) is not True]
    skills = list(_index([str(label(r, "skill")) for r in recs]))
    sk = {s: i for i, s in enumerate(skills)}
    cats = {"Overall": list(range(len(skills))), **_group_cats(recs, "skill", skills, str),
            **{s: [i] for i, s in enumerate(skills)}}
    by_unit: dict[tuple[str, str], list[SampleRecord]] = defaultdict(list)
    for r in recs:
        by_unit[(str(label(r, "scene")), str(label(r, "skill")))].append(r)
    # QAcc: elements = questions, strata = their (scene, skill) unit
    q_units, q_strata, q_cells = [], [], {}
    for ui, ((scene, skill), rs) in enumerate(by_unit.items()):
        for r in _scored(rs):
            q_cells[(len(q_units), sk[skill])] = [_hit(r), 1.0]
            q_units.append(r.sample_id)
            q_strata.append(ui)
    # SAcc: elements = units without a failed call, strata = skill
    s_units, s_strata, s_cells = [], [], {}
    for (scene, skill), rs in by_unit.items():
        if any(r.outcome == "error" for r in rs):
            continue
        s_cells[(len(s_units), sk[skill])] = [1.0 if all(r.outcome == "correct" for r in rs) else 0.0, 1.0]
        s_units.append(f"{scene}/{skill}")
        s_strata.append(sk[skill])
    zeros = [0] * len(skills)
    return {"QAcc": _table("QAcc", q_units, skills, q_cells, zeros, "macro", cats, q_strata),
            "SAcc": _table("SAcc", s_units, skills, s_cells, zeros, "macro", cats, s_strata)}


def _ifbench(records: Sequence[SampleRecord]) -> dict[str, UnitTable]:
    cells_rs: dict[tuple[str, str], list[SampleRecord]] = defaultdict(list)
    for r in records:
        cells_rs[(str(label(r, "question", r.sample_id)), str(label(r, "language", "en")))].append(r)
    langs = list(_index([lg for _q, lg in cells_rs]))
    dims = list(_index([str(label(rs[0], "dimension")) for rs in cells_rs.values()]))
    columns = [f"{lg}/{d}" for lg in langs for d in dims]
    col = {c: i for i, c in enumerate(columns)}
    units = list(_index([q for q, _lg in cells_rs]))
    ui = {u: i for i, u in enumerate(units)}
    cells = {}
    for (q, lg), rs in cells_rs.items():
        if any(r.outcome == "error" for r in rs):
            continue
        cells[(ui[q], col[f"{lg}/{label(rs[0], 'dimension')}"])] = [sum(_hit(r) for r in rs) / len(rs), 1.0]
    groups = [langs.index(c.split("/", 1)[0]) for c in columns]
    cats = {"Avg": list(range(len(columns))),
            **{d: [col[f"{lg}/{d}"] for lg in langs] for d in dims},
            **{lg: [col[f"{lg}/{d}"] for d in dims] for lg in langs}}
    return {"Score": _table("Score", units, columns, cells, groups, "macro", cats)}


def _ivbench(records: Sequence[SampleRecord]) -> dict[str, UnitTable]:
    if not records:
        return {}
    first = (label(records[0], "frames"), label(records[0], "resolution"), label(records[0], "config"))
    recs = [r for r in _scored(records) if (label(r, "frames"), label(r, "resolution"), label(r, "config")) == first]
    tasks = list(_index([str(label(r, "task")) for r in recs]))
    units = list(_index([str(label(r, "video", r.sample_id)) for r in recs]))
    ui, ti = {u: i for i, u in enumerate(units)}, {t: i for i, t in enumerate(tasks)}
    cells: dict[tuple[int, int], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for r in recs:
        c = cells[(ui[str(label(r, "video", r.sample_id))], ti[str(label(r, "task"))])]
        c[0] += _hit(r)
        c[1] += 1.0
    cats = {"Overall": list(range(len(tasks))), **_group_cats(recs, "task", tasks, lambda g: f"{str(g)[:1].upper()}-Avg"),
            **{t: [i] for i, t in enumerate(tasks)}}
    return {"accuracy": _table("accuracy", units, tasks, dict(cells), [0] * len(tasks), "micro", cats)}


def _groundingme(records: Sequence[SampleRecord]) -> dict[str, UnitTable]:
    recs = _scored(records)
    l1s = list(_index([str(label(r, "l1")) for r in recs]))
    li = {c: i for i, c in enumerate(l1s)}
    cells = {(i, li[str(label(r, "l1"))]): [_hit(r), 1.0] for i, r in enumerate(recs)}
    cats = {"Total": list(range(len(l1s))), **{c: [i] for i, c in enumerate(l1s)}}
    return {"Acc@0.5": _table("Acc@0.5", [r.sample_id for r in recs], l1s, cells, [0] * len(l1s), "micro", cats)}


def _sps_keys(rec: SampleRecord) -> dict[str, str]:
    """``{dimension title: scores key}`` of the record's SPS terms (keys like ``SPS/Authenticity``)."""
    out = {}
    for k in rec.scores:
        low = k.lower()
        if low.startswith("sps"):
            dim = k[3:].lstrip("_/:- ").strip() or "SPS"
            out[dim[:1].upper() + dim[1:]] = k
    return out


def _gobench(records: Sequence[SampleRecord]) -> dict[str, UnitTable]:
    recs = [r for r in _scored(records) if _sps_keys(r)]
    dims = list(_index([d for r in recs for d in _sps_keys(r)]))
    di = {d: i for i, d in enumerate(dims)}
    cells = {}
    for i, r in enumerate(recs):
        for d, k in _sps_keys(r).items():
            if r.scores[k] is not None:
                cells[(i, di[d])] = [float(r.scores[k]), 1.0]
    cats = {"mean": list(range(len(dims))), **{d: [i] for i, d in enumerate(dims)}}
    return {"SPS": _table("SPS", [r.sample_id for r in recs], dims, cells, [0] * len(dims), "macro", cats)}


#: benchmark name -> builder of its metric tables.
TABLE_BUILDERS: dict[str, Callable[[Sequence[SampleRecord]], dict[str, UnitTable]]] = {
    "rgb-th-bench": _rgbth, "if-bench": _ifbench, "iv-bench": _ivbench, "groundingme": _groundingme,
    "gobench": _gobench,
}


def unit_tables(benchmark: str, records: Sequence[SampleRecord]) -> dict[str, UnitTable]:
    """``{metric: UnitTable}`` of a benchmark's records; ``{}`` for an unknown benchmark or no records.

    Raises nothing for odd records: a table whose values disagree with ``result.json`` is the
    caller's signal that the records are not (yet) in the expected shape.
    """
    builder = TABLE_BUILDERS.get(benchmark)
    if builder is None or not records:
        return {}
    try:
        return {k: v for k, v in builder(records).items() if v.units}
    except (KeyError, TypeError, ValueError):
        return {}
