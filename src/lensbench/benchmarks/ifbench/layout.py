"""IF-Bench's official release (``lensbench data download | check if-bench``): its source, the files its
loader reads, how many questions it holds and the images it misses."""

from __future__ import annotations

from pathlib import Path

from lensbench.benchmarks.ifbench.data import load_questions
from lensbench.benchmarks.layout import FileSet, GitFile, Layout, Release, Source, image_files
from lensbench.core.errors import DataError

__all__ = ["LAYOUT", "count_release", "absent_media"]

LAYOUT = Layout(
    bench="if-bench",
    source=Source("hf", "casiatao/IF-Bench", "main",
                  git_files=(GitFile("casiatao/IF-Bench", "fc784fcabca35cee7fd655b8252b37beddfd82de",
                                     "evaluate/if_bench/if_bench.json", "if_bench.json"),)),
    files=(
        FileSet("question file", ("if_bench.json",), count=1),
        FileSet("infrared images", image_files("infrared_imgs"), count=499, media=True),
        FileSet("GenViP translated images", image_files("translated_rgb_imgs"), minimum=0, media=True),
    ),
    n_samples=680, samples_what="questions",
    # Sec. 3 / Table 2: 680 questions on 499 infrared images (the image is the CI's cluster)
    release=Release(499, "images", 680, "questions"),
    markers=("if_bench.json",),
)


def count_release(root: Path) -> int:
    """The questions of ``if_bench.json`` (no image needed). Raises DataError."""
    return len(load_questions(root, blind=True))


def absent_media(root: Path) -> list[str]:
    """The loader's missing-image error, if any."""
    try:
        load_questions(root)
    except DataError as exc:
        return [str(exc)]
    return []
