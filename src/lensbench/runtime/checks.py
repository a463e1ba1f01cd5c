"""Checks made before anything is loaded or sent: the output folder, an earlier run, the manifest.

Every failure is a ConfigError naming the folder or flag (exit 2), raised before the first
request, and never deletes anything stored.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from lensbench.core.errors import ConfigError, DataError
from lensbench.core.jsonl import iter_jsonl
from lensbench.report.runs import MANIFEST, SAMPLES, read_manifest
from lensbench.runtime.folder import write_json
from lensbench.runtime.store import RunStore

__all__ = ["check_out_dir", "check_earlier_run", "recover_manifest", "reusable", "stored_nothing", "answered_before"]


def check_out_dir(out: Path) -> None:
    """``--out`` must be a folder (or creatable) and writable. Raises ConfigError otherwise."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file, not a folder")
    parent = out
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise ConfigError(f"--out {out}: {parent} is a file, so the folder cannot be created")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(f"--out {out}: {parent} is not writable")


def stored_nothing(out: Path) -> bool:
    """True when ``out``'s store holds no reply: the file is missing, empty, or has no rows."""
    store = out / RunStore.FILENAME
    if not store.exists() or store.stat().st_size == 0:
        return True
    with RunStore(out) as s:
        return s.n_rows() == 0


def answered_before(out: Path) -> bool:
    """True when ``out``'s ``samples.jsonl`` shows a sample with a reply (an outcome other than ``error``):
    replies were stored once, whatever the store holds now."""
    if not (out / SAMPLES).is_file():
        return False
    try:
        return any(isinstance(rec, dict) and rec.get("outcome", "error") != "error"
                   for _ln, rec in iter_jsonl(out / SAMPLES, "samples file"))
    except DataError:
        return True  # unreadable: assume it held replies (asking for --yes costs nothing)


def reusable(out: Path) -> bool:
    """A folder whose earlier attempt stored no reply (a wrong URL, a refused replay): it is simply reused,
    whatever settings that attempt had (issue 32.1); nothing in it can be lost or re-bought."""
    return stored_nothing(out) and not answered_before(out)


def check_earlier_run(out: Path, yes: bool) -> None:
    """Refuse to silently re-buy a whole run: when ``out``'s ``samples.jsonl`` shows replies but its store
    is missing, empty or without rows (deleted, or copied without it), ask for ``--yes``. A folder whose
    earlier attempt stored nothing is reused without asking."""
    if yes or not stored_nothing(out) or not answered_before(out):
        return
    store = out / RunStore.FILENAME
    state = "missing" if not store.exists() else "empty" if store.stat().st_size == 0 else "without replies"
    raise ConfigError(f"{out} holds an earlier run with replies ({SAMPLES}) but its {RunStore.FILENAME} is "
                      f"{state}: continuing would re-send every request. Pass --yes to do that.")


def recover_manifest(out: Path, console=None) -> dict[str, Any] | None:
    """The manifest of ``out``; an unreadable ``run.json`` is rebuilt from the copy kept in the store.

    Returns None when the folder has no run. Raises ConfigError when neither copy is readable.
    """
    try:
        return read_manifest(out)
    except ConfigError as exc:
        if not (out / RunStore.FILENAME).exists():
            raise
        with RunStore(out) as s:
            copy = s.get_meta("manifest")
        if copy is None:
            raise ConfigError(f"{exc}; the store keeps no copy of it either") from None
        doc = json.loads(copy)
        write_json(out / MANIFEST, doc)
        if console is not None:
            console.print(f"{out / MANIFEST} was unreadable: rebuilt from the copy in the store", highlight=False)
        return doc
