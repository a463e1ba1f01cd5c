"""The run viewer: one self-contained HTML page over run folders (``lensbench view``).

:func:`build_viewer` reads nothing itself: it takes loaded runs (see
:mod:`lensbench.views.runs`), the benchmarks' summary tables (HTML), comparisons and figures,
and returns the page. :mod:`lensbench.views.viewer.serve` serves it for runs too large to embed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lensbench.report.runs import LoadedRun
from lensbench.views.viewer.data import build_payload
from lensbench.views.viewer.html import CHUNK, md_to_html, render_page

__all__ = ["build_viewer", "md_to_html"]


def build_viewer(runs: Sequence[LoadedRun], *, tables: dict[str, str] | None = None,
                 comparisons: Sequence[dict[str, Any]] = (), figures: Sequence[dict[str, str]] = (),
                 embed: bool = True, max_thumbs: int = 3000, title: str = "lensbench viewer", chunk: int = CHUNK,
                 items: dict[str, Any] | None = None, judge: Sequence[dict[str, Any]] = ()):
    """``(html, image registry)`` for ``runs``; see :func:`lensbench.views.viewer.data.build_payload`."""
    payload, images = build_payload(runs, tables=tables, comparisons=comparisons, figures=figures, embed=embed,
                                    max_thumbs=max_thumbs, items=items, judge=judge)
    return render_page(payload, title=title, chunk=chunk), images
