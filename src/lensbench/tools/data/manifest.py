"""The data folder's manifest (``lensbench-data.json``) and its content fingerprint.

The manifest is written last by ``lensbench data download`` (its presence means the folder is
complete and verified): benchmark, source, requested and resolved revision, time, lensbench
version, per-file size and sha256, file-set counts and the folder fingerprint. ``data check``
compares a folder against it.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from lensbench.core.datahome import MANIFEST_NAME
from lensbench.core.errors import DataError

__all__ = ["MANIFEST_NAME", "list_files", "file_sha256", "hash_files", "fingerprint", "read_manifest",
           "write_manifest"]

#: folders never part of a data folder's content (hub download metadata, partial files)
_SKIP_DIRS = {".cache", ".git", "__pycache__"}


def list_files(root: Path) -> list[str]:
    """Relative POSIX paths of the data files under ``root``, sorted; the manifest, hidden
    download-metadata folders and ``*.incomplete`` / ``*.part`` files are left out."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for f in filenames:
            if f == MANIFEST_NAME or f.endswith((".incomplete", ".part", ".lock")):
                continue
            out.append(Path(dirpath, f).relative_to(root).as_posix())
    return sorted(out)


def file_sha256(path: Path, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def hash_files(root: Path, rels: list[str]) -> dict[str, dict[str, Any]]:
    """``{relpath: {"size": bytes, "sha256": hex}}`` for the files ``rels`` under ``root``."""
    return {r: {"size": (root / r).stat().st_size, "sha256": file_sha256(root / r)} for r in rels}


def fingerprint(files: dict[str, dict[str, Any]]) -> str:
    """16-hex fingerprint of a folder's content: sha256 over the sorted ``path, size, sha256`` lines."""
    h = hashlib.sha256()
    for rel in sorted(files):
        h.update(f"{rel}\0{files[rel]['size']}\0{files[rel]['sha256']}\n".encode())
    return h.hexdigest()[:16]


def read_manifest(root: Path) -> dict[str, Any] | None:
    """The folder's manifest, or None when there is none. Raises DataError for an unreadable one."""
    p = Path(root) / MANIFEST_NAME
    if not p.is_file():
        return None
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(p, f"unreadable manifest ({exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("files"), dict):
        raise DataError(p, "not a lensbench data manifest", field="files")
    return doc


def write_manifest(root: Path, doc: dict[str, Any]) -> Path:
    """Write ``doc`` as the folder's manifest (atomically: temp file + rename); returns its path."""
    p = Path(root) / MANIFEST_NAME
    tmp = p.with_name(p.name + ".part")
    tmp.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, p)
    return p
