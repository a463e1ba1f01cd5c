"""IV-Bench Tab. 3 (paper Sec. 4.4): accuracy of the base model and its SFT variants, our rows
beside the paper's (``benchmarks/ivbench/paper/table3.json``)."""

from __future__ import annotations

from collections.abc import Sequence

from lensbench.core.resources import read_json
from lensbench.core.results import RunResult
from lensbench.report.tables import render_table

__all__ = ["VARIANT_LABELS", "render_table3"]

#: Row names of the variants, as Tab. 3 words them.
VARIANT_LABELS = {"base": "", "iv": " + IV-aligned SFT data", "video": " + unaligned video-QA SFT data",
                  "llava-video-178k": " + LLaVA-Video-178K"}


def render_table3(rows: Sequence[tuple[str, RunResult | None]], model: str, fmt: str = "md",
                  with_paper: bool = True) -> str:
    """``rows`` = ``[(variant, RunResult or None)]`` (variants of :data:`VARIANT_LABELS`); a table of
    Model, Variant, Accuracy (%, IV-Bench Overall), n; then the paper's rows."""
    out = [[f"{model}{VARIANT_LABELS.get(v, ' + ' + v)}", v, r.metrics["accuracy"].get("Overall") if r else None,
            r.counts.get("n") if r else None] for v, r in rows]
    if with_paper:
        out += [[f"{p['model']} (paper)", p["variant"], p["accuracy"], None]
                for p in read_json("lensbench.benchmarks.ivbench", "paper", "table3.json")["rows"]]
    return render_table(["Model", "Variant", "Accuracy", "n"], out, fmt, digits=2,
                        title="IV-Bench Tab. 3: accuracy (%) before and after SFT")
