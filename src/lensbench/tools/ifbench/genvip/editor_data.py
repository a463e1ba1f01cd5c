"""Training pairs of the GenViP editor fine-tune (IF-Bench App. C, "Qwen-Edit-2509-FT"), moved between
lensbench and DiffSynth-Studio both ways.

* from ``lensbench genvip curate``: its ``manifest.jsonl`` is the dataset (the rows with
  ``kept: true``; infrared ``ir`` = the image to edit, ``rgb`` = the target);
* DiffSynth-Studio's training metadata (the IF-Bench release's
  ``edit_ft/DiffSynth-Studio/data/example.json``): a JSON list (or JSONL) of
  ``{"image": RGB target, "prompt": str, "edit_image": [thermal source, ...]}`` with paths
  relative to DiffSynth's ``--dataset_base_path``. The release's prompts are empty; App. C says
  the editing prompt (:data:`~lensbench.backends.images.editors.EDIT_PROMPT`) was used for
  training, so an empty prompt is read as that prompt unless ``keep_empty_prompts``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from lensbench.backends.images.editors import EDIT_PROMPT
from lensbench.core.errors import DataError
from lensbench.core.jsonl import iter_jsonl, parse_jsonl
from lensbench.tools.training.editor_lora import EditPair
from lensbench.tools.training.sft_data import image_problem

__all__ = ["pairs_from_manifest", "read_diffsynth_metadata", "write_diffsynth_metadata"]


def _file(p: Path, where: str, field: str, value: Any, base: Path, check: bool) -> Path:
    if not isinstance(value, str) or not value:
        raise DataError(p, f"{where}: must be a path", field=field)
    f = Path(value)
    if not f.is_absolute() and not f.is_file():  # relative to the current folder (as curate wrote it) or to base
        f = base / value
    if check and not f.is_file():
        raise DataError(p, f"{where}: file not found: {f}", field=field)
    bad = image_problem(f) if check else None
    if bad:
        raise DataError(p, f"{where}: {f}: {bad}", field=field)
    return f


def pairs_from_manifest(manifest: str | Path, *, prompt: str = EDIT_PROMPT, check_files: bool = True) -> list[EditPair]:
    """The kept pairs of a ``genvip curate`` manifest (a folder holding ``manifest.jsonl`` or the
    file). Raises DataError naming the file, line and field (a missing file, or one that is not a non-empty image); and when no pair is
    kept."""
    p = Path(manifest)
    if p.is_dir():
        p = p / "manifest.jsonl"
    out = []
    for ln, row in iter_jsonl(p, "curation manifest (make it with 'lensbench genvip curate')"):
        if not isinstance(row, dict) or not row.get("kept"):
            continue
        w = f"line {ln}"
        out.append(EditPair((_file(p, w, "ir", row.get("ir"), p.parent, check_files),),
                            _file(p, w, "rgb", row.get("rgb"), p.parent, check_files), prompt,
                            {"cluster": row.get("cluster"), "edge_dice": row.get("edge_dice")}))
    if not out:
        raise DataError(p, "no kept pairs in the manifest")
    return out


def read_diffsynth_metadata(path: str | Path, base: str | Path | None = None, *, keep_empty_prompts: bool = False,
                            check_files: bool = True) -> list[EditPair]:
    """Pairs from DiffSynth-Studio metadata (module docstring); ``base`` = its
    ``--dataset_base_path`` (default: the metadata file's folder). Raises DataError naming the
    file, entry and field."""
    p = Path(path)
    if not p.is_file():
        raise DataError(p, "metadata file not found")
    text = p.read_text(encoding="utf-8")
    try:
        rows = [v for _ln, v in parse_jsonl(p, text)] if p.suffix == ".jsonl" else json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(p, f"not valid JSON ({exc})") from None
    if not isinstance(rows, list):
        raise DataError(p, "expected a list of entries")
    root = Path(base) if base else p.parent
    out = []
    for i, row in enumerate(rows):
        w = f"entry {i}"
        if not isinstance(row, dict):
            raise DataError(p, f"{w}: not an object")
        srcs = row.get("edit_image")
        srcs = [srcs] if isinstance(srcs, str) else srcs
        if not isinstance(srcs, list) or not srcs:
            raise DataError(p, f"{w}: must be a path or a non-empty list of paths", field="edit_image")
        prompt = row.get("prompt", "")
        if not isinstance(prompt, str):
            raise DataError(p, f"{w}: must be a string", field="prompt")
        out.append(EditPair(tuple(_file(p, w, "edit_image", s, root, check_files) for s in srcs),
                            _file(p, w, "image", row.get("image"), root, check_files),
                            prompt if (prompt or keep_empty_prompts) else EDIT_PROMPT))
    return out


def write_diffsynth_metadata(pairs: list[EditPair], path: str | Path, base: str | Path | None = None, *,
                             empty_prompt: bool = False) -> Path:
    """DiffSynth-Studio metadata JSON at ``path`` (``image``, ``prompt``, ``edit_image`` list),
    paths relative to ``base`` (default the file's folder) when inside it. ``empty_prompt``
    writes ``""`` as the release does. Returns ``path``."""
    p = Path(path)
    root = (Path(base) if base else p.parent).resolve()

    def rel(f: Path) -> str:
        a = Path(f).resolve()
        return os.path.relpath(a, root) if a.is_relative_to(root) else str(a)

    rows = [{"image": rel(x.target), "prompt": "" if empty_prompt else x.prompt,
             "edit_image": [rel(s) for s in x.sources]} for x in pairs]
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(rows, indent=4, ensure_ascii=False) + "\n", encoding="utf-8")
    return p
