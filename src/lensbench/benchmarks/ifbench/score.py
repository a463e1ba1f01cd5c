"""IF-Bench scores as unit tables: soft circular and strict, per (language, dimension), image clusters.

Paper Sec. 3.3 and Tab. 2 (soft circular score), Appendix D Tab. 7 (strict score), Fig. 9
(per-language scores); the official ``bench_evaluate`` computes the same: per question and
language ``correct rotations / rotations`` (strict: all rotations right), per dimension the mean
over its questions, per language the plain mean over the 10 dimensions, overall the mean of the
two languages. One unit = a (question, language) cell, left out when one of its calls failed
(``error``); ``unparseable`` counts as wrong. Cluster: the image (680 questions share 499
images; a record naming no image is its question's own cluster).

Labels read (written by :meth:`IFBench.scored <lensbench.benchmarks.ifbench.benchmark.IFBench.scored>`):
``qid``, ``language``, ``dimension`` and ``extra["image"]``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from lensbench.benchmarks.ifbench.data import ABBREVS, COLUMNS
from lensbench.benchmarks.ifbench.prompts import LANG_FIELDS
from lensbench.core.records import SampleRecord
from lensbench.scoring.bootstrap import UnitTable
from lensbench.scoring.units import Headline, first_seen, hit, make_table

__all__ = ["CLUSTER", "HEADLINES", "cells", "score_tables", "score_metrics"]

CLUSTER = "image"
HEADLINES = (Headline("Score", "Avg", "Avg", named=False),)


def cells(records: Sequence[SampleRecord]) -> dict[tuple[str, str], list[SampleRecord]]:
    """Records grouped by (question id, language) cell, in first-seen order."""
    out: dict[tuple[str, str], list[SampleRecord]] = defaultdict(list)
    for r in records:
        out[(str(r.labels["qid"]), str(r.labels["language"]))].append(r)
    return out


def score_tables(records: Sequence[SampleRecord]) -> dict[str, UnitTable]:
    """``{"Score": soft circular, "Strict": all rotations right}``: columns ``<language>/<dimension>``
    (languages en, zh; dimensions in Tab. 2's order; others after, as first seen), grouped by language.
    Categories: ``Avg`` (mean over languages of the mean over dimensions), each dimension (mean over
    languages), each language (mean over its dimensions)."""
    by_cell = cells(records)
    langs = first_seen((lg for _q, lg in by_cell), list(LANG_FIELDS))
    dims = first_seen((str(rs[0].labels["dimension"]) for rs in by_cell.values()), ABBREVS)
    columns = [f"{lg}/{d}" for lg in langs for d in dims]
    col = {c: i for i, c in enumerate(columns)}
    groups = [langs.index(c.split("/", 1)[0]) for c in columns]
    cats = {"Avg": list(range(len(columns))),
            **{d: [col[f"{lg}/{d}"] for lg in langs] for d in dims},
            **{lg: [col[f"{lg}/{d}"] for d in dims] for lg in langs}}
    kept = [(q, lg, rs) for (q, lg), rs in by_cell.items() if not any(r.outcome == "error" for r in rs)]

    def table(metric: str, value) -> UnitTable:
        rows = [(f"{q}/{lg}", str(rs[0].extra.get("image") or q), col[f"{lg}/{rs[0].labels['dimension']}"],
                 value(rs), 1.0) for q, lg, rs in kept]
        return make_table(metric, rows, columns, cluster=CLUSTER, pool="macro", categories=cats, groups=groups)

    return {"Score": table("Score", lambda rs: sum(hit(r) for r in rs) / len(rs)),
            "Strict": table("Strict", lambda rs: 1.0 if all(r.outcome == "correct" for r in rs) else 0.0)}


def score_metrics(tables: dict[str, UnitTable]) -> dict[str, dict[str, Any]]:
    """The metrics blocks of ``tables`` (:func:`score_tables`), percent: ``Score-<lang>`` and
    ``Strict-<lang>`` (``Avg`` and the 10 abbreviations; languages with a scored cell), then ``Score``
    / ``Strict`` (the mean over languages); None where there is no value."""
    out: dict[str, dict[str, Any]] = {}
    for name in ("Score", "Strict"):
        t = tables[name]
        langs = [lg for lg in dict.fromkeys(c.split("/", 1)[0] for c in t.columns) if t.n_units(lg)]
        for lg in langs:
            out[f"{name}-{lg}"] = {"Avg": t.value(lg), **{a: t.column_value(f"{lg}/{a}") for a in ABBREVS}}
        out[name] = {c: (t.value(c) if c in t.categories else None) if langs else None for c in COLUMNS}
    return out
