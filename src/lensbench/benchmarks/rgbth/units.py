"""RGB-Th-Bench's unit tables: QAcc and SAcc per skill, the scene as the resampled cluster.

Paper Sec. 3.4: QAcc = % questions right (rows: the questions); SAcc = % (scene, skill) units
with ALL their questions right (rows: the units; a unit with a failed call is left out). Table 3:
a prompt group's value is the mean of its skills, Overall the mean of the 14 paper skills; the
Text-Reference skills (``--include-extra-skills``) are columns of their own, in no group and not
in Overall. Cluster: the scene (image pair) with all its units and questions (29 in the paper's
benchmark). Columns: the skill abbreviations in the paper's order, others after as first seen.

Labels read (:meth:`RGBThBench.score <lensbench.benchmarks.rgbth.benchmark.RGBThBench.score>`
writes them): ``scene``, ``abbrev``, ``group``, ``extra`` (True for a Text-Reference skill).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from lensbench.benchmarks.rgbth.data import PAPER_ABBREVS
from lensbench.core.records import SampleRecord
from lensbench.scoring.bootstrap import UnitTable
from lensbench.scoring.units import Headline, hit, label_categories, make_table, scored

__all__ = ["CLUSTER", "HEADLINES", "skill_tables"]

CLUSTER = "scene"
HEADLINES = (Headline("QAcc", "Overall", "Overall"), Headline("SAcc", "Overall", "Overall"))


def _is_extra(r: SampleRecord) -> bool:
    return r.labels.get("extra") is True


def skill_tables(records: Sequence[SampleRecord], *, extra_skills: bool = False) -> dict[str, UnitTable]:
    """``{"QAcc": table, "SAcc": table}`` of one record per question (see the module docstring); the
    Text-Reference skills' columns only with ``extra_skills`` (the CIs resample the paper's 14)."""
    recs = [r for r in records if extra_skills or not _is_extra(r)]
    skills = [str(s) for s in dict.fromkeys(r.labels["abbrev"] for r in recs)]
    skills = [a for a in PAPER_ABBREVS if a in skills] + [a for a in skills if a not in PAPER_ABBREVS]
    col = {s: i for i, s in enumerate(skills)}
    extra = {str(r.labels["abbrev"]) for r in recs if _is_extra(r)}
    core = [i for i, s in enumerate(skills) if s not in extra]
    groups = label_categories([r for r in recs if not _is_extra(r)], lambda r: str(r.labels["abbrev"]), "group",
                              skills)
    cats = {"Overall": core, **{g: sorted(ix) for g, ix in groups.items()}, **{s: [i] for s, i in col.items()}}
    by_unit: dict[tuple[str, str], list[SampleRecord]] = defaultdict(list)
    for r in recs:
        by_unit[(str(r.labels["scene"]), str(r.labels["abbrev"]))].append(r)
    q_rows = [(r.sample_id, scene, col[skill], hit(r), 1.0) for (scene, skill), rs in by_unit.items()
              for r in scored(rs)]
    s_rows = [(f"{scene}/{skill}", scene, col[skill], float(all(r.outcome == "correct" for r in rs)), 1.0)
              for (scene, skill), rs in by_unit.items() if not any(r.outcome == "error" for r in rs)]
    return {m: make_table(m, rows, skills, cluster=CLUSTER, pool="macro", categories=cats)
            for m, rows in (("QAcc", q_rows), ("SAcc", s_rows))}
