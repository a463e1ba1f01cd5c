"""The App. C table: human rejection verification figures per reviewer beside the paper's."""

from __future__ import annotations

import json
from typing import Any

from lensbench.core.resources import read_json
from lensbench.report.tables import render_table

__all__ = ["paper_appc", "render_verification"]

_COLS = ("n", "tp", "fp", "fn", "tn", "accuracy", "precision", "recall", "f1")


def paper_appc() -> dict[str, Any]:
    """App. C's published figures (``benchmarks/groundingme/paper/appc.json``)."""
    return read_json("lensbench.benchmarks.groundingme", "paper", "appc.json")


def render_verification(scores: dict[str, dict[str, Any]], agree: dict[str, dict[str, Any]], fmt: str = "md") -> str:
    """``scores`` (reviewer -> :func:`binary_scores` figures) as a table with the paper's row last,
    plus the agreement figures of ``agree`` when given; ``fmt`` md | csv | json. Raises
    ValueError for another format."""
    paper = paper_appc()
    if fmt == "json":
        return json.dumps({"reviewers": scores, "agreement": agree, "paper": paper}, indent=1) + "\n"
    rows = [[r, *(s.get(c) for c in _COLS)] for r, s in scores.items()]
    rows.append(["paper (App. C)", paper["n"], None, None, None, None, paper["accuracy"], paper["precision"],
                 paper["recall"], paper["f1"]])
    out = render_table(["reviewer", *_COLS], rows, fmt=fmt,
                       title="App. C human rejection verification (Rejection = positive class, %)")
    if agree and fmt == "md":
        a = agree["verdict"]
        out += (f"\nagreement over {a['n_items']} items judged by >= 2 of {a['n_reviewers']} reviewers: "
                f"{_f(a['percent'])}% pairs agree, Cohen's kappa {_f(a['cohen_kappa'])}, Fleiss' kappa "
                f"{_f(a['fleiss_kappa'])}, Krippendorff's alpha {_f(a['krippendorff_alpha'])}\n")
    if fmt == "md":
        out += f"\npaper: {paper['note']}\n"
    return out


def _f(v: Any) -> str:
    return "-" if v is None else f"{v:.2f}"
