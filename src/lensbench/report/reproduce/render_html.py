"""A reproduction report as one self-contained HTML appendix in the viewer's style: the viewer's own
stylesheet (``report/viewer/assets/viewer.css``, inlined), its table classes (``tbl``, paper rows in
``paper``), verdicts coloured (consistent green, differs red, inconclusive and not comparable grey), figures
as inline PNG data URLs. No script, no network (:func:`render_html`)."""

from __future__ import annotations

import base64
import html
from typing import Any

from lensbench.core.resources import read_text
from lensbench.report.reproduce.model import Report, Section
from lensbench.report.reproduce.render_md import (CELL_COLUMNS, REASON_COL, TEST_COLUMNS, VERDICT_COL, cell_rows, fmt,
                                                  test_rows)

__all__ = ["render_html"]

_EXTRA_CSS = """
.v-consistent, .v-supported { color: var(--ok); font-weight: 600; }
.v-differs, .v-contradicted { color: var(--bad); font-weight: 600; }
.v-not-comparable, .v-not-shown, .v-inconclusive { color: var(--mut); }
.tbl td.reason { text-align: left; max-width: 40em; color: var(--mut); }
blockquote { border-left: 3px solid var(--bd); margin: .4em 0; padding: .1em .8em; color: #1f2328; }
section.art { margin-bottom: 1.6em; }
"""


def _e(v: Any) -> str:
    return html.escape(fmt(v))


def _table(cols: list[str], rows: list[list[Any]], verdict_col: int | None = None, reason_col: int | None = None) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = []
    for r in rows:
        tds = []
        for i, v in enumerate(r):
            cls = ""
            if i == verdict_col:
                cls = f" class='v-{str(v).replace(' ', '-')}'"
            elif i == reason_col:
                cls = " class='reason'"
            tds.append(f"<td{cls}>{_e(v)}</td>")
        body.append("<tr>" + "".join(tds) + "</tr>")
    return f"<table class='tbl'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _section(s: Section) -> str:
    parts = [f"<section class='art'><h2>{html.escape(s.id)}: {html.escape(s.title)}</h2>"]
    if s.cells:
        c = s.counts()
        parts.append(f"<p class='note'>{len(s.cells)} cells: {c['consistent']} consistent, {c['differs']} differ, "
                     f"{c['inconclusive']} inconclusive, {c['not comparable']} not comparable</p>")
        parts.append(_table(CELL_COLUMNS, cell_rows(s), verdict_col=VERDICT_COL, reason_col=REASON_COL))
    if s.columns and s.rows:
        parts.append(_table(s.columns, s.rows))
    if s.figure:
        parts.append(f"<div class='plots'><img alt='{html.escape(s.id)}' src='data:image/png;base64,"
                     f"{base64.b64encode(s.figure).decode('ascii')}'></div>")
    parts += [f"<p class='note'>{html.escape(n)}</p>" for n in s.notes]
    parts += [f"<p class='note'>Needs: {html.escape(n)}</p>" for n in s.needs]
    return "\n".join(parts) + "</section>"


def render_html(rep: Report) -> str:
    """The report as one HTML page (module docstring)."""
    css = read_text("lensbench.report.viewer", "assets", "viewer.css") + _EXTRA_CSS
    title = f"Reproduction: {rep.paper}"
    body = [f"<p>{html.escape(rep.cite)}</p>"] + [f"<p class='note'>{html.escape(n)}</p>" for n in rep.notes]
    body.append("<h2>Runs</h2>")
    body.append(_table(["run", "benchmark", "model", "matched to", "settings", "state", "coverage"],
                       [[r["run"], r["benchmark"], r["model"], ", ".join(r["matched"]) or "no paper row",
                         "; ".join(r["settings"]) or "the paper's", r["state"], r["coverage"]] for r in rep.runs]))
    body.append(f"<p class='note'>{html.escape(rep.design)}</p>")
    if rep.rule:
        body.append(f"<p class='note'>{html.escape(rep.rule)}</p>")
    body += [_section(s) for s in rep.sections]
    body.append("<h2>Claims</h2><p class='note'>p adjusted by Holm's method over every test of this paper "
                "(alpha 0.05).</p>")
    for c in rep.claims:
        verdict = c.summary()
        body.append(f"<h3>{html.escape(c.id)} ({html.escape(c.cite)})</h3><blockquote>{html.escape(c.statement)}"
                    f"</blockquote><p><b>{html.escape(verdict)}</b></p>")
        if c.tests:
            body.append(_table(TEST_COLUMNS, test_rows(c), verdict_col=5))
        body += [f"<p class='note'>{html.escape(n)}</p>" for n in c.notes]
    body.append("<h2>What the runs cannot support</h2><ul>" +
                "".join(f"<li>{html.escape(n)}</li>" for n in rep.needs) + "</ul>")
    if rep.problems:
        body.append("<h2>Runs not read</h2><ul>" + "".join(f"<li>{html.escape(p)}</li>" for p in rep.problems)
                    + "</ul>")
    return (f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><meta name='viewport' "
            f"content='width=device-width, initial-scale=1'><title>{html.escape(title)}</title><style>{css}</style>"
            f"</head><body><header id='top'><h1>{html.escape(title)}</h1></header><main>{''.join(body)}</main>"
            "</body></html>\n")
