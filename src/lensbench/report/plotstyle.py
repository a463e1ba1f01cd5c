"""The one look of every lensbench plot (viewer figures, PNG files, dataset statistics, sweeps, tool plots).

:func:`pyplot` imports matplotlib (the ``plots`` extra, with its install hint when missing), selects
the Agg backend (files only, no display) and applies :data:`STYLE`; :func:`png_bytes` and
:func:`save_png` write a figure with the style's resolution and close it. Every module that draws
goes through :func:`pyplot`, so the palette, fonts, grid and spines are the same everywhere and match
the viewer page (its accent blue first, muted grey text, light grid).

Applying the style sets matplotlib's global ``rcParams`` (as selecting the Agg backend already is
global): a process that draws lensbench plots draws its own plots in this style too.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from lensbench.core.extras import require

__all__ = ["STYLE", "PALETTE", "pyplot", "png_bytes", "save_png"]

#: series colours in order: the viewer's accent blue, then a colour-blind-safe set (Okabe-Ito based)
PALETTE = ["#0969da", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#8250df", "#57606a"]
_TEXT, _MUTED, _GRID = "#1f2328", "#57606a", "#d8dee4"

#: matplotlib rcParams of every lensbench plot (plus ``axes.prop_cycle`` = :data:`PALETTE`, set by :func:`pyplot`)
STYLE: dict[str, Any] = {
    "figure.facecolor": "white", "figure.dpi": 100, "figure.constrained_layout.use": True, "figure.titlesize": 11, "figure.titleweight": "bold",
    "savefig.dpi": 110, "savefig.bbox": "tight", "savefig.pad_inches": 0.12, "savefig.facecolor": "white",
    "font.size": 9, "text.color": _TEXT,
    "axes.titlesize": 10, "axes.titleweight": "bold", "axes.titlelocation": "left", "axes.titlepad": 8,
    "axes.labelsize": 9, "axes.labelcolor": _MUTED, "axes.edgecolor": _MUTED, "axes.linewidth": 0.8,
    "axes.spines.top": False, "axes.spines.right": False,
    "axes.grid": True, "axes.grid.axis": "y", "axes.axisbelow": True,
    "grid.color": _GRID, "grid.linewidth": 0.6, "grid.linestyle": "-",
    "xtick.labelsize": 8, "ytick.labelsize": 8, "xtick.color": _MUTED, "ytick.color": _MUTED,
    "xtick.major.size": 3, "ytick.major.size": 3,
    "legend.fontsize": 8, "legend.frameon": False, "legend.title_fontsize": 8,
    "lines.linewidth": 1.8, "lines.markersize": 5,
    "patch.edgecolor": "white", "patch.linewidth": 0.4,
    "image.cmap": "viridis",
}


def pyplot(what: str = "plots"):
    """``matplotlib.pyplot`` with the Agg backend and :data:`STYLE` applied.

    ``what`` names the plot in the install hint. Raises :class:`lensbench.core.extras.MissingExtraError`
    (with the ``pip install 'lensbench[plots]'`` hint) when matplotlib is not installed.
    """
    matplotlib = require("matplotlib", "plots", what)
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams.update({**STYLE, "axes.prop_cycle": matplotlib.cycler(color=PALETTE)})
    return plt


def png_bytes(fig) -> bytes:
    """PNG bytes of ``fig`` (the style's dpi, tight bounding box); the figure is closed."""
    plt = pyplot()
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png")
    finally:
        plt.close(fig)
    return buf.getvalue()


def save_png(fig, path: str | Path) -> Path:
    """Write ``fig`` as a PNG at ``path`` (the style's dpi, tight bounding box), close it, return ``path``."""
    Path(path).write_bytes(png_bytes(fig))
    return Path(path)
