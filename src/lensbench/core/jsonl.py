"""Reading JSON Lines files with errors that name the file and the line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lensbench.core.errors import DataError

__all__ = ["iter_jsonl"]


def iter_jsonl(path: str | Path, what: str = "file") -> Iterator[tuple[int, Any]]:
    """``(line number, parsed value)`` for every non-blank line of ``path`` (1-based numbers).

    Raises DataError naming the file: ``"<what> not found"``, or ``"line N: not valid JSON"``."""
    p = Path(path)
    if not p.is_file():
        raise DataError(p, f"{what} not found")
    for ln, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield ln, json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(p, f"line {ln}: not valid JSON ({exc})") from None
