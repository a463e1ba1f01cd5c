"""Each benchmark's scored units, resampled clusters and headline cells: one function per benchmark, one table.

:data:`UNITS` maps a benchmark to :class:`BenchmarkUnits`: the builder of its metric tables
(:class:`~lensbench.scoring.bootstrap.UnitTable` s from sample records), the cluster a CI
resamples (SPEC General rules: the largest independent cluster), its headline cells, what one of
its samples is (for coverage: "22/1,686 queries") and the options that do not change what is
measured (paths, workers, metadata; every other option is a protocol setting).

* RGB-Th-Bench ``QAcc`` (rows: questions) and ``SAcc`` (rows: (scene, skill) units without a failed
  call): cluster = the scene (image pair: all its units and questions together, 29 in the paper's
  benchmark). Columns = the 14 paper skills; Overall = mean over skills (paper Table 3); the extra
  Text-Reference skills are left out as in the paper's Overall.
* IF-Bench ``Score``: rows = (question, language) cells (mean correctness over the rotations,
  left out when one of its calls failed); cluster = the image (680 questions share 499 images).
  Columns = (language, dimension); Avg = mean over languages of the mean over dimensions (Sec. 3.3).
* IV-Bench ``accuracy``: rows = questions, cluster = the video. One column per task; Overall =
  sample-weighted accuracy (Table 2). One table per frames/resolution configuration of a sweep:
  ``accuracy`` is the first (as ``result.json``'s ``accuracy``), ``accuracy#2``... the others
  (``UnitTable.setting`` names each).
* GroundingME ``Acc@0.5``: rows = samples = clusters. Columns = L-2 categories (``L1/L2``);
  L-1 categories and Total pool their L-2 columns (sample-weighted).
* GOBench ``SPS``: rows = images = clusters. Columns = the SPS dimensions; ``mean`` = mean over them.

Records with outcome ``error`` never count. Label names are read with fallbacks (first present):
see the ``_KEYS`` table.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lensbench.core.records import SampleRecord
from lensbench.scoring.bootstrap import UnitTable

__all__ = ["unit_tables", "HEADLINES", "label", "TABLE_BUILDERS", "UNITS", "BenchmarkUnits", "cluster_of"]

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
    "l2": ("L-2", "l2", "subtask_l2", "L2"),
    "image": ("image_id", "image", "image_name"),
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


def _index(values) -> dict[Any, int]:
    out: dict[Any, int] = {}
    for v in values:
        out.setdefault(v, len(out))
    return out


def _table(metric: str, rows: list[tuple[str, str, int, float, float]], columns: list[str], groups: Sequence[int],
           pool: str, categories: dict[str, list[int]], cluster: str, setting: dict[str, Any] | None = None
           ) -> UnitTable:
    """A table from ``rows`` of ``(unit id, cluster id, column, numerator, denominator)`` (one cell per unit)."""
    num = np.zeros((len(rows), len(columns)))
    den = np.zeros_like(num)
    for i, (_u, _c, col, n, d) in enumerate(rows):
        num[i, col], den[i, col] = n, d
    return UnitTable(metric, [r[0] for r in rows], columns, num, den, np.asarray(groups, int), [r[1] for r in rows],
                     cluster, pool, categories, setting=setting)  # type: ignore[arg-type]


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
    skills = list(_index(str(label(r, "skill")) for r in recs))
    sk = {s: i for i, s in enumerate(skills)}
    cats = {"Overall": list(range(len(skills))), **_group_cats(recs, "skill", skills, str),
            **{s: [i] for i, s in enumerate(skills)}}
    by_unit: dict[tuple[str, str], list[SampleRecord]] = defaultdict(list)
    for r in recs:
        by_unit[(str(label(r, "scene")), str(label(r, "skill")))].append(r)
    q_rows = [(r.sample_id, scene, sk[skill], _hit(r), 1.0) for (scene, skill), rs in by_unit.items()
              for r in _scored(rs)]
    s_rows = [(f"{scene}/{skill}", scene, sk[skill], float(all(r.outcome == "correct" for r in rs)), 1.0)
              for (scene, skill), rs in by_unit.items() if not any(r.outcome == "error" for r in rs)]
    zeros = [0] * len(skills)
    return {"QAcc": _table("QAcc", q_rows, skills, zeros, "macro", cats, "scene"),
            "SAcc": _table("SAcc", s_rows, skills, zeros, "macro", cats, "scene")}


def _ifbench(records: Sequence[SampleRecord]) -> dict[str, UnitTable]:
    cells_rs: dict[tuple[str, str], list[SampleRecord]] = defaultdict(list)
    for r in records:
        cells_rs[(str(label(r, "question", r.sample_id)), str(label(r, "language", "en")))].append(r)
    langs = list(_index(lg for _q, lg in cells_rs))
    dims = list(_index(str(label(rs[0], "dimension")) for rs in cells_rs.values()))
    columns = [f"{lg}/{d}" for lg in langs for d in dims]
    col = {c: i for i, c in enumerate(columns)}
    rows = [(f"{q}/{lg}", str(label(rs[0], "image", q)), col[f"{lg}/{label(rs[0], 'dimension')}"],
             sum(_hit(r) for r in rs) / len(rs), 1.0)
            for (q, lg), rs in cells_rs.items() if not any(r.outcome == "error" for r in rs)]
    groups = [langs.index(c.split("/", 1)[0]) for c in columns]
    cats = {"Avg": list(range(len(columns))),
            **{d: [col[f"{lg}/{d}"] for lg in langs] for d in dims},
            **{lg: [col[f"{lg}/{d}"] for d in dims] for lg in langs}}
    return {"Score": _table("Score", rows, columns, groups, "macro", cats, "image")}


def _ivbench(records: Sequence[SampleRecord]) -> dict[str, UnitTable]:
    by_cfg: dict[tuple, list[SampleRecord]] = defaultdict(list)
    for r in records:
        by_cfg[(label(r, "frames"), label(r, "resolution"), label(r, "config"))].append(r)
    out = {}
    for k, (cfg, rs) in enumerate(by_cfg.items()):
        recs = _scored(rs)
        tasks = list(_index(str(label(r, "task")) for r in recs))
        ti = {t: i for i, t in enumerate(tasks)}
        rows = [(r.sample_id, str(label(r, "video", r.sample_id)), ti[str(label(r, "task"))], _hit(r), 1.0)
                for r in recs]
        cats = {"Overall": list(range(len(tasks))),
                **_group_cats(recs, "task", tasks, lambda g: f"{str(g)[:1].upper()}-Avg"),
                **{t: [i] for i, t in enumerate(tasks)}}
        setting = {"frames": cfg[0], "resolution": cfg[1]} if len(by_cfg) > 1 else None
        out["accuracy" if k == 0 else f"accuracy#{k + 1}"] = _table("accuracy", rows, tasks, [0] * len(tasks),
                                                                     "micro", cats, "video", setting)
    return out


def _groundingme(records: Sequence[SampleRecord]) -> dict[str, UnitTable]:
    recs = _scored(records)

    def col_of(r):
        l1, l2 = str(label(r, "l1")), label(r, "l2")
        return l1 if l2 is None else f"{l1}/{l2}"

    columns = list(_index(col_of(r) for r in recs))
    ci = {c: i for i, c in enumerate(columns)}
    l1s: dict[str, list[int]] = {}
    for c in columns:
        l1s.setdefault(c.split("/", 1)[0], []).append(ci[c])
    rows = [(r.sample_id, r.sample_id, ci[col_of(r)], _hit(r), 1.0) for r in recs]
    cats = {"Total": list(range(len(columns))), **l1s, **{c: [i] for c, i in ci.items() if "/" in c}}
    return {"Acc@0.5": _table("Acc@0.5", rows, columns, [0] * len(columns), "micro", cats, "sample")}


def _sps_keys(rec: SampleRecord) -> dict[str, str]:
    """``{dimension title: scores key}`` of the record's SPS terms (keys like ``sps_authenticity``)."""
    out = {}
    for k in rec.scores:
        low = k.lower()
        if low.startswith("sps"):
            dim = k[3:].lstrip("_/:- ").strip() or "SPS"
            out[dim[:1].upper() + dim[1:]] = k
    return out


