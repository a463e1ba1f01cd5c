"""IF-Bench dataset statistics (``lensbench data stats if-bench``): Fig. 1 (questions per
dimension and task), Fig. 8 (images per source sub-dataset), the answer-letter balance, and the
totals of the Abstract / Sec. 3.2 beside the paper's numbers (``paper/stats.json``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from lensbench.benchmarks.ifbench.data import DIMENSIONS, load_questions
from lensbench.core.resources import read_json
from lensbench.report.datastats import DatasetStats, StatTable, count_table

__all__ = ["dataset_stats"]


def dataset_stats(data_dir: Path) -> DatasetStats:
    """Statistics of the ``if_bench.json`` under ``data_dir`` (no image needed). Raises DataError
    for a missing or malformed file (naming file and field)."""
    paper = read_json(__package__, "paper", "stats.json")
    qs = load_questions(data_dir, blind=True)
    dims = Counter(q.dimension for q in qs)
    images: dict[str, set[str]] = {}
    for q in qs:
        images.setdefault(q.dataset, set()).add(q.image_name)
    task_of = {d: t for t, ds in paper["tasks"].items() for d in ds}
    tasks = Counter(task_of.get(q.dimension, "?") for q in qs)
    st = DatasetStats("IF-Bench", str(data_dir))
    st.tables.append(count_table("fig1_dimensions", "Questions per dimension", "Fig. 1", "Dimension", dims,
                                 order=list(DIMENSIONS), what="Questions", paper_total=paper["questions"]))
    st.tables.append(count_table("fig1_tasks", "Questions per task", "Fig. 1, Sec. 1", "Task", tasks,
                                 order=list(paper["tasks"]), what="Questions", paper_total=paper["questions"]))
    st.tables.append(count_table("fig8_subdatasets", "Images per source sub-dataset", "Fig. 8, App. A",
                                 "Sub-dataset", {k: len(v) for k, v in images.items()}, what="Images",
                                 paper_total=paper["images"]))
    st.tables.append(count_table("answers", "Correct answer letters", "Sec. 3.2", "Letter",
                                 Counter(q.answer for q in qs), order=["A", "B", "C", "D"], what="Questions"))
    n_img = len({(q.dataset, q.image_name) for q in qs})
    st.tables.append(StatTable("totals", "Totals", "Abstract, Sec. 3.2", ["Statistic", "This data", "Paper"], [
        ["Questions", len(qs), paper["questions"]], ["Images", n_img, paper["images"]],
        ["Dimensions", len(dims), paper["dimensions"]], ["Sub-datasets", len(images), paper["sub_datasets"]]]))
    st.notes.append(paper["note"])
    return st
