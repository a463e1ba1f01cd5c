"""IF-Bench analyses over several runs: model-scale correlation (Tab. 3), thinking deltas (Fig. 5),
declared model facts from names, and the paper's published tables shipped as data.

Sources: paper Sec. 5.1 "Model Scale and Architecture" (Tab. 3: Pearson r of score vs parameter
count per family, averaged), Sec. 5.2 "Thinking vs Non-Thinking" (Fig. 5: 14 pairs).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from lensbench.benchmarks.ifbench.data import COLUMNS
from lensbench.core.resources import read_json
from lensbench.scoring.metrics import mean, pearson

__all__ = ["parse_model_name", "scale_correlation", "thinking_deltas", "paper_table", "norm_name"]


_SIZE = re.compile(r"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?)B(?:-A(\d+(?:\.\d+)?)B)?(?![A-Za-z0-9])")


def parse_model_name(name: str) -> dict[str, Any]:
    """Declared facts from a model name such as ``InternVL3.5-30B-A3B-Thinking``.

    Returns ``{"params_b": total parameters in billions (MoE: total, as Tab. 3 uses) or None,
    "family": name without the size token and an ``-Instruct`` suffix (``InternVL3.5-Thinking``,
    ``Qwen3-VL``) or None when no size,
    "thinking": True for a ``-Thinking`` variant (not ``Auto-Thinking``), "base": the name
    without ``-Thinking``/``-Instruct`` (pairs thinking and non-thinking variants)}``.
    """
    short = name.rsplit("/", 1)[-1].strip()
    m = _SIZE.search(short)
    params = float(m.group(1)) if m else None
    family = None
    if m:
        family = re.sub(r"-{2,}", "-", (short[: m.start()] + short[m.end():])).strip("-")
        family = re.sub(r"-Instruct$", "", family, flags=re.IGNORECASE)
    thinking = bool(re.search(r"(?<!Auto)-Thinking$", short, re.IGNORECASE))
    base = re.sub(r"-(Thinking|Instruct)$", "", short, flags=re.IGNORECASE)
    return {"params_b": params, "family": family, "thinking": thinking, "base": base}


def scale_correlation(rows: Sequence[dict[str, Any]], columns: Sequence[str] = COLUMNS,
                      min_models: int = 3) -> dict[str, Any]:
    """Tab. 3: Pearson r of score vs declared parameter count within each family, averaged.

    ``rows``: ``{"model", "family", "params_b", "thinking", <column>: score}``. The rule that
    reproduces the paper's Tab. 3 exactly (all 11 values, to 2 decimals, from its Tab. 2 rows;
    checked in the tests): non-thinking variants only, families with at least ``min_models`` (3)
    models, Pearson r on the TOTAL parameter count (MoE too), plain mean of r over families.
    A constant column within a family gives no r for it. Returns ``{"Corr": {col: mean r or
    None}, "families": {family: {"models": [...], "r": {col: r}}}}`` (r as ``scipy.stats.pearsonr``
    gives it, computed by :func:`lensbench.scoring.metrics.pearson`: no scipy needed).
    """
    fams: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        if r.get("family") and r.get("params_b") and not r.get("thinking"):
            fams[r["family"]].append(r)
    detail: dict[str, Any] = {}
    per_col: dict[str, list[float]] = defaultdict(list)
    for fam, rs in sorted(fams.items()):
        if len(rs) < min_models or len({r["params_b"] for r in rs}) < 2:
            continue
        rr: dict[str, float | None] = {}
        for c in columns:
            pts = [(r["params_b"], r[c]) for r in rs if r.get(c) is not None]
            xs, ys = [p[0] for p in pts], [p[1] for p in pts]
            if len(pts) < 2 or len(set(xs)) < 2 or len(set(ys)) < 2:
                rr[c] = None
                continue
            rr[c] = float(pearson(xs, ys))
            per_col[c].append(rr[c])
        detail[fam] = {"models": [r["model"] for r in rs], "r": rr}
    return {"Corr": {c: (sum(per_col[c]) / len(per_col[c]) if per_col[c] else None) for c in columns},
            "families": detail}


def thinking_deltas(rows: Sequence[dict[str, Any]], columns: Sequence[str] = COLUMNS) -> dict[str, Any]:
    """Fig. 5: score change from thinking, per pair of variants and averaged over pairs.

    ``rows``: ``{"model", "base", "thinking": bool, <column>: score}``; a pair is one thinking
    and one non-thinking row with the same ``base``. Returns ``{"pairs": [{"base", "thinking",
    "non_thinking", "delta": {col}}], "mean": {col: mean delta or None}}``.
    """
    by_base: dict[str, dict[bool, dict]] = defaultdict(dict)
    for r in rows:
        by_base[r["base"]].setdefault(bool(r["thinking"]), r)
    pairs = []
    for base, d in by_base.items():
        if True in d and False in d:
            t, n = d[True], d[False]
            pairs.append({"base": base, "thinking": t["model"], "non_thinking": n["model"],
                          "delta": {c: (t[c] - n[c]) if t.get(c) is not None and n.get(c) is not None else None
                                    for c in columns}})
    mean_d = {c: mean(p["delta"][c] for p in pairs) for c in columns}
    return {"pairs": pairs, "mean": mean_d}


@lru_cache(maxsize=None)
def paper_table(name: str) -> dict[str, Any]:
    """A paper table shipped as data: ``table2``, ``table3``, ``table4``, ``table5_6``, ``table7``
    (``paper/<name>.json`` beside this module)."""
    return read_json(__package__, "paper", f"{name}.json")


def norm_name(name: str) -> str:
    """A model name for matching runs with paper rows: no org prefix, lower case, no -Instruct/-HF."""
    s = name.rsplit("/", 1)[-1].strip().lower()
    return re.sub(r"-(instruct|hf)$", "", s)
