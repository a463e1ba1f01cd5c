"""Which image editor made a GenViP run's translated RGB images (IF-Bench Tab. 5's Editor column).

Read from the run's ``--translated-dir``: ``translate_report.json`` (written by ``lensbench genvip
translate``; its ``editor`` fingerprint names the model and the LoRA); the IF-only run is ``Vanilla``; a
folder without a report is named by its path; no folder: the release's ``translated_rgb_imgs``.
"""

from __future__ import annotations

import json
from pathlib import Path

from lensbench.benchmarks.ifbench.report import setting
from lensbench.core.results import RunResult

__all__ = ["editor_of"]


def editor_of(r: RunResult) -> str:
    """The editor behind a run's RGB images (module docstring); table pipes replaced by ``;``."""
    inp, _ = setting(r)
    if "rgb" not in inp:
        return "Vanilla"
    folder = r.options.get("translated_dir")
    if not folder:
        return "release translations (translated_rgb_imgs)"
    rep = Path(folder) / "translate_report.json"
    try:
        return str(json.loads(rep.read_text(encoding="utf-8"))["editor"]).replace("|", "; ")
    except (OSError, ValueError, KeyError):
        return str(folder)
