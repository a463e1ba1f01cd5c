"""GOBench's official release (``lensbench data download | check gobench``): its source, the files its
loader reads, how many records it holds and the images it misses."""

from __future__ import annotations

from pathlib import Path

from lensbench.benchmarks.gobench.load import find_records_file, load_records
from lensbench.benchmarks.layout import FileSet, GitFile, Layout, Release, Source

__all__ = ["LAYOUT", "count_release", "absent_media"]

LAYOUT = Layout(
    bench="gobench",
    source=Source("hf", "bonnot/GOBench", "main",
                  git_files=(GitFile("Amber0614/GOBench", "9f5c2caf4b448970fa5ec8c9d5710666275e6c77",
                                     "data/data_total.json", "data_total.json"),)),
    files=(
        FileSet("records file", ("data_total.json", "data/data_total.json"), count=1),
        FileSet("human ratings and images (VLMEvalKit TSV)", ("GOBench.tsv",), minimum=0),
    ),
    n_samples=999, samples_what="records",
    # 333 scenarios x 3 generated images = 999 images; the image is both the scored sample and the CI's cluster
    release=Release(999, "images", 999, "images", note="333 scenarios x 3 images"),
    markers=("data_total.json", "data/data_total.json", "GOBench.tsv"),
    notes=("images and human ratings are in GOBench.tsv (--human-ratings DIR/GOBench.tsv)",),
)


def count_release(root: Path) -> int:
    """The records of ``data_total.json``. Raises DataError."""
    return len(load_records(find_records_file(root)))


def absent_media(root: Path) -> list[str]:
    """Images absent as files when no ``GOBench.tsv`` (which holds them) is there either."""
    recs = load_records(find_records_file(root))
    absent = [r.image for r in recs if r.image_path is None]
    if absent and not (root / "GOBench.tsv").is_file():
        return [f"{len(absent)} of {len(recs)} images absent as files and no GOBench.tsv (e.g. {absent[0]})"]
    return []
