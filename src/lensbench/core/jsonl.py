"""The one reader and the one writer of JSON Lines files, with errors that name the file and the line; and the one
reader of a benchmark's JSON question file (:func:`read_json`).

A line ends at ``"\\n"`` only (``"\\r\\n"`` too: the ``"\\r"`` left is JSON whitespace). A text may hold
U+2028 / U+2029 (line and paragraph separators) and U+0085 (next line) raw inside a JSON string, which
``str.splitlines`` splits: every reader here splits on ``"\\n"`` alone, so a file written elsewhere reads
back whole. The writer escapes those three (``\\u2028`` ...; JSON reads them back as the same
characters), so every line it writes is one line for any other reader too; everything else is written as
``json.dumps`` writes it (``ensure_ascii`` as the caller asks; default False: UTF-8 text as is).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from lensbench.core.errors import DataError

__all__ = ["read_json", "iter_jsonl", "read_jsonl", "parse_jsonl", "iter_lines", "safe_line", "dumps_line", "jsonl_text",
           "write_jsonl"]

#: the characters ``str.splitlines`` splits on that JSON may hold raw in a string, and their JSON escapes
_ESCAPES = str.maketrans({"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"})

_KINDS = {dict: "a JSON object", list: "a JSON list"}


def safe_line(text: str) -> str:
    """``text`` (one serialised JSON value, no newline in it) with U+2028, U+2029 and U+0085 written as JSON
    escapes: the same value, one line for every reader. Returns ``text`` itself when it holds none (an ASCII
    text costs nothing: ``str.isascii`` reads a flag; another one three scans)."""
    if not text.isascii() and ("\u2028" in text or "\u2029" in text or "\x85" in text):
        return text.translate(_ESCAPES)
    return text


def dumps_line(obj: Any, *, ensure_ascii: bool = False, default: Callable[[Any], Any] | None = None,
               sort_keys: bool = False) -> str:
    """One JSON Lines line for ``obj`` (no newline): ``json.dumps`` with these options, then :func:`safe_line`.

    Raises TypeError / ValueError as ``json.dumps`` does (a value it cannot write and no ``default``)."""
    return safe_line(json.dumps(obj, ensure_ascii=ensure_ascii, default=default, sort_keys=sort_keys))


def jsonl_text(rows: Iterable[Any], **options: Any) -> str:
    """The JSON Lines text of ``rows``: one :func:`dumps_line` (``options``) and ``"\\n"`` per row."""
    return "".join(dumps_line(r, **options) + "\n" for r in rows)


def write_jsonl(target: str | Path | IO[str], rows: Iterable[Any], **options: Any) -> int:
    """Write ``rows`` as JSON Lines (:func:`dumps_line` with ``options``) to an open text file (appended at
    its position) or to a path (created or replaced, UTF-8); returns the number of rows written. Raises
    OSError as the file does."""
    if isinstance(target, (str, Path)):
        with Path(target).open("w", encoding="utf-8", newline="\n") as fh:
            return write_jsonl(fh, rows, **options)
    n = 0
    for r in rows:
        target.write(dumps_line(r, **options) + "\n")
        n += 1
    return n


def iter_lines(text: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` for every non-blank line of ``text`` (1-based), split on ``"\\n"`` only."""
    for ln, line in enumerate(text.split("\n"), 1):
        if line.strip():
            yield ln, line


def parse_jsonl(path: str | Path, text: str, kind: type | None = None) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed value)`` for every non-blank line of ``text`` (the content of ``path``).

    Raises DataError naming ``path``: ``"line N: not valid JSON (...)"``, or, with ``kind`` (``dict`` or
    ``list``), ``"line N: not a JSON object but list"`` for a value of another type."""
    want = _KINDS.get(kind, kind.__name__) if kind is not None else None
    for ln, line in iter_lines(text):
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(Path(path), f"line {ln}: not valid JSON ({exc})") from None
        if kind is not None and not isinstance(value, kind):
            raise DataError(Path(path), f"line {ln}: not {want} but {type(value).__name__}")
        yield ln, value


def _text(path: Path, what: str) -> str:
    if not path.is_file():
        raise DataError(path, f"{what} not found")
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise DataError(path, f"line {line}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})"
                        ) from None


def iter_jsonl(path: str | Path, what: str = "file", kind: type | None = None) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed value)`` for every non-blank line of ``path`` (1-based numbers; UTF-8, a BOM
    allowed; lines end at ``"\\n"`` only).

    Raises DataError naming the file: ``"<what> not found"``, ``"line N: not UTF-8 text (...)"``, ``"line N:
    not valid JSON (...)"``, or with ``kind`` ``"line N: not a JSON object but list"`` (:func:`parse_jsonl`)."""
    p = Path(path)
    yield from parse_jsonl(p, _text(p, what), kind)


def read_json(path: str | Path) -> Any:
    """The JSON document of ``path`` (UTF-8): the question files of IF-Bench (``if_bench.json``), RGB-Th-Bench
    (``questions.json``) and GOBench (``data_total.json``). Raises DataError naming the file, ``"not valid JSON:
    <the decoder's message>"``, for text that is not JSON or not UTF-8; OSError when the file cannot be read."""
    p = Path(path)
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(p, f"not valid JSON: {exc}") from None


def read_jsonl(path: str | Path, what: str = "file", kind: type | None = None) -> list[Any]:
    """The parsed values of :func:`iter_jsonl` (``path``, ``what``, ``kind``) as a list, in file order."""
    return [v for _ln, v in iter_jsonl(path, what, kind)]
