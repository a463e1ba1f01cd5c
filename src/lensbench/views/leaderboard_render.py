"""Writers of :class:`lensbench.views.leaderboard.Leaderboard`: Markdown table with its notes, tidy CSV, JSON.

Every CI is printed with how it was drawn (method, resampled cluster, resample count, seed: the
same sentence as ``compare`` and the viewer print, :meth:`lensbench.scoring.bootstrap.Design.describe`);
the CSV carries the same design per row.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import asdict
from typing import Any

from lensbench.views.catalog import benchmark_order, describe
from lensbench.report.coverage import UNKNOWN
from lensbench.report.tables import fmt_value, render_table
from lensbench.scoring.bootstrap import MIN_CLUSTERS, plural, too_few_text

__all__ = ["render", "TIDY_COLUMNS"]

TIDY_COLUMNS = ["model", "benchmark", "settings", "coverage", "state", "metric", "category", "value", "ci_low",
                "ci_high", "n", "cluster", "ci_method", "n_resamples", "seed", "level", "run"]


def _title(bench: str) -> str:
    facts = describe(bench)
    return facts.title if facts is not None else bench


def _named(bench: str, metric: str) -> bool:
    """Whether column headers name ``metric`` (see :class:`lensbench.scoring.units.Headline`)."""
    facts = describe(bench)
    return facts is None or all(h.named for h in facts.headlines if h.metric == metric)


def _num(v: Any) -> str:
    return "" if v is None else (f"{v:.6g}" if isinstance(v, float) else str(v))


def _csv(lb) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(TIDY_COLUMNS)
    for c in lb.cells:
        d = lb.designs.get(c.benchmark)
        drawn = d is not None and bool(c.cluster or c.note)  # a CI was drawn (or tried) for this number
        design = [d.cluster, d.method, d.n_resamples, d.seed, d.level] if drawn else ["", "", "", "", ""]
        w.writerow([c.row or c.model, c.benchmark, c.settings, c.coverage, c.state, c.metric, c.category]
                   + [_num(v) for v in (c.value, c.ci_low, c.ci_high, c.n)] + [_num(v) for v in design] + [c.run])
    return buf.getvalue()


def _marked(c) -> bool:
    """Whether a cell's run is missing replies (failed or unsent requests): marked ``*``."""
    return "incomplete" in c.state or "killed" in c.state


#: the mark of a cell whose run is not the benchmark's measurement: part of the release, or demo data
PARTIAL_MARK = "†"


def _partial(coverage: str) -> bool:
    """Whether a column's coverage names part of the release or demo data (not only an unknown release size)."""
    return bool(coverage) and not coverage.startswith(UNKNOWN)


def natural(text: str) -> tuple:
    """Sort key of ``text`` with its runs of digits compared as numbers (``8f`` before ``16f``: issue 32.9)."""
    return tuple((0, int(x), "") if x.isdigit() else (1, 0, x) for x in re.findall(r"\d+|\D+", text))


def _cell_text(c) -> str:
    s = fmt_value(c.value, 1) + ("*" if _marked(c) else "") + (PARTIAL_MARK if _partial(c.coverage) else "")
    if c.ci_low is not None and c.ci_high is not None:
        s += f" [{c.ci_low:.1f}, {c.ci_high:.1f}]"
    elif c.too_few_clusters is not None:
        s += f" [{too_few_text(c.too_few_clusters)}]"
    return s


def _header(col: tuple[str, str, str, str, str]) -> str:
    bench, settings, cov, metric, cat = col
    name = _title(bench) + (f" [{settings}]" if settings else "") + (f" ({cov})" if cov else "")
    return f"{name} {metric + ' ' if _named(bench, metric) else ''}{cat}"


def _md(lb) -> str:
    heads = [c for c in lb.cells if c.headline]
    order = benchmark_order()
    columns = list(dict.fromkeys(c.column for c in heads))
    columns.sort(key=lambda k: (order.index(k[0]) if k[0] in order else 99, k[2] != "", k[1] != "", natural(k[1]),
                                natural(k[2])))
    rows_ = list(dict.fromkeys(c.row or c.model for c in heads))
    by = {(c.row or c.model, c.column): c for c in heads}
    rows = [[r] + [_cell_text(by[(r, k)]) if (r, k) in by else "-" for k in columns] for r in rows_]
    out = render_table(["Model"] + [_header(k) for k in columns], rows, "md", title="Leaderboard (value [95% CI], %)")
    shown = [b for b in order + sorted(set(lb.designs) - set(order)) if b in lb.designs and any(
        c.benchmark == b for c in heads)]
    out += "\n" + "".join(f"{_title(b)}: {lb.designs[b].describe()}.\n" for b in shown)
    if any(k[1] for k in columns):
        out += ("[...] names the protocol settings a run used where they differ from the benchmark's defaults "
                "(or from the other runs'): differently configured runs are separate columns.\n")
    if any(k[2].startswith(UNKNOWN) for k in columns):
        out += f"({UNKNOWN}): the benchmark states no release size: what its runs cover is not counted.\n"
    if any(_partial(k[2]) for k in columns):
        out += (f"{PARTIAL_MARK} (n/N ...) = a run over part of the benchmark's release (counted against the release, "
                "never the run's folder) or on demo data: not the benchmark's measurement, its column is not ranked "
                "with full runs.\n")
    if any(c.too_few_clusters is not None for c in heads):
        units = "/".join(plural(x) for x in sorted({c.cluster for c in heads if c.too_few_clusters is not None}))
        out += (f"[too few clusters (n)] = fewer than {MIN_CLUSTERS} {units} (the resampled clusters) behind the "
                f"value: no CI is given, it would not mean anything.\n")
    if lb.empty:
        out += ("Empty replies (the model answered with an empty string; kept as its answer and scored as the "
                "protocol scores a reply with no answer, so they count in the values): "
                + "; ".join(f"{row}: {n}" for row, _p, n in lb.empty) + ".\n")
    if any(_marked(c) for c in heads):
        out += "* = run not complete (failed or unsent requests, listed below): values over what was answered.\n"
    notes = sorted({f"{c.row or c.model} / {_header(c.column)}: {c.note}" for c in heads if c.note})
    if notes:
        out += "\nNo CI:\n" + "".join(f"- {n}\n" for n in notes)
    if lb.unfinished:
        out += "\nRuns not complete, partial or left out:\n" + "".join(f"- {p}: {why}\n" for p, why in lb.unfinished)
    return out


def render(lb, fmt: str = "md") -> str:
    """``md``, ``csv`` (:data:`TIDY_COLUMNS`, one header line) or ``json`` text of a leaderboard.
    Raises ValueError for another format."""
    if fmt == "csv":
        return _csv(lb)
    if fmt == "json":
        return json.dumps({"cells": [asdict(c) for c in lb.cells], "unfinished": lb.unfinished,
                           "empty_replies": [{"row": r, "run": p, "n": n} for r, p, n in lb.empty],
                           "designs": {b: d.to_json() for b, d in lb.designs.items()},
                           "seed": lb.seed, "n_resamples": lb.n_resamples}, indent=2, default=str) + "\n"
    if fmt != "md":
        raise ValueError(f"unknown format {fmt!r} (md, csv or json)")
    return _md(lb)
