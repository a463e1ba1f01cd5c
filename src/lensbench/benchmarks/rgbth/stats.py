"""RGB-Th-Bench dataset statistics (``lensbench data stats rgb-th-bench``): questions per skill
(Sec. 3.2's 14 skills, the release's two extra skills apart), scenes per source, and the counts
of Sec. 1 / Sec. 3.1 beside the paper's numbers (``paper/stats.json``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from lensbench.benchmarks.rgbth.data import EXTRA_SKILLS, SKILLS, load_units
from lensbench.core.resources import read_json
from lensbench.report.datastats import DatasetStats, StatTable, count_table

__all__ = ["dataset_stats"]


def dataset_stats(data_dir: Path) -> DatasetStats:
    """Statistics of the ``Data`` folder ``data_dir`` (``Source */<scene>/questions.json``; units
    whose images are missing are left out, as ``--skip-missing`` does). Raises DataError for
    malformed files or when no unit has its images."""
    paper = read_json(__package__, "paper", "stats.json")
    units = load_units(Path(data_dir), include_extra=True, skip_missing=True)
    main = [u for u in units if not u.extra]
    per_skill = Counter()
    for u in units:
        per_skill[u.skill] += len(u.qas)
    scenes = {u.scene_key for u in units}
    n_q = sum(len(u.qas) for u in main)
    st = DatasetStats("RGB-Th-Bench", str(data_dir))
    st.tables.append(count_table("skills", "Questions per skill (the paper's 14)", "Sec. 1, Sec. 3.2", "Skill",
                                 {k: per_skill[k] for k in SKILLS if k in per_skill},
                                 {k: paper["questions_per_skill"] for k in SKILLS}, list(SKILLS), what="Questions",
                                 paper_total=paper["questions"]))
    extra = {k: per_skill[k] for k in EXTRA_SKILLS if k in per_skill}
    if extra:
        st.tables.append(count_table("extra_skills", "Questions per extra skill (release only)", "release data",
                                     "Skill", extra, order=list(EXTRA_SKILLS), what="Questions"))
    st.tables.append(count_table("sources", "Scenes per source", "Sec. 3.1", "Source",
                                 Counter(k.split("/")[0] for k in scenes), what="Scenes", paper_total=paper["pairs"]))
    sizes = Counter(len(u.qas) for u in main)
    st.tables.append(StatTable("totals", "Totals", "Sec. 1, Sec. 3.1", ["Statistic", "This data", "Paper"], [
        ["Questions (14 skills)", n_q, paper["questions"]],
        ["RGB-thermal pairs (scenes)", len(scenes), paper["pairs"]],
        ["Images", 2 * len(scenes), paper["images"]],
        ["Skills", len({u.skill for u in main}), paper["skills"]],
        ["Questions per scene", round(n_q / len(scenes), 2) if scenes else None, paper["questions_per_rgb_image"]],
        ["Questions per (scene, skill): most common", sizes.most_common(1)[0][0] if sizes else None,
         paper["questions_per_image_and_skill"]],
        ["(scene, skill) units with another number of questions", sum(v for k, v in sizes.items()
                                                                        if k != paper["questions_per_image_and_skill"]),
         0]]))
    st.notes.append(paper["note"])
    return st
