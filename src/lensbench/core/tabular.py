"""Prediction tables of other harnesses: VLMEvalKit's ``.tsv`` / ``.xlsx`` / ``.csv`` read to rows and written back.

VLMEvalKit (``vlmeval/smp/file.py``, ``dump``/``load``) writes a model's predictions as the dataset's table
(``index``, the dataset's columns, ``prediction``) in ``.xlsx`` (its default) or ``.tsv``. Cells are read as
strings: an integer-valued number (``5`` or ``5.0`` from a spreadsheet) becomes ``"5"``, an empty cell ``""``.
``.xlsx`` needs openpyxl (``pip install 'lensbench[interop]'``).
"""

from __future__ import annotations

import csv
import math
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lensbench.core.errors import DataError
from lensbench.core.extras import MissingExtraError

#: characters an .xlsx cell cannot hold (XML 1.0: C0 controls other than tab, newline, carriage return)
_XLSX_ILLEGAL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")

__all__ = ["TABLE_SUFFIXES", "is_table", "read_table", "write_table", "cell_text"]

#: the file suffixes read as tables
TABLE_SUFFIXES = (".tsv", ".csv", ".xlsx")


def is_table(path: str | Path) -> bool:
    """Whether ``path`` names a table by its suffix (``.tsv``, ``.csv``, ``.xlsx``; any case)."""
    return Path(path).suffix.lower() in TABLE_SUFFIXES


def cell_text(value: Any) -> str:
    """A cell as text: None / NaN -> ``""``, an integer-valued float -> ``"5"``, else ``str(value)``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return value if isinstance(value, str) else str(value)


def _openpyxl():
    try:
        import openpyxl
    except ImportError:
        raise MissingExtraError("openpyxl", "interop", "reading and writing VLMEvalKit .xlsx predictions") from None
    return openpyxl


def read_table(path: str | Path) -> list[tuple[str, dict[str, str]]]:
    """``[(where, row)]`` of a ``.tsv`` / ``.csv`` / ``.xlsx`` table with a header row; ``where`` is ``row N``
    (N counts data rows from 1); every cell is text (:func:`cell_text`).

    Raises DataError naming the file for a file that is not UTF-8, has no header, or repeats a column name;
    MissingExtraError for ``.xlsx`` without openpyxl.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".xlsx":
        wb = _openpyxl().load_workbook(path, read_only=True, data_only=True)
        try:
            rows = [list(r) for r in wb.worksheets[0].iter_rows(values_only=True)]
        finally:
            wb.close()
    else:
        csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
        try:
            text = path.read_bytes().decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise DataError(path, f"not UTF-8 text (offset {exc.start})") from None
        rows = list(csv.reader(_lines(text), delimiter="\t" if suffix == ".tsv" else ","))
    if not rows or not any(cell_text(c) for c in rows[0]):
        raise DataError(path, "no header row (expected the columns index, ..., prediction)")
    header = [cell_text(c).strip() for c in rows[0]]
    dup = sorted({h for h in header if h and header.count(h) > 1})
    if dup:
        raise DataError(path, f"column {dup[0]!r} appears twice in the header", field=dup[0])
    out = []
    for i, r in enumerate(rows[1:], 1):
        if not any(cell_text(c) for c in r):
            continue
        out.append((f"row {i}", {h: cell_text(r[j]) if j < len(r) else "" for j, h in enumerate(header) if h}))
    return out


def _lines(text: str) -> list[str]:
    """``text`` split at ``\\n`` only (a cell may hold U+2028 and friends, which ``splitlines`` would split);
    quoted newlines are rejoined by the csv reader."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def write_table(path: str | Path, columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> None:
    """Write ``rows`` (dicts; a missing key is an empty cell) under the header ``columns`` as ``.tsv`` / ``.csv``
    (UTF-8, every cell quoted, as VLMEvalKit's ``dump`` writes them) or ``.xlsx`` (openpyxl). Raises
    MissingExtraError for ``.xlsx`` without openpyxl, DataError for a cell an ``.xlsx`` cannot store (a C0
    control character), ValueError for another suffix."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".xlsx":
        wb = _openpyxl().Workbook()
        ws = wb.active
        ws.append(list(columns))
        for i, r in enumerate(rows, 1):
            cells = [r.get(c, "") for c in columns]
            bad = next((c for c, v in zip(columns, cells) if isinstance(v, str) and _XLSX_ILLEGAL.search(v)), None)
            if bad is not None:  # openpyxl would refuse the cell; a silent strip would change the reply
                raise DataError(path, f"row {i}: column {bad!r} holds a control character an .xlsx cell cannot "
                                      "store; write a .tsv instead", field=bad)
            ws.append(cells)
        wb.save(path)
        return
    if suffix not in (".tsv", ".csv"):
        raise ValueError(f"{path}: a table is .tsv, .csv or .xlsx")
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t" if suffix == ".tsv" else ",", lineterminator="\n", quoting=csv.QUOTE_ALL)
        w.writerow(columns)
        for r in rows:
            w.writerow([cell_text(r.get(c, "")) for c in columns])
