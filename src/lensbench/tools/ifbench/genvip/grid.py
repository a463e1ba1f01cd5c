"""IF-Bench Fig. 15 ("the visualization of translated RGB images from infrared ones across different
editing models", Appendix): one row per infrared image, columns ``Infrared | editor 1 | editor 2 | ...``,
the same infrared images in every column (``lensbench genvip grid``).

Columns come from folders of translated images (``lensbench genvip translate --out``, one per editor)
or from IF-Bench GenViP run folders (their ``translated_dir`` option). A column's title is its label
(``LABEL=PATH``), else the editor fingerprint of the folder's ``translate_report.json`` (what Tab. 5's
Editor column shows, :func:`lensbench.benchmarks.ifbench.report.editor_of`), else the folder name.
Translations are matched to an infrared image by file stem (another image extension allowed), as the
IF-Bench loader matches them. Only images translated by EVERY editor are drawn, so each row compares the
editors on the same input; the ones left out are counted.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lensbench.backends.images.base import find_by_stem, list_images
from lensbench.core.errors import ConfigError, DataError
from lensbench.report.plotstyle import png_bytes, pyplot

__all__ = ["EditorColumn", "GridPlan", "editor_column", "plan_grid", "draw_grid"]


@dataclass(frozen=True)
class EditorColumn:
    """One editor's column: ``label`` (the column title) and ``folder`` of translated images."""

    label: str
    folder: Path


@dataclass
class GridPlan:
    """What the grid shows: ``rows`` = ``[(infrared file, [translated file per column])]`` in row order;
    ``columns``; ``missing`` = ``{column label: infrared names it has no translation of}`` (those rows are
    left out)."""

    rows: list[tuple[Path, list[Path]]]
    columns: list[EditorColumn]
    missing: dict[str, list[str]] = field(default_factory=dict)


def _editor_label(folder: Path) -> str:
    try:
        doc = json.loads((folder / "translate_report.json").read_text(encoding="utf-8"))
        return str(doc["editor"])
    except (OSError, ValueError, KeyError, TypeError):
        return folder.name


def editor_column(spec: str) -> EditorColumn:
    """A column from ``[LABEL=]PATH``: a folder of translated images, or an IF-Bench run folder (``run.json``)
    whose ``translated_dir`` option names one. Raises ConfigError for a path that is neither, or a run
    without translated images."""
    label, sep, path = spec.partition("=")
    if not sep or not label.strip() or Path(spec).exists():
        label, path = "", spec
    p = Path(path)
    if (p / "run.json").is_file():
        from lensbench.api import load_run

        r = load_run(p).result
        folder = r.options.get("translated_dir")
        if r.benchmark != "if-bench" or not folder:
            raise ConfigError(f"{p}: not an IF-Bench GenViP run with --translated-dir (run.json options)")
        p = Path(folder)
    if not p.is_dir():
        raise ConfigError(f"{p}: not a folder of translated images (--translated)")
    return EditorColumn(label.strip() or _editor_label(p), p)


def plan_grid(infrared: Path, columns: Sequence[EditorColumn], *, names: Sequence[str] = (), n: int = 4) -> GridPlan:
    """The rows: ``names`` (infrared file names, in that order) or else the first ``n`` infrared images (by
    name) that every column has translated. Raises ConfigError for no column or ``n`` < 1, DataError naming
    the folder for a named image that is not there or that a column lacks, or when no image is in all
    columns."""
    if not columns:
        raise ConfigError("give at least one --translated folder (one per editor)")
    if n < 1:
        raise ConfigError(f"--n must be at least 1, got {n}")
    infrared = Path(infrared)
    files = list_images(infrared)
    if names:
        chosen = []
        for name in names:
            f = find_by_stem(infrared, name)
            if f is None:
                raise DataError(infrared, f"no infrared image {name!r}", field="--image")
            chosen.append(f)
        files = chosen
    missing: dict[str, list[str]] = {}
    rows = []
    for f in files:
        found = [find_by_stem(c.folder, f.name) for c in columns]
        for c, t in zip(columns, found):
            if t is None:
                missing.setdefault(c.label, []).append(f.name)
        if all(t is not None for t in found):
            rows.append((f, found))
    if names and missing:
        lab, miss = next(iter(missing.items()))
        col = next(c for c in columns if c.label == lab)
        raise DataError(col.folder, f"no translation of {miss[0]} (editor {lab!r})", field="--image")
    if not rows:
        raise DataError(infrared, "no infrared image is translated in every --translated folder")
    return GridPlan(rows if names else rows[:n], list(columns), missing)


def draw_grid(plan: GridPlan, *, cell_in: float = 2.0, title: str | None = None) -> bytes:
    """PNG bytes of the grid (module docstring): ``len(plan.rows)`` rows x ``1 + len(plan.columns)``
    columns of images, column titles on top, the infrared file name left of each row; ``cell_in`` =
    inches per cell. Images are shown whole (aspect kept), in colour as stored (a grey infrared image in
    grey); a translation whose shape differs from its infrared image's is centred on white in a box of
    the infrared image's shape, so a row's cells line up."""
    from PIL import Image, ImageOps

    plt = pyplot("the GenViP translation grid")
    nr, nc = len(plan.rows), 1 + len(plan.columns)
    boxes = []
    for ir, _t in plan.rows:
        with Image.open(ir) as im:
            w, h = im.size
        boxes.append((512, max(1, round(512 * h / w))) if w >= h else (max(1, round(512 * w / h)), 512))
    fig, axes = plt.subplots(nr, nc, figsize=(cell_in * nc, sum(cell_in * b[1] / b[0] for b in boxes) + 0.6),
                             squeeze=False, gridspec_kw={"height_ratios": [b[1] / b[0] for b in boxes]})
    heads = ["Infrared"] + [c.label for c in plan.columns]
    for i, (ir, trans) in enumerate(plan.rows):
        box = boxes[i]
        for j, f in enumerate([ir, *trans]):
            ax = axes[i][j]
            with Image.open(f) as im:
                ax.imshow(ImageOps.pad(im.convert("RGB"), box, color="white"), interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            ax.grid(False)
            for s in ax.spines.values():
                s.set_visible(False)
            if i == 0:
                ax.set_title(heads[j], loc="center", fontsize=9)
            if j == 0:
                ax.set_ylabel(ir.name, fontsize=7)
    fig.suptitle(title or "IF-Bench Fig. 15: infrared images translated to RGB by each editing model")
    return png_bytes(fig)
