"""IV-Bench dataset statistics (``lensbench data stats iv-bench``): Fig. 1(b) (queries per task,
perception / reasoning), Fig. 1(a) (video categories, when the data carries them) and the totals
of the Abstract beside the paper's numbers (``paper/stats.json``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from lensbench.benchmarks.ivbench.data import PERCEPTION, REASONING, TASKS, find_question_file, load_queries
from lensbench.core.resources import read_json
from lensbench.report.datastats import DatasetStats, StatTable, count_table

__all__ = ["dataset_stats"]


def dataset_stats(data_dir: Path) -> DatasetStats:
    """Statistics of the question jsonl under ``data_dir`` (no video or image needed). Raises
    DataError for a missing or malformed file."""
    paper = read_json(__package__, "paper", "stats.json")
    qfile = find_question_file(Path(data_dir))
    qs = load_queries(qfile)
    st = DatasetStats("IV-Bench", str(qfile))
    st.tables.append(count_table("fig1b_tasks", "Queries per task", "Fig. 1(b)", "Task",
                                 Counter(q.question_type for q in qs), order=TASKS, what="Queries",
                                 paper_total=paper["queries"]))
    groups = Counter(q.group for q in qs)
    st.tables.append(StatTable("fig1b_groups", "Perception and reasoning", "Fig. 1(b), Sec. 1",
                               ["Group", "Tasks", "Queries", "Paper tasks"], [
                                   ["Perception", len({q.question_type for q in qs if q.question_type in PERCEPTION}),
                                    groups["Perception"], paper["perception_tasks"]],
                                   ["Reasoning", len({q.question_type for q in qs if q.question_type in REASONING}),
                                    groups["Reasoning"], paper["reasoning_tasks"]]]))
    n_videos = len({q.video_id for q in qs})
    st.tables.append(StatTable("totals", "Totals", "Abstract", ["Statistic", "This data", "Paper"], [
        ["Videos", n_videos, paper["videos"]], ["Queries", len(qs), paper["queries"]],
        ["Tasks", len({q.question_type for q in qs}), paper["tasks"]],
        ["Video categories", None, len(paper["categories"])]]))
    st.tables.append(count_table("granularity", "Queries per answer granularity (release field)", "release data",
                                 "Granularity", Counter((q.granularity or "?").strip().capitalize() for q in qs),
                                 what="Queries"))
    st.notes.append(paper["note"])
    st.notes.append("Fig. 1(a) categories named by the paper: " + ", ".join(paper["categories"]))
    return st
