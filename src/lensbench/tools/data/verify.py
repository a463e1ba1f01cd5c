"""File-set counts of a data folder against its :class:`~lensbench.benchmarks.layout.Layout`
(shared by ``data download``, which refuses to write a manifest for an incomplete folder, and
``data check``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lensbench.benchmarks.layout import FileSet, Layout

__all__ = ["SetCount", "count_files", "locate"]


@dataclass(frozen=True)
class SetCount:
    """How many files of ``fileset`` a folder holds; ``problem`` is None when the count is right."""

    fileset: FileSet
    found: int
    problem: str | None

    @property
    def line(self) -> str:
        """``"RGB images: 29 (release: 29)"`` plus the problem, if any."""
        fs = self.fileset
        want = f"release: {fs.count}" if fs.count is not None else (f"at least {fs.minimum}" if fs.minimum else "optional")
        return f"{fs.what}: {self.found} ({want})" + (f" - {self.problem}" if self.problem else "")


def _matches(root: Path, fs: FileSet) -> set[Path]:
    found: set[Path] = set()
    for pat in fs.patterns:
        found.update(p for p in root.glob(pat) if p.is_file())
    return found


def count_files(layout: Layout, root: Path, release_counts: bool = True) -> list[SetCount]:
    """One :class:`SetCount` per file set of ``layout`` for the folder ``root``.

    ``release_counts=False`` (demo data): a set the release fixes the size of needs at least one file
    instead of that exact count; the minimums hold as always."""
    out = []
    for fs in layout.files:
        n = len(_matches(Path(root), fs))
        problem = None
        if not release_counts and fs.count is not None:
            if n < max(1, fs.minimum):
                problem = f"expected at least {max(1, fs.minimum)}, found {n}"
        elif fs.count is not None and n != fs.count:
            problem = f"expected {fs.count}, found {n}"
        elif n < fs.minimum:
            problem = f"expected at least {fs.minimum}, found {n}"
        out.append(SetCount(fs, n, problem))
    return out


def locate(layout: Layout, root: Path, max_depth: int = 4) -> Path | None:
    """The folder at or below ``root`` (breadth first, up to ``max_depth`` levels) where one of
    ``layout.markers`` matches; None when there is none. Used to find the data folder inside a
    repository checkout or a mirror given to ``--from``."""
    level = [Path(root)]
    for _ in range(max_depth + 1):
        for d in level:
            if any(any(p.is_file() for p in d.glob(m)) for m in layout.markers):
                return d
        level = sorted(c for d in level for c in d.iterdir() if c.is_dir() and not c.name.startswith("."))
        if not level:
            break
    return None
