"""How an RGB-Th-Bench question maps to a VLMEvalKit row / lmms-eval document (``predictions:FILE``, ``export``).

Neither harness ships RGB-Th-Bench; the layout is lensbench's, in VLMEvalKit's yes/no shape: one row per
question asked, ``id`` = the request id (``<Source N/scene>/<skill abbreviation>/<question number>``),
``scene``, ``skill``, ``question``, ``answer`` (Yes / No). The row answers request ``id``, and only if its
``question`` occurs in that request's prompt (else the question is missing, never wrong). The reply is read
with the paper's whole-word yes/no rule (README, Protocol). The third-party result files stay their own replay format.
"""

from __future__ import annotations

from typing import Any

from lensbench.core.interop import InteropMap

__all__ = ["RGBThMap"]


class RGBThMap(InteropMap):
    """RGB-Th-Bench <-> VLMEvalKit / lmms-eval rows (module docstring)."""

    benchmark = "rgb-th-bench"
    columns = ("id", "scene", "skill", "question", "answer")
    extraction = "RGB-Th-Bench's whole-word yes/no rule (RGB-Th-Bench README, Protocol)"

    def row(self, record: dict[str, Any]) -> dict[str, Any]:
        """The columns of an RGB-Th-Bench record."""
        labels = record.get("labels") or {}
        return {"id": record["request_id"], "scene": labels.get("scene", ""), "skill": labels.get("skill", ""),
                "question": (record.get("extra") or {}).get("question", ""), "answer": record.get("target") or ""}
