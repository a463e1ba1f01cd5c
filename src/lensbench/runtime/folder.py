"""Writing the run folder's files: ``run.json`` (manifest), ``samples.jsonl`` (records), ``result.json``.

``responses.sqlite`` (the run store, :mod:`lensbench.runtime.store`) is the source of truth; these
files are rebuilt from it by a re-run. Writes are atomic (temp file + rename). They are read by
:mod:`lensbench.report.runs`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from lensbench.core.errors import ConfigError
from lensbench.core.jsonl import dumps_line, safe_line
from lensbench.core.records import SampleRecord
from lensbench.report.runs import MANIFEST, RESULT, SAMPLES
from lensbench.runtime.lock import RunLock
from lensbench.runtime.store import RunStore
from lensbench.core.writes import write_atomically

__all__ = ["MANIFEST", "SAMPLES", "RESULT", "RUN_FILES", "write_json", "write_samples", "check_out_file"]

#: a run folder's own files: no command writes over them (its store with SQLite's side files, the lock,
#: manifest, records, result). A store kept by ``lensbench repair`` (``responses.sqlite.damaged-*``) too.
RUN_FILES = frozenset({RunStore.FILENAME, *(RunStore.FILENAME + s for s in ("-wal", "-shm", "-journal")),
                       RunLock.FILENAME, MANIFEST, SAMPLES, RESULT})


def check_out_file(path: str | Path, flag: str = "--out") -> None:
    """Refuse an output path that would write over a run folder's own file, before anything is opened.

    ``path`` (symlinks followed) is refused when it names one of :data:`RUN_FILES` (or a kept
    damaged store) in a folder that holds a run (a store, manifest or lock: any run's, live or
    finished), or when it is a folder. Raises ConfigError naming ``flag`` and the path.
    """
    target = Path(os.path.realpath(path))
    name, folder = target.name, target.parent
    if name in RUN_FILES or name.startswith(RunStore.FILENAME + ".damaged-"):
        if any((folder / f).exists() for f in (RunStore.FILENAME, MANIFEST, RunLock.FILENAME)):
            shown = f"{path} (-> {target})" if str(target) != str(Path(path).absolute()) else str(path)
            raise ConfigError(f"{flag} {shown} is a file of the run folder {folder}: writing it would destroy "
                              "the run; give another path")
    if target.is_dir():
        raise ConfigError(f"{flag} {path} is a folder; give a file path")


def write_json(path: Path, obj: Any) -> None:
    """Write ``obj`` as indented UTF-8 JSON atomically (never a half-written file, no temporary file
    left). Raises :class:`~lensbench.core.writes.WriteFailed` when the disk refuses it."""
    text = json.dumps(obj, indent=2, ensure_ascii=False, default=str)
    write_atomically(path, lambda fh: fh.write(text))


def write_samples(run_dir: str | Path, records: Iterable[SampleRecord | dict[str, Any]]) -> None:
    """Write ``samples.jsonl`` (one record per line, in order; U+2028, U+2029 and U+0085 escaped, so that every
    reader sees one line per record: :mod:`lensbench.core.jsonl`) atomically. Raises WriteFailed (see
    :func:`write_json`)."""

    def write(fh) -> None:
        for r in records:
            fh.write((safe_line(r.json_line()) if isinstance(r, SampleRecord) else dumps_line(r, default=str)) + "\n")

    write_atomically(Path(run_dir) / SAMPLES, write)
