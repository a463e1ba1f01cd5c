"""How a GroundingME item maps to VLMEvalKit's and lmms-eval's rows (``--model predictions:FILE``, ``export``).

* VLMEvalKit (``vlmeval/dataset/groundingme.py``, dataset ``GroundingME``): the predictions table is
  ``groundingme.tsv`` without its images, plus ``prediction``: ``index`` (= the sample id, as
  :func:`~lensbench.benchmarks.groundingme.data.load_tsv` reads it), ``question`` (the description),
  ``answer`` (the box literal ``[x1, y1, x2, y2]``, empty for Rejection), ``width``, ``height``,
  ``subtask_l1``, ``subtask_l2``. Its evaluator pairs rows with its own TSV by position, so an export keeps
  the run's sample order.
* lmms-eval (``lmms_eval/tasks/groundingme``, task ``groundingme``, HF ``lirang04/GroundingME`` split test):
  ``doc`` = ``id``, ``description``, ``bbox`` (list or null), ``subtask_l1``, ``subtask_l2``, ``width``,
  ``height`` (the image is dropped from the log); ``doc_id`` is the position, so the item is ``doc["id"]``.

A row answers the sample whose id it names, and only if its description occurs in that sample's prompt.
Both harnesses extract the box themselves (several coordinate readings, best IoU kept); lensbench parses the
raw reply with its own rule (``bbox_2d`` JSON, the run's ``--bbox-format``; GroundingME README, Protocol).
"""

from __future__ import annotations

from typing import Any

from lensbench.core.interop import InteropMap, Unit

__all__ = ["GroundingMEMap"]


def _box(target: Any) -> str:
    return "" if not target else "[" + ", ".join(f"{v:g}" for v in target) + "]"


def _id(sample_id: str) -> int | str:
    return int(sample_id) if sample_id.isdigit() else sample_id


class GroundingMEMap(InteropMap):
    """GroundingME <-> VLMEvalKit / lmms-eval (module docstring)."""

    benchmark = "groundingme"
    columns = ("question", "answer", "width", "height", "subtask_l1", "subtask_l2")
    doc_fields = ("id", "description", "bbox", "subtask_l1", "subtask_l2", "width", "height")
    extraction = ("lensbench's GroundingME box parser (the 'bbox_2d' JSON object read in the run's --bbox-format; "
                  "VLMEvalKit and lmms-eval try several coordinate readings and keep the best IoU)")

    def unit(self, row: dict[str, Any]) -> Unit:
        """The sample named by ``index``; its ``question`` (description) must be in the prompt."""
        key = row.get("index", "").strip()
        if not key:
            raise ValueError("empty 'index'")
        return Unit(key, row.get("question") or None)

    def doc_unit(self, doc_id: Any, doc: dict[str, Any]) -> Unit:
        """The sample named by ``doc["id"]``; its ``description`` must be in the prompt."""
        if doc.get("id") is None:
            raise ValueError("doc has no 'id'")
        return Unit(str(doc["id"]).strip(), doc.get("description") or None)

    def row(self, record: dict[str, Any]) -> dict[str, Any]:
        """VLMEvalKit's columns of a GroundingME record."""
        extra, labels = record.get("extra") or {}, record.get("labels") or {}
        return {"index": record["sample_id"], "question": extra.get("description", ""),
                "answer": _box(record.get("target")), "width": extra.get("width", ""),
                "height": extra.get("height", ""), "subtask_l1": labels.get("L-1", ""),
                "subtask_l2": labels.get("L-2", "")}

    def doc(self, record: dict[str, Any]) -> dict[str, Any]:
        """lmms-eval's ``doc`` of a GroundingME record (the HF fields, without the image)."""
        extra, labels = record.get("extra") or {}, record.get("labels") or {}
        return {"id": _id(record["sample_id"]), "description": extra.get("description", ""),
                "bbox": record.get("target"), "subtask_l1": labels.get("L-1", ""),
                "subtask_l2": labels.get("L-2", ""), "width": extra.get("width"), "height": extra.get("height")}

    def target(self, record: dict[str, Any]) -> str:
        """lmms-eval's ``doc_to_target`` of the task is ``""``."""
        return ""
