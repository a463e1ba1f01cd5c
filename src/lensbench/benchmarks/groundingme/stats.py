"""GroundingME dataset statistics (``lensbench data stats groundingme``): Table 2 (object classes,
image and instance size ranges, instance-area-ratio, description-length and intra-class count
quartiles) and Fig. 3 (the L-1 / L-2 distribution) beside the paper's numbers
(``paper/stats.json``).

Sizes are the square root of the area in pixels (Table 2); instance figures are over items with
a box (Rejection items have none); the description length counts whitespace-separated words.
Object classes and intra-class counts need the ``object_class`` / ``class_count`` / ``source``
columns that ``lensbench groundingme export`` writes (the official release has none); the
intra-class count leaves out HR-Bench-style (``source = small``) items, as Table 2's caption does.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any

from lensbench.benchmarks.groundingme.data import GMSample, load_groundingme
from lensbench.benchmarks.groundingme.taxonomy import L1_ORDER, L2_ORDER
from lensbench.core.resources import read_json
from lensbench.report.datastats import DatasetStats, StatTable, count_table, quartiles

__all__ = ["dataset_stats", "construction_columns"]


def construction_columns(samples: list[GMSample]) -> dict[str, dict[str, Any]]:
    """``{id: {"object_class", "class_count", "source"}}`` for parquet-backed samples whose file
    has those columns (written by ``groundingme export``); empty otherwise."""
    from lensbench.core.extras import require

    pq = require("pyarrow.parquet", "data", "reading parquet files")
    out: dict[str, dict[str, Any]] = {}
    files: dict[str, list[GMSample]] = {}
    for s in samples:
        if s.image.kind == "parquet":
            files.setdefault(s.image.path, []).append(s)
    for f, group in files.items():
        names = set(pq.ParquetFile(f).schema_arrow.names)
        cols = [c for c in ("object_class", "class_count", "source") if c in names]
        if not cols:
            continue
        rows = pq.read_table(f, columns=cols).to_pylist()
        for s in group:
            out[s.id] = rows[s.image.row]
    return out


def _rng(vals: list[float]) -> str | None:
    return f"{round(min(vals)):,} - {round(max(vals)):,}" if vals else None


def _tuple(vals: list[float]) -> str:
    return "(" + ", ".join(f"{v:g}" for v in vals) + ")"


def _q(vals: list[float], fmt: str) -> str | None:
    q = quartiles(vals)
    return None if q is None else "(" + ", ".join(fmt.format(v) for v in q) + ")"


def dataset_stats(data_dir: Path) -> DatasetStats:
    """Statistics of a GroundingME folder (HF parquet, ``datasets`` Arrow, VLMEvalKit TSV, or a
    ``groundingme export`` folder). Raises DataError for unloadable data."""
    paper = read_json(__package__, "paper", "stats.json")
    p2 = paper["table2"]
    samples = load_groundingme(Path(data_dir))
    extra = construction_columns(samples)
    img = [math.sqrt(s.width * s.height) for s in samples]
    boxed = [s for s in samples if s.bbox is not None]
    inst = [math.sqrt(max(0.0, s.bbox[2] - s.bbox[0]) * max(0.0, s.bbox[3] - s.bbox[1])) for s in boxed]
    ratio = [100.0 * v * v / (s.width * s.height) for v, s in zip(inst, boxed)]
    words = [len(s.description.split()) for s in samples]
    classes = {e["object_class"] for e in extra.values() if e.get("object_class")}
    counts = [e["class_count"] for e in extra.values() if e.get("class_count") is not None
              and e.get("source") != "small"]
    st = DatasetStats("GroundingME", str(data_dir))
    pq = p2["instance_area_ratio_quartiles_pct"]
    st.tables.append(StatTable("tab2", "Statistics", "Table 2", ["Statistic", "This data", "Paper"], [
        ["Object Class", len(classes) if extra else None, p2["object_classes"]],
        ["Image Size", _rng(img), _rng(p2["image_size_range"])],
        ["Instance Size", _rng(inst), _rng(p2["instance_size_range"])],
        ["Instance Area Ratio Quartile", _q(ratio, "{:.2g}%"), f"({pq[0]}%, {pq[1]}%, {pq[2]}%)"],
        ["Description Length Quartile", _q(words, "{:g}"), _tuple(p2["description_length_quartiles"])],
        ["Intra-Class Count Quartile", _q(counts, "{:g}"), _tuple(p2["intra_class_count_quartiles"])]]))
    numeric = [("Image size (px)", img), ("Instance size (px)", inst), ("Instance area ratio (%)", ratio),
               ("Description length (words)", words), ("Intra-class count", counts)]
    st.tables.append(StatTable("tab2_numbers", "Table 2 figures of this data", "Table 2",
                               ["Statistic", "n", "min", "Q1", "median", "Q3", "max"],
                               [[name, len(v), *((min(v), *quartiles(v), max(v)) if v else (None,) * 5)]
                                for name, v in numeric]))
    st.tables.append(count_table("fig3_l1", "Items per L-1 category", "Fig. 3, Sec. 3.3.1", "L-1",
                                 Counter(s.subtask_l1 for s in samples), paper["fig3_l1"], L1_ORDER, what="Items"))
    order = [f"{a}/{b}" for a in L1_ORDER for b in L2_ORDER[a]]
    st.tables.append(count_table("fig3_l2", "Items per L-2 subcategory", "Fig. 3, Sec. 3.3.1", "L-1/L-2",
                                 Counter(f"{s.subtask_l1}/{s.subtask_l2}" for s in samples), paper["fig3_l2"], order,
                                 what="Items"))
    st.distributions = {name: [float(x) for x in v] for name, v in numeric if v}
    if not extra:
        st.notes.append("No object_class / class_count columns (the official release has none): Object Class "
                        "and the Intra-Class Count Quartile need a folder written by 'lensbench groundingme export'.")
    st.notes.append(paper["note"])
    return st
