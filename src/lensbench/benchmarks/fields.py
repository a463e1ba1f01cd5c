"""Typed field checks for benchmark loaders: one place that says what a bad data file looks like.

Every loader reads its release files through these helpers, so a field of the wrong type is a
:class:`~lensbench.core.errors.DataError` naming the file and the field (exit 2), never a
traceback and never silently turned into text. Example message::

    questions.json [field 'data[3].data_id']: expected a path string or a [rgb, thermal] pair of strings, got a number

Media paths named by a data file must resolve inside the data folder (docs/protocol.md, general rules):
:func:`inside` refuses absolute paths, ``..`` escapes and symlinks pointing out, so a crafted data
file cannot make lensbench upload an arbitrary readable file. :func:`missing_media` is the one
missing-media rule (clear error with counts unless ``--skip-missing``).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from lensbench.core.errors import DataError

__all__ = ["kind", "want_str", "want_choice", "want_options", "want_int_or_str", "want_str_list", "want_obj",
           "want_list", "inside", "missing_media"]


def kind(value: Any) -> str:
    """A JSON value's type in words: ``"a string"``, ``"a number"``, ``"a list"``, ``"an object"``,
    ``"a boolean"``, ``"null"``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _bad(file, field: str, expected: str, value: Any) -> DataError:
    return DataError(file, f"expected {expected}, got {kind(value)}", field=field)


def want_str(value: Any, file, field: str, *, nonempty: bool = False, expected: str = "a string") -> str:
    """``value`` when it is a string (non-blank when ``nonempty``). Raises DataError naming ``file``/``field``."""
    if not isinstance(value, str):
        raise _bad(file, field, expected, value)
    if nonempty and not value.strip():
        raise DataError(file, f"expected {expected}, got an empty string", field=field)
    return value


def want_choice(value: Any, file, field: str, choices: Sequence[str], *, normalise: Callable[[str], str] = str) -> str:
    """An answer that must be one of ``choices`` (a string, compared after ``normalise``, e.g. RGB-Th-Bench's
    ``" yes"`` -> ``"Yes"``); returns the normalised answer. Raises DataError naming ``file``/``field``:
    ``must be one of Yes, No, got 'Maybe'`` (or the type, for a value that is no string)."""
    got = normalise(want_str(value, file, field))
    if got not in choices:
        raise DataError(file, f"must be one of {', '.join(choices)}, got {value!r}", field=field)
    return got


def want_options(value: Any, file, field: str, letters: Sequence[str]) -> tuple[str, ...]:
    """The option texts of a multiple-choice question given as ``{letter: text}`` with exactly the keys
    ``letters``, in letter order. Raises DataError naming ``file``/``field`` (and ``field.<letter>`` for a
    text that is no string)."""
    want_obj(value, file, field)
    if sorted(value) != sorted(letters):
        raise DataError(file, f"options must have exactly the keys {', '.join(letters)}, got {list(value)}",
                        field=field)
    return tuple(want_str(value[x], file, f"{field}.{x}") for x in letters)


def want_int_or_str(value: Any, file, field: str) -> int | str:
    """An identifier: an integer or a non-empty string, returned unchanged. Raises DataError otherwise."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return want_str(value, file, field, nonempty=True, expected="an integer or a string")


def want_str_list(value: Any, file, field: str, *, nonempty: bool = False) -> list[str]:
    """A list of strings (non-empty list when ``nonempty``); the first bad element is named
    (``field[i]``). Raises DataError."""
    if not isinstance(value, list):
        raise _bad(file, field, "a list of strings", value)
    if nonempty and not value:
        raise DataError(file, "expected a non-empty list of strings, got an empty list", field=field)
    for i, v in enumerate(value):
        want_str(v, file, f"{field}[{i}]")
    return value


def want_obj(value: Any, file, field: str) -> dict:
    """``value`` when it is a JSON object. Raises DataError naming ``file``/``field``."""
    if not isinstance(value, dict):
        raise _bad(file, field, "an object", value)
    return value


def want_list(value: Any, file, field: str, *, nonempty: bool = False) -> list:
    """``value`` when it is a JSON list (non-empty when ``nonempty``). Raises DataError."""
    if not isinstance(value, list):
        raise _bad(file, field, "a list", value)
    if nonempty and not value:
        raise DataError(file, "expected a non-empty list, got an empty list", field=field)
    return value


@functools.lru_cache(maxsize=4096)
def _resolved(folder: str) -> str:
    """``os.path.realpath(folder)``, cached: a data file names hundreds of media in a few folders, and
    each resolve lstat-s every path component (issue 11: loading counts against a run's wall time)."""
    return os.path.realpath(folder)


@functools.lru_cache(maxsize=8192)
def _absolute(rel: str) -> bool:
    """True for a POSIX- or Windows-absolute path or one with a drive (``/x``, ``C:\\x``, ``C:x``, ``\\\\srv\\s``)."""
    return PurePosixPath(rel).is_absolute() or PureWindowsPath(rel).is_absolute() or bool(PureWindowsPath(rel).drive)


def inside(root: str | Path, rel: str, file, field: str, base: str | Path | None = None) -> Path:
    """``base / rel`` (``base`` defaults to ``root``) when it resolves inside ``root`` (symlinks
    followed); the unresolved path is returned.

    Raises DataError naming ``file``/``field`` for an absolute path (POSIX or Windows style), a
    path with ``..`` that leaves ``root``, or one that leads out of ``root`` through a symlink.
    A path that does not exist but stays inside ``root`` is returned (the caller reports missing
    media). docs/protocol.md, general rules: media paths named by a data file must resolve inside the data folder.
    """
    if _absolute(rel):
        raise DataError(file, f"media path {rel!r} is absolute; it must be relative to the data folder {root}",
                        field=field)
    p = os.path.join(str(base if base is not None else root), rel)  # string ops: pathlib cost ~0.1 ms a call
    top = _resolved(str(root))
    parent, name = os.path.split(p)
    target = os.path.join(_resolved(parent or "."), name)
    if name in ("", ".", "..") or os.path.islink(target):
        target = os.path.realpath(p)
    if target != top and not target.startswith(top.rstrip(os.sep) + os.sep):
        raise DataError(file, f"media path {rel!r} resolves outside the data folder {root} (to {target}); "
                              "refused", field=field)
    return Path(p)


def missing_media(file, missing: list[str], total: int, what: str, folder, *, skip: bool) -> None:
    """The one missing-media rule: nothing missing, or ``skip`` (``--skip-missing``), passes;
    otherwise a DataError naming ``file`` with how many of ``total`` items lack media from
    ``folder`` (first three named) and the ``--skip-missing`` way on. Also raises when every item
    lacks its media (nothing would be left to run), skip or not. ``what``: the items' name
    (``"units"``, ``"questions"``, ``"records"``)."""
    if not missing:
        return
    names = ", ".join(missing[:3]) + (", ..." if len(missing) > 3 else "")
    if len(missing) >= total:
        raise DataError(file, f"none of the {total} {what} has its media in {folder} (missing e.g. {names})")
    if not skip:
        raise DataError(file, f"{len(missing)} of {total} {what} lack media in {folder} (e.g. {names}); "
                              "fetch them (lensbench data download) or pass --skip-missing to run the rest")
