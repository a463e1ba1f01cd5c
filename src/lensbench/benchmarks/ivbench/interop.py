"""How an IV-Bench query maps to a VLMEvalKit row / lmms-eval document (``predictions:FILE``, ``export``).

Neither harness ships IV-Bench; the layout is lensbench's, in VLMEvalKit's MCQ shape: one row per query,
``id`` = the request id (``<video_id>/<data_id>``), ``video_id``, ``category`` (the task), ``question``,
``options`` (the shuffled, lettered options as sent, one ``x. text`` per line), ``answer`` (the letter). The
row answers request ``id``, and only if its ``question`` occurs in that request's prompt. The options are
shuffled per item with the run's seed, so a file answers a run with the same seed and option settings. The
reply is read with IV-Bench's option-letter parser (IV-Bench README, Protocol; unparseable = wrong, counted).
"""

from __future__ import annotations

from typing import Any

from lensbench.core.interop import InteropMap

__all__ = ["IVBenchMap"]


class IVBenchMap(InteropMap):
    """IV-Bench <-> VLMEvalKit / lmms-eval rows (module docstring)."""

    benchmark = "iv-bench"
    columns = ("id", "video_id", "category", "question", "options", "answer")
    extraction = "IV-Bench's option-letter parser (IV-Bench README, Protocol)"

    def row(self, record: dict[str, Any]) -> dict[str, Any]:
        """The columns of an IV-Bench record."""
        labels, extra = record.get("labels") or {}, record.get("extra") or {}
        opts = extra.get("options") or {}
        return {"id": record["request_id"], "video_id": labels.get("video_id", ""), "category": labels.get("task", ""),
                "question": extra.get("question", ""), "options": "\n".join(f"{k}. {v}" for k, v in opts.items()),
                "answer": record.get("target") or ""}
