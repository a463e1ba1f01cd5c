"""Checks made before anything is loaded or sent: the output folder, an earlier run, the manifest.

Every failure is a ConfigError naming the folder or flag (exit 2), raised before the first
request, and never deletes anything stored.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from lensbench.core.errors import ConfigError
from lensbench.report.runs import MANIFEST, SAMPLES, read_manifest
from lensbench.runtime.folder import write_json
from lensbench.runtime.store import RunStore

__all__ = ["check_out_dir", "check_earlier_run", "recover_manifest"]


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


def check_earlier_run(out: Path, yes: bool) -> None:
    """Refuse to silently re-buy a whole run: when ``out`` shows an earlier run (manifest or
    samples) but its store is missing or empty, ask for ``--yes``."""
    store = out / RunStore.FILENAME
    earlier = (out / MANIFEST).exists() or (out / SAMPLES).exists()
    if not earlier or yes:
        return
    if not store.exists():
        raise ConfigError(f"{out} holds an earlier run ({MANIFEST} / {SAMPLES}) but its {RunStore.FILENAME} is "
                          "missing: continuing would re-send every request. Pass --yes to do that.")
    if store.stat().st_size == 0:
        raise ConfigError(f"{out} holds an earlier run but its {RunStore.FILENAME} is empty: continuing would "
                          "re-send every request. Pass --yes to do that.")
    with RunStore(out) as s:
        if s.n_rows() == 0:
            raise ConfigError(f"{out} holds an earlier run but its {RunStore.FILENAME} has no replies: continuing "
                              "would re-send every request. Pass --yes to do that.")


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
