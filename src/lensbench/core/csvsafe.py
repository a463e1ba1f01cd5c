"""CSV files that people open in spreadsheets: formula escaping out, exact text back in.

A cell a spreadsheet would evaluate (text starting with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return, and not a plain number) is written with a leading ``'`` (OWASP "CSV
injection"); :func:`read_csv` takes it off again. Reading splits records only on ``\\r`` /
``\\n`` outside quotes, so text holding U+2028, U+2029 or U+0085 (which ``str.splitlines``
treats as line ends) comes back intact.
"""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["csv_cell", "uncsv_cell", "write_csv", "read_csv"]

_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(v: Any) -> Any:
    """``v`` as a CSV cell: text a spreadsheet would evaluate gets a leading ``'``; numbers,
    None and plain text pass unchanged."""
    if not isinstance(v, str) or not v.startswith(_FORMULA):
        return v
    try:
        float(v)
        return v
    except ValueError:
        return "'" + v


def uncsv_cell(v: str) -> str:
    """Inverse of :func:`csv_cell` for text read back."""
    return v[1:] if v.startswith("'") and v[1:].startswith(_FORMULA) else v


def write_csv(path: str | Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> int:
    """Write ``header`` and ``rows`` (cells through :func:`csv_cell`) as UTF-8 CSV; returns rows written."""
    n = 0
    with Path(path).open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow([csv_cell(h) for h in header])
        for r in rows:
            w.writerow([csv_cell(c) for c in r])
            n += 1
    return n


def read_csv(path: str | Path | None = None, delimiter: str = ",", *,
             text: str | None = None) -> tuple[list[str], list[dict[str, str]]]:
    """``(column names, rows as dicts)`` of the CSV file ``path`` (or of ``text``): a BOM is
    dropped, cells unescaped (:func:`uncsv_cell`), Unicode line separators in cells kept."""
    csv.field_size_limit(sys.maxsize)
    if text is None:
        if path is None:
            raise ValueError("read_csv: give a path or text")
        text = Path(path).read_text(encoding="utf-8-sig")
    reader = csv.DictReader(io.StringIO(text.removeprefix("\ufeff"), newline=""), delimiter=delimiter)
    rows = [{k: (uncsv_cell(v) if isinstance(v, str) else v) for k, v in r.items()} for r in reader]
    return [uncsv_cell(c) for c in (reader.fieldnames or [])], rows
