"""``grounding-rej``: a documented variant of GroundingME (README "The grounding-rej variant"), registered
under its own name. Grounding with rejection on any set of (image, description, box-or-null) items:
GroundingME's in-domain evaluation of the data-mixture study (paper Sec. 5.3, Tab. 5: RefCOCOg_val
positives, RefCOCOg_rej_val negatives built the same way as the training negatives). It stays in
GroundingME's folder because its prompt, parse, scoring and paper table (Tab. 5, in :mod:`.reproduce`)
are GroundingME's; it has its own demo data (:func:`.demo.write_items_demo`).

Everything but loading and aggregation is GroundingME's (:class:`.benchmark.GroundingME`): the
Table 9 prompt after the image, greedy decoding, the strict ``bbox_2d`` parse, ``--bbox-format``,
IoU >= 0.5 for a box item and ``{"bbox_2d": null}`` for a null item.

Data (``--data-dir DIR``): ``DIR/items.jsonl``, one grounding item per line (``id``, ``image``
path relative to DIR or absolute, ``description``, ``bbox`` [x1, y1, x2, y2] original pixels or
null, ``width``, ``height``, optional ``set`` naming the item's set, e.g. ``RefCOCOg_val``), as
``lensbench train groundingme data`` writes it. Records carry ``L-1`` = ``Positive`` /
``Rejection`` and ``L-2`` = the set.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lensbench.benchmarks.base import Loaded, RunResult
from lensbench.benchmarks.groundingme.benchmark import GroundingME
from lensbench.benchmarks.groundingme.data import GMSample, ImageSource
from lensbench.benchmarks.groundingme.items import read_items_file
from lensbench.benchmarks.groundingme.report import run_label
from lensbench.core.errors import DataError
from lensbench.core.records import SampleRecord
from lensbench.core.resources import read_json
from lensbench.benchmarks.groundingme.score import hit_at
from lensbench.report.tables import render_table
from lensbench.scoring.bootstrap import UnitTable
from lensbench.scoring.units import Headline, make_table, nonempty, scored

__all__ = ["GroundingRejectionSet", "load_items", "set_metrics", "macro_table"]

ITEMS_FILE = "items.jsonl"


def load_items(data_dir: Path) -> list[GMSample]:
    """Samples of ``data_dir/items.jsonl`` (module docstring). Raises DataError naming the file,
    line and field (missing image files included)."""
    f = Path(data_dir) / ITEMS_FILE
    items = read_items_file(f)
    seen: set[str] = set()
    out = []
    for ln, it in enumerate(items, 1):
        if it["id"] in seen:
            raise DataError(f, f"item {ln}: duplicate id {it['id']!r}", field="id")
        seen.add(it["id"])
        box = tuple(float(v) for v in it["bbox"]) if it.get("bbox") is not None else None
        neg = box is None
        out.append(GMSample(id=it["id"], description=it["description"], bbox=box,
                            subtask_l1="Rejection" if neg else "Positive",
                            subtask_l2=str(it.get("set") or ("negatives" if neg else "positives")),
                            width=it["width"], height=it["height"], image=ImageSource("file", it["image"])))
    return out


def _pct(xs: list[bool]) -> float | None:
    return 100.0 * sum(xs) / len(xs) if xs else None


def _negative(r: SampleRecord) -> bool:
    return r.labels["L-1"] == "Rejection"


def macro_table(records: Sequence[SampleRecord]) -> UnitTable:
    """Acc@0.5 of the positives and of the negatives (columns, one group each) and their mean
    ``Macro_Average`` (Tab. 5); rows: the scored items, each its own cluster."""
    cols = ["Positives", "Negatives"]
    rows = [(r.sample_id, r.sample_id, int(_negative(r)), float(hit_at(r.scores, 0.5)), 1.0) for r in scored(records)]
    return make_table("Acc@0.5", rows, cols, cluster="sample", pool="macro", groups=[0, 1],
                      categories={"Macro_Average": [0, 1], "Positives": [0], "Negatives": [1]})


def set_metrics(records: list[SampleRecord]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(metrics, counts)`` in percent: ``Acc@0.5`` per set (``L-2``), ``Positives``, ``Negatives``,
    ``Macro_Average`` (mean of the two, Tab. 5; from :func:`macro_table`) and ``Total``; ``mIoU`` of
    positives; ``Rejection rate`` (``Positives`` = false rejections, ``Negatives`` = correct ones);
    ``Unparseable rate``. Transport errors are left out and counted in ``n_error``."""
    ok = scored(records)
    by_set: dict[str, list[SampleRecord]] = defaultdict(list)
    for r in ok:
        by_set[r.labels["L-2"]].append(r)
    pos = [r for r in ok if not _negative(r)]
    neg = [r for r in ok if _negative(r)]

    def acc(rs: list[SampleRecord]) -> float | None:
        return _pct([hit_at(r.scores, 0.5) for r in rs])

    t = macro_table(records)
    acc5 = {name: acc(rs) for name, rs in by_set.items()}
    acc5.update(Positives=t.column_value("Positives"), Negatives=t.column_value("Negatives"), Total=acc(ok))
    acc5["Macro_Average"] = t.value("Macro_Average") if pos and neg else None
    metrics = {"Acc@0.5": acc5,
               "mIoU": {"Positives": _pct([r.scores.get("iou") or 0.0 for r in pos])},
               "Rejection rate": {"Positives": _pct([bool(r.extra.get("rejected")) for r in pos]),
                                  "Negatives": _pct([bool(r.extra.get("rejected")) for r in neg])},
               "Unparseable rate": {"Total": _pct([r.outcome == "unparseable" for r in ok])}}
    counts = {"n": len(ok), "n_error": len(records) - len(ok), "n_positive": len(pos), "n_negative": len(neg),
              "n_unparseable": sum(r.outcome == "unparseable" for r in ok),
              "sets": {name: len(rs) for name, rs in by_set.items()}}
    return metrics, counts


