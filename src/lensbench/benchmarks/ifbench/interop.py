"""How an IF-Bench request maps to a VLMEvalKit row / lmms-eval document (``predictions:FILE``, ``export``).

Neither harness ships IF-Bench, so the layout is lensbench's, in VLMEvalKit's MCQ shape: one row per model
call, i.e. per (question, language, rotation) of the circular evaluation (IF-Bench README, Protocol: 4 rotations x 2
languages = 8 rows per question; VLMEvalKit's own circular datasets number rotations ``index + k * 1e6``,
here the rotation is a column). Columns: ``qid`` (the question id, e.g. ``SU-000``), ``language`` (``en`` /
``zh``), ``rotation`` (0-3), ``category`` (the dimension abbreviation), ``answer`` (the rotation's answer
letter), ``image``. The row answers request ``<qid>/<language>/r<rotation>``; an lmms-eval ``doc`` carries
the same fields. The reply is judged by IF-Bench's hybrid judgment (exact letter, else the run's LLM parser).
"""

from __future__ import annotations

from typing import Any

from lensbench.core.interop import InteropMap, Unit

__all__ = ["IFBenchMap"]


class IFBenchMap(InteropMap):
    """IF-Bench <-> VLMEvalKit / lmms-eval rows (module docstring)."""

    benchmark = "if-bench"
    columns = ("qid", "language", "rotation", "category", "answer", "image")
    extraction = ("IF-Bench's hybrid judgment (an exact letter A-D, else the run's LLM answer parser; README, "
                  "Protocol)")

    def unit(self, row: dict[str, Any]) -> Unit:
        """Request ``<qid>/<language>/r<rotation>``; ValueError for an empty qid or a rotation not 0-3."""
        qid, lang, rot = (str(row.get(k, "")).strip() for k in ("qid", "language", "rotation"))
        if not qid or not lang or rot not in ("0", "1", "2", "3"):
            raise ValueError(f"qid {qid!r}, language {lang!r}, rotation {rot!r} name no IF-Bench request "
                             "(a qid, a language as the run names it: en / zh, rotation 0-3)")
        return Unit(f"{qid}/{lang}/r{rot}")

    def row(self, record: dict[str, Any]) -> dict[str, Any]:
        """The identifying columns of an IF-Bench record."""
        labels = record.get("labels") or {}
        return {"qid": labels.get("qid", ""), "language": labels.get("language", ""),
                "rotation": labels.get("rotation", ""), "category": labels.get("dimension", ""),
                "answer": record.get("target") or "", "image": (record.get("extra") or {}).get("image", "")}
