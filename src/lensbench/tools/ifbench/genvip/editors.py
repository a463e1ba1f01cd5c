"""GenViP translation step: every infrared image of a folder through an image editor (paper Sec. 4.1, App. C).

The editors themselves (``folder:DIR``, ``openai-images:MODEL``, ``diffusers:MODEL_OR_PATH``; the
App. C prompt and settings) live in :mod:`lensbench.backends.images.editors`; this module runs
one over a folder, resumably, and re-exports them for ``lensbench genvip``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lensbench.backends.images.base import IMAGE_EXTS, find_by_stem, list_images
from lensbench.backends.images.editors import (EDIT_PROMPT, DiffusersEditor, EditError, FolderEditor, ImageEditor,
                                               OpenAIImagesEditor, make_editor)

__all__ = ["EDIT_PROMPT", "EditError", "ImageEditor", "FolderEditor", "OpenAIImagesEditor", "DiffusersEditor",
           "make_editor", "translate_folder", "IMAGE_EXTS", "list_images", "find_by_stem"]


def translate_folder(images: Path, out: Path, editor: ImageEditor, *, limit: int | None = None,
                     on_progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Translate every image in ``images`` into ``out`` (resumable).

    An image whose translation already exists in ``out`` (same stem, any image extension) is
    skipped; a failure is recorded and the run goes on. Writes ``out/translate_report.json``
    and returns it: ``{"editor", "total", "done", "skipped", "failed": [{"file", "error"}]}``.
    """
    images, out = Path(images), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files = list_images(images)
    if limit:
        files = files[:limit]
    report: dict[str, Any] = {"editor": editor.fingerprint, "images": str(images), "total": len(files), "done": 0,
                              "skipped": 0, "failed": []}
    for i, src in enumerate(files):
        if find_by_stem(out, src.name) is not None:
            report["skipped"] += 1
        else:
            try:
                editor.edit(src, out)
                report["done"] += 1
            except EditError as exc:
                report["failed"].append({"file": src.name, "error": str(exc)})
            except OSError as exc:
                report["failed"].append({"file": src.name, "error": f"{type(exc).__name__}: {exc}"})
        if on_progress:
            on_progress(i + 1, len(files))
    (out / "translate_report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    return report
