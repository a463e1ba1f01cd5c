"""Crash-safe training checkpoints (issue 30.3), for the HF Trainer runs and the editor LoRA loop alike.

A checkpoint is written into ``<checkpoints>/tmp-checkpoint-N/`` and renamed to ``checkpoint-N`` only
once every file of it is on disk (:func:`atomic_checkpoint`), so a process killed (``kill -9``, a
full disk) while a checkpoint is written leaves a ``tmp-*`` folder and never a half-written
``checkpoint-N``. A resume (:func:`latest_complete`) takes the newest COMPLETE checkpoint: a folder
without its completion marker (written last: the HF Trainer's ``trainer_state.json``, accelerate's
``random_states_0.pkl``), e.g. one left by a version before this rule, is ignored and reported, and
leftover ``tmp-*`` folders are removed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["HF_MARKER", "ACCELERATE_MARKER", "Resume", "latest_complete", "atomic_checkpoint", "STAGING_PREFIX"]

#: the HF Trainer writes ``trainer_state.json`` last (``Trainer._save_checkpoint``, transformers 4.4x-5.x).
HF_MARKER = "trainer_state.json"
#: accelerate's ``save_state`` writes the RNG states last (``accelerate.checkpointing.save_accelerator_state``).
ACCELERATE_MARKER = "random_states_0.pkl"
STAGING_PREFIX = "tmp-"
_NAME = re.compile(r"^checkpoint-(\d+)$")


@dataclass
class Resume:
    """Where a run resumes: ``path`` (the newest complete ``checkpoint-N``, None = from scratch) at
    ``step`` (0 without one); ``incomplete``: checkpoint folders ignored for lacking their marker;
    ``removed``: leftover staging folders (``tmp-checkpoint-N``) deleted."""

    path: Path | None = None
    step: int = 0
    incomplete: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def report(self) -> list[str]:
        """One sentence per ignored or removed folder (empty when there was nothing to say)."""
        return ([f"ignored incomplete checkpoint {p} (no marker file: the process stopped while writing it)"
                 for p in self.incomplete] +
                [f"removed unfinished checkpoint {p} (the process stopped while writing it)" for p in self.removed])


def _complete(d: Path, marker: str) -> bool:
    f = d / marker
    if not f.is_file():
        return False
    if marker.endswith(".json"):
        try:
            json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
    return True


def latest_complete(ckpts: str | Path, marker: str) -> Resume:
    """The newest complete checkpoint under ``ckpts`` (module docstring); removes leftover
    ``tmp-checkpoint-*`` folders. A missing ``ckpts`` folder = nothing to resume."""
    root = Path(ckpts)
    res = Resume()
    if not root.is_dir():
        return res
    found: list[tuple[int, Path]] = []
    for d in sorted(root.iterdir()):
        if not d.is_dir():
            continue
        if d.name.startswith(STAGING_PREFIX + "checkpoint-"):
            shutil.rmtree(d, ignore_errors=True)
            res.removed.append(str(d))
            continue
        m = _NAME.match(d.name)
        if m is None:
            continue
        if _complete(d, marker):
            found.append((int(m.group(1)), d))
        else:
            res.incomplete.append(str(d))
    if found:
        res.step, res.path = max(found)
    return res


def atomic_checkpoint(ckpts: str | Path, step: int, write: Callable[[Path], Path | None]) -> Path:
    """Write checkpoint ``step`` by ``write(staging)`` into ``ckpts/tmp-checkpoint-<step>``, then rename
    it to ``ckpts/checkpoint-<step>`` (replacing an incomplete folder of that name). ``write`` may
    return a folder (a Path) inside ``staging`` that holds the checkpoint (the rest of ``staging``
    is then deleted); anything else = ``staging`` itself. Returns the final path. What ``write`` raises propagates;
    the staging folder is then left for :func:`latest_complete` to remove."""
    root = Path(ckpts)
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"checkpoint-{step}"
    staging = root / f"{STAGING_PREFIX}{final.name}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    got = write(staging)
    content = got if isinstance(got, Path) else staging
    _fsync_tree(content)
    if final.exists():
        shutil.rmtree(final)
    os.replace(content, final)
    if content != staging:
        shutil.rmtree(staging, ignore_errors=True)
    _fsync_dir(root)
    return final


def _fsync_tree(d: Path) -> None:
    for f in d.rglob("*"):
        if f.is_file():
            with open(f, "rb") as fh:
                os.fsync(fh.fileno())
    _fsync_dir(d)


def _fsync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