class GroundingRejectionSet(GroundingME):
    """Grounding with rejection on an items file (GroundingME Sec. 5.3 / Tab. 5 in-domain sets)."""

    name = "grounding-rej"
    title = "Grounding with rejection (GroundingME Sec. 5.3, Tab. 5)"
    headline = "Acc@0.5 Macro_Average (Tab. 5)"
    headlines = (Headline("Acc@0.5", "Macro_Average", "Macro_Average"),)
    layout = None  # items files are built ('lensbench train groundingme data'), not downloaded
    description = ("grounding with rejection on a built items file (RefCOCOg val + negatives, 'lensbench train "
                   "groundingme data'): positives' boxes and negatives' rejection, averaged")
    n_samples = None  # an items file of the user's own construction: no fixed size
    #: GroundingME's pieces, but demo data in this variant's own items format (:meth:`load` reads no TSV)
    pieces = {**GroundingME.pieces, "demo": "lensbench.benchmarks.groundingme.demo:write_items_demo"}

    @classmethod
    def unit_tables(cls, records: Sequence[SampleRecord]) -> dict[str, UnitTable]:
        """Acc@0.5 of positives, negatives and their mean (:func:`macro_table`)."""
        return nonempty({"Acc@0.5": macro_table(records)})

    def load(self, data_dir: Path) -> Loaded:
        """:func:`load_items` of ``data_dir``."""
        return Loaded(load_items(Path(data_dir)))

    def aggregate(self, records: list[SampleRecord], noted: Mapping[str, Any] | None = None
                  ) -> tuple[dict[str, Any], dict[str, Any]]:
        """:func:`set_metrics`."""
        return set_metrics(records)

    def tables(self, results: Sequence[RunResult], fmt: str = "md", with_paper: bool = False) -> str:
        """One row per run: accuracy per set, Macro_Average, rejection rates (Tab. 5 layout);
        ``with_paper`` adds the paper's Tab. 5 columns as rows."""
        sets = list(dict.fromkeys(k for r in results for k in r.counts.get("sets", {})))
        cols = ["Model", *sets, "Macro_Average", "False rejections", "Unparseable", "n"]
        rows = [[run_label(r), *[r.metrics["Acc@0.5"].get(k) for k in sets], r.metrics["Acc@0.5"].get("Macro_Average"),
                 r.metrics["Rejection rate"].get("Positives"), r.metrics["Unparseable rate"].get("Total"),
                 r.counts.get("n")] for r in results]
        if with_paper:
            t5 = read_json(__package__, "paper", "table5.json")
            for i, col in enumerate(t5["columns"]):
                rows.append([f"{t5['model']} {col} (paper)", *[t5["rows"].get(k, [None] * 9)[i] for k in sets],
                             t5["rows"]["Macro_Average"][i], None, None, None])
        return render_table(cols, rows, fmt, title="Grounding with rejection (GroundingME Tab. 5 layout): Acc@0.5 (%)",
                            digits=1)