def _gobench(records: Sequence[SampleRecord]) -> dict[str, UnitTable]:
    recs = [r for r in _scored(records) if _sps_keys(r)]
    dims = list(_index(d for r in recs for d in _sps_keys(r)))
    di = {d: i for i, d in enumerate(dims)}
    num = np.zeros((len(recs), len(dims)))
    den = np.zeros_like(num)
    for i, r in enumerate(recs):
        for d, k in _sps_keys(r).items():
            if r.scores[k] is not None:
                num[i, di[d]], den[i, di[d]] = float(r.scores[k]), 1.0
    cats = {"mean": list(range(len(dims))), **{d: [i] for i, d in enumerate(dims)}}
    return {"SPS": UnitTable("SPS", [r.sample_id for r in recs], dims, num, den, np.zeros(len(dims), int),
                             [str(label(r, "image", r.sample_id)) for r in recs], "image", "macro", cats)}


@dataclass(frozen=True)
class BenchmarkUnits:
    """A benchmark's statistics definition (see the module docstring).

    ``tables``: records -> ``{metric: UnitTable}``; ``cluster``: the resampled cluster in words;
    ``headlines``: ``(metric key in result.json, its column, table category)`` of the
    leaderboard's cells; ``samples``: what one sample is, plural (coverage);
    ``skipped_key``: the ``counts`` key of samples left out for missing media;
    ``not_settings``: options that do not change what is measured.
    """

    tables: Callable[[Sequence[SampleRecord]], dict[str, UnitTable]]
    cluster: str
    headlines: tuple[tuple[str, str, str], ...]
    samples: str
    skipped_key: str = "n_skipped_missing"
    not_settings: frozenset[str] = frozenset({"skip_missing"})


