"""A benchmark's own recorded-reply file format, read by ``--model replay:FILE`` (the hook a benchmark registers).

``replay:FILE`` reads lensbench's export JSONL (matched on the request id) and the formats the run's
benchmark lists in ``Benchmark.replay_formats`` (e.g. RGB-Th-Bench's third-party result files, matched on
the question): the runner hands them to the backend (``BackendConfig.replay_formats``), so the replay
backend knows no benchmark. A format recognises its records by their keys, checks their fields, and keys
each reply as the benchmark's requests carry it in ``meta["replay_match"]``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, NamedTuple, TypeVar

from pydantic import BaseModel, ValidationError

from lensbench.core.errors import DataError
from lensbench.core.types import Request

__all__ = ["ReplayFormat", "ReplayRead", "validated"]

M = TypeVar("M", bound=BaseModel)


def validated(shape: type[M], path: Path, where: str, record: dict[str, Any], nullable: frozenset[str]) -> M:
    """``record`` validated as ``shape`` (a strict pydantic model). Raises DataError naming ``path``, ``where``
    (``line N`` / ``record N``) and the first wrong field: ``'text' must be a string or null, got int 5``
    (``nullable``: the fields that may be null)."""
    try:
        return shape.model_validate(record)
    except ValidationError as exc:
        e = exc.errors()[0]
        name = ".".join(str(x) for x in e["loc"]) or "?"
        value = record.get(e["loc"][0]) if e["loc"] else record
        shown = repr(value) if not isinstance(value, (list, dict)) or len(repr(value)) <= 60 else type(value).__name__
        want = "a string or null" if name in nullable else "a string"
        raise DataError(path, f"{where}: {name!r} must be {want}, got {type(value).__name__} {shown}"[:300],
                        field=name) from None


class ReplayRead(NamedTuple):
    """What a format read from one file: ``index`` = ``{match key (a tuple): {"text": reply} | {"error": why}}``
    and ``check``: called with each request matched in this file before its reply is given (raises
    ConfigError when the file cannot answer it, e.g. recorded under another input mode), or None."""

    index: dict[tuple, dict[str, str]]
    check: Callable[[Request], None] | None = None


class ReplayFormat(ABC):
    """One recorded-reply format (see the module docstring). ``name``: the format in messages; ``fields``:
    the keys every record of it has (a record holding them all is one of its records)."""

    name: ClassVar[str]
    fields: ClassVar[frozenset[str]]

    @abstractmethod
    def validate(self, path: Path, where: str, record: dict[str, Any]) -> Any:
        """The record checked (an object with a ``model`` attribute: the model it was recorded from, or None).
        Raises DataError naming ``path``, ``where`` (``line N`` / ``record N``) and the field."""

    @abstractmethod
    def read(self, path: Path, records: list[Any], raw: list[dict[str, Any]]) -> ReplayRead:
        """The replies of this format's ``records`` (validated, in file order; ``raw`` as read) of ``path``."""
