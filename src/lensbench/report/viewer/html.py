"""Assemble the one self-contained viewer page: template + styles + script + JSON data.

The page needs no network: the script and styles are inlined from the package's
``report/viewer/assets`` (read with :func:`lensbench.core.resources.read_text`), the data is a
``<script type="application/json">`` block parsed once, thumbnails are data URLs inside it.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from lensbench.core.resources import read_text

__all__ = ["render_page", "md_to_html"]

_ASSETS = "lensbench.report.viewer"


def _json_for_script(doc: Any) -> str:
    """JSON safe inside a ``<script>`` element (no ``</``, no ``<!--``, no U+2028/9 surprises)."""
    s = json.dumps(doc, ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=False)
    return (s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def render_page(payload: dict[str, Any], title: str = "lensbench viewer") -> str:
    """The viewer HTML for a :func:`lensbench.report.viewer.data.build_payload` document."""
    page = read_text(_ASSETS, "assets", "viewer.html")
    css = read_text(_ASSETS, "assets", "viewer.css")
    js = read_text(_ASSETS, "assets", "viewer.js")
    return (page.replace("{{TITLE}}", html.escape(title))
            .replace("/*{{CSS}}*/", css)
            .replace("/*{{JS}}*/", js)
            .replace("{{DATA}}", _clean(payload)))


def _clean(payload: dict[str, Any]) -> str:
    def fix(v: Any) -> Any:
        if isinstance(v, float) and v != v:
            return None
        if isinstance(v, float) and v in (float("inf"), float("-inf")):
            return None
        if isinstance(v, dict):
            return {str(k): fix(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [fix(x) for x in v]
        return v
    try:
        return _json_for_script(payload)
    except ValueError:  # NaN somewhere
        return _json_for_script(fix(payload))


_ROW = re.compile(r"^\|(.*)\|\s*$")


def md_to_html(md: str) -> str:
    """A small Markdown subset as HTML: ``#`` headings, pipe tables, paragraphs (text escaped)."""
    out: list[str] = []
    lines = md.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        m = _ROW.match(line)
        if m:
            rows = []
            while i < len(lines) and _ROW.match(lines[i].rstrip()):
                cells = [c.strip() for c in _ROW.match(lines[i].rstrip()).group(1).split("|")]
                if not all(set(c) <= set("-: ") for c in cells):
                    rows.append(cells)
                i += 1
            if rows:
                head = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
                body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows[1:])
                out.append(f"<table class='tbl'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
            continue
        h = re.match(r"^(#{1,6})\s+(.*)$", line)
        if h:
            n = min(len(h.group(1)) + 1, 6)
            out.append(f"<h{n}>{html.escape(h.group(2))}</h{n}>")
        elif line.strip():
            out.append(f"<p>{html.escape(line)}</p>")
        i += 1
    return "\n".join(out)