_PATHS = frozenset({"skip_missing", "images_dir"})
UNITS: dict[str, BenchmarkUnits] = {
    "rgb-th-bench": BenchmarkUnits(_rgbth, "scene", (("QAcc", "Overall", "Overall"), ("SAcc", "Overall", "Overall")),
                                   "units"),
    "if-bench": BenchmarkUnits(_ifbench, "image", (("Score", "Avg", "Avg"),), "questions",
                               not_settings=_PATHS | {"translated_dir", "model_family", "model_params_b"}),
    "iv-bench": BenchmarkUnits(_ivbench, "video", (("accuracy", "Overall", "Overall"),), "queries",
                               not_settings=_PATHS | {"questions", "videos_dir", "frame_cache", "decode_workers"}),
    "gobench": BenchmarkUnits(_gobench, "image", (("SPS", "mean", "mean"),), "images", "n_images_missing",
                              not_settings=_PATHS | {"human_ratings", "image_cache"}),
    "groundingme": BenchmarkUnits(_groundingme, "sample", (("Acc@0.5", "Total", "Total"),), "samples"),
}
#: benchmark -> [(metric key in result.json, column, table category)], the leaderboard's headline(s).
HEADLINES: dict[str, list[tuple[str, str, str]]] = {b: list(u.headlines) for b, u in UNITS.items()}
#: benchmark name -> builder of its metric tables.
TABLE_BUILDERS: dict[str, Callable[[Sequence[SampleRecord]], dict[str, UnitTable]]] = {
    b: u.tables for b, u in UNITS.items()}


def cluster_of(benchmark: str) -> str:
    """The cluster a CI of ``benchmark`` resamples, in words (``"unit"`` for an unknown benchmark)."""
    u = UNITS.get(benchmark)
    return u.cluster if u else "unit"


def unit_tables(benchmark: str, records: Sequence[SampleRecord]) -> dict[str, UnitTable]:
    """``{metric: UnitTable}`` of a benchmark's records; ``{}`` for an unknown benchmark or no records.

    Raises nothing for odd records: a table whose values disagree with ``result.json`` is the
    caller's signal that the records are not (yet) in the expected shape.
    """
    u = UNITS.get(benchmark)
    if u is None or not records:
        return {}
    try:
        return {k: v for k, v in u.tables(records).items() if v.units}
    except (KeyError, TypeError, ValueError):
        return {}
