"""Placing files: a hard link where the file system allows it, else a copy; never a partial file."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

__all__ = ["link_or_copy"]


def link_or_copy(src: str | Path, dst: str | Path) -> bool:
    """Make ``dst`` hold the file ``src`` (folders created): a hard link, or a copy across devices,
    written under a temporary name then renamed, so ``dst`` is whole or absent. An existing ``dst``
    is kept. Returns True when ``dst`` was made. Raises OSError when ``src`` cannot be read or ``dst``
    cannot be written (no temporary file is left)."""
    dst = Path(dst)
    if dst.is_file():
        return False
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".tmp")
    tmp.unlink(missing_ok=True)
    try:
        try:
            os.link(src, tmp)
        except OSError:
            shutil.copyfile(src, tmp)
        os.replace(tmp, dst)
    except OSError:
        tmp.unlink(missing_ok=True)  # never a partial file left behind (a full disk, an unreadable source)
        raise
    return True
