"""RGB-Th-Bench's official release (``lensbench data download | check rgb-th-bench``): its source, the files
its loader reads, and the media its question files name."""

from __future__ import annotations

from pathlib import Path

from lensbench.benchmarks.layout import FileSet, Layout, Release, Source

__all__ = ["LAYOUT", "absent_media"]

LAYOUT = Layout(
    bench="rgb-th-bench",
    # the data files of the release as held by the public re-evaluation repository (SOURCES.md)
    source=Source("github", "huhanwj/RGB-Th-Benchmark", "3250d05d930f64d085ef83f934f879846781e11c",
                  subdir="RGB-Th-Bench/Data"),
    files=(
        FileSet("scene question files", ("*/*/questions.json",), count=29),
        FileSet("RGB images", ("*/*/rgb.jpg", "*/*/rgb.png"), count=29, media=True),
        FileSet("thermal images", ("*/*/thermal.jpg", "*/*/thermal.png"), count=29, media=True),
    ),
    n_samples=406, samples_what="question units",
    # the paper's benchmark (Sec. 3.2): 14 skills, 1,624 questions on 29 RGB-thermal pairs (the scenes)
    release=Release(29, "scenes", 1624, "questions"),
    markers=("*/*/questions.json",),
)


def absent_media(root: Path) -> list[str]:
    """The scene images (``rgb`` / ``thermal``, ``.jpg`` or ``.png``) missing beside a ``questions.json``."""
    missing: list[str] = []
    for q in sorted(root.glob("*/*/questions.json")):
        for kind in ("rgb", "thermal"):
            if not any((q.parent / f"{kind}{s}").is_file() for s in (".jpg", ".png")):
                missing.append(f"{q.parent.relative_to(root).as_posix()}/{kind}.jpg")
    return missing
