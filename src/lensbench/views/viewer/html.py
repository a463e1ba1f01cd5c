"""Assemble the one self-contained viewer page: template + styles + script + JSON data.

The page needs no network: the script and styles are inlined from the package's
``views/viewer/assets`` (read with :func:`lensbench.core.resources.read_text`), the data are
``<script type="application/json">`` blocks (an index, then chunks of sample details parsed on
demand), thumbnails are data URLs inside them.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from lensbench.core.resources import read_text

__all__ = ["render_page", "md_to_html", "read_page_data", "CHUNK", "SCRIPTS"]

_ASSETS = "lensbench.views.viewer"
#: the page's scripts, inlined in this order into one ``<script>``: sortable tables, the core (data, samples),
#: sample links, the summary and plot tabs, the compare tab, the Items and Judge tabs (analysis.js); the page then
#: calls ``lensbenchViewer.start()``
SCRIPTS = ("sort.js", "viewer.js", "links.js", "summary.js", "compare.js", "analysis.js")
#: samples per detail chunk
CHUNK = 400


def _json_for_script(doc: Any) -> str:
    """JSON safe inside a ``<script>`` element (no ``</``, no ``<!--``, no U+2028/9 surprises)."""
    s = json.dumps(doc, ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=False)
    return (s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def render_page(payload: dict[str, Any], title: str = "lensbench viewer", chunk: int = CHUNK) -> str:
    """The viewer HTML for a :func:`lensbench.views.viewer.data.build_payload` document.

    Layout for a fast first paint: a small index (runs, tables, comparisons, and per sample
    only run, id, outcome, labels) and the first chunk of sample details come before the
    script, which renders the first page at once; the other chunks (``chunk`` samples each,
    with the images they first use) follow the script and are parsed when needed.
    """
    page = read_text(_ASSETS, "assets", "viewer.html")
    css = read_text(_ASSETS, "assets", "viewer.css")
    js = "\n".join(read_text(_ASSETS, "assets", name) for name in SCRIPTS)
    index, chunks = _split(payload, chunk)
    blocks = [f'<script type="application/json" id="lensbench-c{k}">{_clean(c)}</script>' for k, c in enumerate(chunks)]
    values = {"TITLE": html.escape(title), "CSS": css, "JS": js, "INDEX": _clean(index),
              "CHUNK0": blocks[0] if blocks else "", "CHUNKS": "\n".join(blocks[1:]),
              "FIGURES": _clean(list(payload.get("figures", [])))}
    # one pass over the template only: data never gets substituted into
    return re.sub(r"/\*\{\{(CSS|JS)\}\}\*/|\{\{([A-Z0-9]+)\}\}", lambda m: values[m.group(1) or m.group(2)], page)


_INDEX_KEYS = ("r", "id", "o", "l")


def _shas(sample: dict[str, Any]) -> list[str]:
    out = []
    for _role, parts in sample.get("m", []):
        for p in parts:
            if p[0] == "i":
                out.append(p[1])
            elif p[0] == "v":
                out.extend(p[3])
    return out


def _split(payload: dict[str, Any], chunk: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(index document, detail chunks ``{"d": [details], "img": {sha: image}}``)."""
    samples = payload.get("samples", [])
    images = payload.get("images", {})
    index = {k: v for k, v in payload.items() if k not in ("samples", "images", "figures")}
    index["samples"] = [[s["r"], s["id"], s["o"], s.get("l", {})] for s in samples]
    index["chunk"] = chunk
    index["nFigures"] = len(payload.get("figures", []))
    chunks: list[dict[str, Any]] = []
    seen: set[str] = set()
    for k in range(0, len(samples), chunk):
        part = samples[k:k + chunk]
        img: dict[str, Any] = {}
        for s in part:
            for sha in _shas(s):
                if sha not in seen and sha in images:
                    seen.add(sha)
                    img[sha] = images[sha]
        chunks.append({"d": [{x: v for x, v in s.items() if x not in _INDEX_KEYS} for s in part], "img": img})
    index["nChunks"] = len(chunks)
    return index, chunks


def read_page_data(page: str) -> dict[str, Any]:
    """The :func:`~lensbench.views.viewer.data.build_payload` document back from a rendered page (for tests and tools)."""
    def block(name: str) -> Any:
        m = re.search(rf'<script type="application/json" id="{name}">(.*?)</script>', page, re.S)
        return json.loads(m.group(1)) if m else None

    index = block("lensbench-index")
    samples, images = [], {}
    for k in range(index["nChunks"]):
        c = block(f"lensbench-c{k}")
        images.update(c["img"])
        base = k * index["chunk"]
        for j, d in enumerate(c["d"]):
            r, sid, o, lab = index["samples"][base + j]
            samples.append({"r": r, "id": sid, "o": o, "l": lab, **d})
    doc = {k: v for k, v in index.items() if k not in ("samples", "chunk", "nChunks", "nFigures")}
    doc.update(samples=samples, images=images, figures=block("lensbench-figures") or [])
    return doc


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


_STAR_LINE = re.compile(r"^(\s*)\*(?=\s)", re.M)


def _markdown():
    """The markdown-it-py parser of :func:`md_to_html` (markdown-it-py comes with rich): CommonMark with
    pipe tables, raw HTML off (every text is escaped), no ``*``/``_`` emphasis (``*`` marks footnotes and
    partial runs in our tables); headings one level down, tables in a sideways-scrolling wrapper."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable("table").disable("emphasis")

    def table_open(self, tokens, idx, options, env):
        return "<div class='tblwrap'><table class='tbl'>\n"

    def table_close(self, tokens, idx, options, env):
        return "</table></div>\n"

    md.add_render_rule("table_open", table_open)
    md.add_render_rule("table_close", table_close)
    return md


def md_to_html(md: str) -> str:
    """Markdown as HTML, by markdown-it-py (CommonMark + pipe tables; all text escaped, no raw HTML).

    Our additions: a heading is shown one level down (``#`` -> ``<h2>``: the page has the ``<h1>``); each
    table is wrapped in a ``div.tblwrap`` that scrolls sideways when wider than the page, with class
    ``tbl``, and a row whose first cell ends with ``(paper)`` gets class ``paper``; a line starting with
    ``* `` is text (a footnote mark in our tables), not a list item (``-`` makes lists)."""
    parser = _markdown()
    tokens = parser.parse(_STAR_LINE.sub(lambda m: m.group(1) + "\\*", md))
    for i, t in enumerate(tokens):
        if t.type in ("heading_open", "heading_close"):
            t.tag = f"h{min(int(t.tag[1]) + 1, 6)}"
        elif t.type == "tr_open" and i + 2 < len(tokens) and tokens[i + 2].type == "inline" \
                and tokens[i + 2].content.strip().endswith("(paper)"):
            t.attrSet("class", "paper")
    return parser.renderer.render(tokens, parser.options, {}).strip()
