"""A reproduction report as one self-contained HTML appendix in the viewer's style: the viewer's own
stylesheet (``views/viewer/assets/viewer.css``, inlined), its table classes (``tbl``, paper rows in
``paper``), verdicts coloured (consistent green, differs red, inconclusive and not comparable grey), figures
as inline PNG data URLs. No script, no network (:func:`render_html`).

Layout for a long report: a table of contents under the title (each section with its verdict counts), the
runs open, every table, figure and claim section collapsed (``<details>``, its summary line carrying the
counts), and every table in a ``div.tblwrap`` that scrolls sideways inside the page, its long text columns
(reason, settings, state, coverage) wrapping, so nothing is cut off on the right."""

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
.tbl td.reason, .tbl td.wrap { text-align: left; white-space: normal; min-width: 16em; max-width: 40em; color: var(--mut); }
blockquote { border-left: 3px solid var(--bd); margin: .4em 0; padding: .1em .8em; color: #1f2328; }
main { max-width: 1400px; }
details.panel > summary { list-style: none; display: flex; align-items: baseline; gap: .8em; flex-wrap: wrap; color: #1f2328; }
details.panel > summary::-webkit-details-marker { display: none; }
details.panel > summary::before { content: "\\25B8"; color: var(--acc); }
details.panel[open] > summary::before { content: "\\25BE"; }
details.panel > summary h2, details.panel > summary h3 { margin: 0; font-size: 1.05em; }
details.panel > summary .sub { color: var(--mut); font-size: .85em; }
details.panel, .panel { scroll-margin-top: 3.6em; }
nav.toc { display: block; }
nav.toc ol { margin: .2em 0; padding-left: 1.4em; columns: 2 28em; }
nav.toc li { color: var(--mut); }
"""


def _e(v: Any) -> str:
    return html.escape(fmt(v))


def _table(cols: list[str], rows: list[list[Any]], verdict_col: int | None = None, reason_col: int | None = None,
           wrap: frozenset[int] = frozenset()) -> str:
    """One ``tbl`` in its sideways-scrolling ``tblwrap``; columns in ``wrap`` (and the reason) wrap their text."""
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
            elif i in wrap:
                cls = " class='wrap'"
            tds.append(f"<td{cls}>{_e(v)}</td>")
        body.append("<tr>" + "".join(tds) + "</tr>")
    return (f"<div class='tblwrap'><table class='tbl'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody>"
            "</table></div>")


def _anchor(prefix: str, text: str) -> str:
    """An id for ``text`` (letters and digits, the rest ``-``)."""
    return prefix + "-" + "".join(ch if ch.isalnum() else "-" for ch in text).strip("-").lower()


def _counts(s: Section) -> str:
    if not s.cells:
        return "figure" if s.figure else ("table" if s.rows else "")
    c = s.counts()
    return (f"{len(s.cells)} cells: {c['consistent']} consistent, {c['differs']} differ, "
            f"{c['inconclusive']} inconclusive, {c['not comparable']} not comparable")


def _section(s: Section) -> str:
    parts = [f"<details class='panel art' id='{_anchor('sec', s.id)}'><summary><h2>{html.escape(s.id)}: "
             f"{html.escape(s.title)}</h2><span class='sub'>{html.escape(_counts(s))}</span></summary>"]
    if s.cells:
        parts.append(f"<p class='note'>{html.escape(_counts(s))}</p>")
        parts.append(_table(CELL_COLUMNS, cell_rows(s), verdict_col=VERDICT_COL, reason_col=REASON_COL))
    if s.columns and s.rows:
        parts.append(_table(s.columns, s.rows))
    if s.figure:
        parts.append(f"<div class='plots'><img alt='{html.escape(s.id)}' src='data:image/png;base64,"
                     f"{base64.b64encode(s.figure).decode('ascii')}'></div>")
    parts += [f"<p class='note'>{html.escape(n)}</p>" for n in s.notes]
    parts += [f"<p class='note'>Needs: {html.escape(n)}</p>" for n in s.needs]
    return "\n".join(parts) + "</details>"


def _toc(rep: Report) -> str:
    items = ["<li><a href='#runs'>Runs</a></li>"]
    items += [f"<li><a href='#{_anchor('sec', s.id)}'>{html.escape(s.id)}: {html.escape(s.title)}</a> "
              f"{html.escape(_counts(s))}</li>" for s in rep.sections]
    items.append(f"<li><a href='#claims'>Claims</a> {len(rep.claims)}</li>")
    items.append("<li><a href='#needs'>What the runs cannot support</a></li>")
    if rep.problems:
        items.append("<li><a href='#not-read'>Runs not read</a></li>")
    return f"<nav class='toc panel' aria-label='contents'><b>Contents</b><ol>{''.join(items)}</ol></nav>"


def render_html(rep: Report) -> str:
    """The report as one HTML page (module docstring)."""
    css = read_text("lensbench.views.viewer", "assets", "viewer.css") + _EXTRA_CSS
    title = f"Reproduction: {rep.paper}"
    body = [f"<p>{html.escape(rep.cite)}</p>"] + [f"<p class='note'>{html.escape(n)}</p>" for n in rep.notes]
    body.append(_toc(rep))
    body.append("<section class='panel' id='runs'><h2>Runs</h2>")
    body.append(_table(["run", "benchmark", "model", "matched to", "settings", "state", "coverage"],
                       [[r["run"], r["benchmark"], r["model"], ", ".join(r["matched"]) or "no paper row",
                         "; ".join(r["settings"]) or "the paper's", r["state"], r["coverage"]] for r in rep.runs],
                       wrap=frozenset({4, 5, 6})))
    body.append(f"<p class='note'>{html.escape(rep.design)}</p>")
    if rep.rule:
        body.append(f"<p class='note'>{html.escape(rep.rule)}</p>")
    body.append("</section>")
    body += [_section(s) for s in rep.sections]
    body.append("<section class='panel' id='claims'><h2>Claims</h2><p class='note'>p adjusted by Holm's method over "
                "every test of this paper (alpha 0.05).</p>")
    for c in rep.claims:
        verdict = c.summary()
        body.append(f"<details class='panel claim' id='{_anchor('claim', c.id)}'><summary><h3>{html.escape(c.id)} "
                    f"({html.escape(c.cite)})</h3><span class='sub'>{html.escape(verdict)}</span></summary>"
                    f"<blockquote>{html.escape(c.statement)}</blockquote><p><b>{html.escape(verdict)}</b></p>")
        if c.tests:
            body.append(_table(TEST_COLUMNS, test_rows(c), verdict_col=5))
        body += [f"<p class='note'>{html.escape(n)}</p>" for n in c.notes]
        body.append("</details>")
    body.append("</section>")
    body.append("<section class='panel' id='needs'><h2>What the runs cannot support</h2><ul>" +
                "".join(f"<li>{html.escape(n)}</li>" for n in rep.needs) + "</ul></section>")
    if rep.problems:
        body.append("<section class='panel' id='not-read'><h2>Runs not read</h2><ul>"
                    + "".join(f"<li>{html.escape(p)}</li>" for p in rep.problems) + "</ul></section>")
    return (f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><meta name='viewport' "
            f"content='width=device-width, initial-scale=1'><title>{html.escape(title)}</title><style>{css}</style>"
            f"</head><body><header id='top'><h1>{html.escape(title)}</h1></header><main>{''.join(body)}</main>"
            "</body></html>\n")
