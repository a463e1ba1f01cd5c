"""Table writers shared by every benchmark's report: Markdown and CSV from columns and rows."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from typing import Any

__all__ = ["fmt_value", "render_table"]


def fmt_value(v: Any, digits: int = 2) -> str:
    """Cell text: floats with ``digits`` decimals, ``None``/NaN as ``-``, others ``str``."""
    if v is None:
        return "-"
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        return f"{v:.{digits}f}"
    return str(v)


def render_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str = "md",
                 title: str | None = None, digits: int = 2) -> str:
    """Render a table as ``md`` (GitHub pipe table, optional ``### title``) or ``csv``.

    ``rows`` are sequences aligned with ``columns``. Raises ValueError for another ``fmt``
    or a row of the wrong length.
    """
    for r in rows:
        if len(r) != len(columns):
            raise ValueError(f"row has {len(r)} cells, table has {len(columns)} columns: {r!r}")
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow([fmt_value(v, digits) if isinstance(v, float) else ("" if v is None else v) for v in r])
        return buf.getvalue()
    if fmt != "md":
        raise ValueError(f"unknown table format {fmt!r} (md or csv)")
    lines = []
    if title:
        lines += [f"### {title}", ""]
    lines.append("| " + " | ".join(columns) + " |")
    lines.append("|" + "|".join("---" for _ in columns) + "|")
    for r in rows:
        lines.append("| " + " | ".join(fmt_value(v, digits) for v in r) + " |")
    return "\n".join(lines) + "\n"
