"""GOBench dataset statistics (``lensbench data stats gobench``): Fig. 2 / Sec. 1 (scenarios and
images per optical category, generations per scenario) beside the paper's numbers
(``paper/stats.json``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from lensbench.benchmarks.gobench.load import find_records_file, load_records
from lensbench.benchmarks.gobench.records import CATEGORIES
from lensbench.core.resources import read_json
from lensbench.report.datastats import DatasetStats, StatTable, count_table

__all__ = ["dataset_stats"]


def dataset_stats(data_dir: Path) -> DatasetStats:
    """Statistics of the ``data_total.json`` under ``data_dir`` (images need not be present).
    Raises DataError for a missing or malformed file."""
    paper = read_json(__package__, "paper", "stats.json")
    path = find_records_file(Path(data_dir))
    recs = load_records(path)
    order = list(CATEGORIES.values())
    scen = {r.scenario: r for r in recs}
    st = DatasetStats("GOBench", str(path))
    st.tables.append(count_table("fig2_scenarios", "Scenarios per optical category", "Fig. 2, Sec. 1", "Category",
                                 Counter(r.category_name for r in scen.values()), paper["scenarios"], order,
                                 what="Scenarios", paper_total=paper["scenarios_total"]))
    st.tables.append(count_table("fig2_images", "Images per optical category", "Fig. 2, Sec. 1", "Category",
                                 Counter(r.category_name for r in recs), order=order, what="Images",
                                 paper_total=paper["images_total"]))
    per = Counter(Counter(r.scenario for r in recs).values())
    st.tables.append(StatTable("generations", "Images per scenario", "Sec. 1 (three generators per scenario)",
                               ["Images per scenario", "Scenarios"], [[k, per[k]] for k in sorted(per)]))
    st.tables.append(StatTable("subcategories", "Subcategories named by the paper", "Sec. 2.1",
                               ["Category", "Subcategories"],
                               [[c, "; ".join(s)] for c, s in paper["subcategories"].items()]))
    st.notes.append(paper["note"])
    st.notes.append(f"{sum(r.image_path is not None for r in recs)} of the {len(recs)} images are present in "
                    f"{path.parent}")
    return st
