"""How a GOBench image maps to VLMEvalKit's and lmms-eval's rows (``--model predictions:FILE``, ``export``).

* VLMEvalKit (``vlmeval/dataset/gobench.py``, dataset ``GOBench``, HF ``bonnot/GOBench`` ``GOBench.tsv``):
  the predictions table is ``GOBench.tsv`` without its images, plus ``prediction``: ``index``, ``question``,
  ``answer`` (the human means: ``Reality Assessment Score: x`` / ``Aesthetics Rating: y`` / ``Instruction
  Consistency Rating: z``). An ``index`` that is a record index (``direct_light_images_1.1``) names that image;
  an integer ``index`` is a row of ``GOBench.tsv`` and names the image that row was matched to when the run
  reads the same TSV (``--human-ratings GOBench.tsv``: the image's request carries ``replay_match`` =
  ``["gobench-tsv", index]``); without it such a row matches no image. VLMEvalKit's evaluator reads
  ``prediction`` and ``answer`` from the file itself, so an export writes the ground truth into ``answer``.
* lmms-eval has no GOBench task; its samples layout is read with ``doc`` = the VLMEvalKit columns (``index``
  included).

lensbench parses the raw reply with the run's ``--parser`` (the paper's rules by default; ``vlmevalkit``
reproduces VLMEvalKit's reading of the same replies, GOBench README).
"""

from __future__ import annotations

import re
from typing import Any

from lensbench.core.interop import InteropMap, Unit

__all__ = ["GOBenchMap", "TSV_KEY"]

#: the first element of the match key of a ``GOBench.tsv`` row number
TSV_KEY = "gobench-tsv"


def _gt_text(target: Any) -> str:
    """VLMEvalKit's ``answer`` cell of a record's human ground truth ("" without one)."""
    if not isinstance(target, dict):
        return ""
    names = (("authenticity", "Reality Assessment Score"), ("aesthetics", "Aesthetics Rating"),
             ("fidelity", "Instruction Consistency Rating"))
    lines = [f"{label}: {target[key]:g}" for key, label in names if target.get(key) is not None]
    return "\n".join(x for x in lines if x)


class GOBenchMap(InteropMap):
    """GOBench <-> VLMEvalKit / lmms-eval rows (module docstring)."""

    benchmark = "gobench"
    columns = ("question", "answer")
    doc_fields = ("index", "question", "answer")
    extraction = "the run's GOBench reply parser (--parser: paper by default, or vlmevalkit; GOBench README)"

    def unit(self, row: dict[str, Any]) -> Unit:
        """The image named by ``index`` (module docstring); ValueError for an empty index."""
        key = str(row.get("index", "")).strip()
        if not key:
            raise ValueError("empty 'index'")
        return Unit((TSV_KEY, key) if re.fullmatch(r"-?\d+", key) else key)

    def refuse(self, row: dict[str, Any]) -> str | None:
        """Why ``row`` is not a GOBench row: an ``answer`` cell that is not rating text (e.g. a GroundingME box)."""
        ans = str(row.get("answer", ""))
        if ans.strip() and not re.search(r"Rating|Assessment", ans):
            return f"column 'answer' holds {ans[:40]!r}, not GOBench's rating text"
        return None

    def row(self, record: dict[str, Any]) -> dict[str, Any]:
        """VLMEvalKit's columns of a GOBench record (``index`` = the record index)."""
        return {"index": record["sample_id"], "question": "",
                "answer": _gt_text(record.get("target"))}

    def doc(self, record: dict[str, Any]) -> dict[str, Any]:
        """lmms-eval ``doc``: the VLMEvalKit columns, ``index`` included."""
        return self.row(record)
