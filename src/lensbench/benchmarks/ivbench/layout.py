"""IV-Bench's official release (``lensbench data download | check iv-bench``): its source, the files its
loader reads, how many queries it holds and the videos and query images it misses."""

from __future__ import annotations

from pathlib import Path

from lensbench.benchmarks.ivbench.data import find_question_file, load_queries
from lensbench.benchmarks.layout import FileSet, GitFile, Layout, Release, Source, image_files

__all__ = ["LAYOUT", "count_release", "absent_media"]

LAYOUT = Layout(
    bench="iv-bench",
    source=Source("hf", "m-a-p/IV-Bench", "main",
                  git_files=(GitFile("multimodal-art-projection/IV-Bench", "670baf7a8591f13bbdb962df1111136caccbdf1a",
                                     "dataset/test_data.jsonl", "test_data.jsonl"),
                             GitFile("multimodal-art-projection/IV-Bench", "670baf7a8591f13bbdb962df1111136caccbdf1a",
                                     "dataset/test_video_ids.txt", "test_video_ids.txt"))),
    files=(
        FileSet("question file", ("test_data.jsonl", "dataset/test_data.jsonl"), count=1),
        FileSet("query images", image_files("images"), minimum=1, media=True),
        FileSet("videos", ("videos/*.mp4",), minimum=0, media=True),
    ),
    n_samples=1686, samples_what="queries",
    # the public release (test_data.jsonl): 1,686 queries on 747 videos; the paper's full set is larger
    release=Release(747, "videos", 1686, "queries",
                    note="the public release; the paper evaluates 2,585 queries on 967 videos"),
    markers=("test_data.jsonl", "dataset/test_data.jsonl"),
    notes=("videos are not redistributed: fetch them with 'lensbench ivbench download' into videos/",),
)


def count_release(root: Path) -> int:
    """The queries of the question file (no media needed). Raises DataError."""
    return len(load_queries(find_question_file(root)))


def absent_media(root: Path) -> list[str]:
    """Videos missing from ``videos/`` and query images missing from ``images/`` (counts, first named)."""
    missing: list[str] = []
    qs = load_queries(find_question_file(root))
    vids = sorted({q.video_id for q in qs if not (root / "videos" / f"{q.video_id}.mp4").is_file()})
    imgs = sorted({q.image_name for q in qs if not (root / "images" / q.image_name).is_file()})
    if vids:
        missing.append(f"{len(vids)} of {len({q.video_id for q in qs})} videos not in videos/ (e.g. {vids[0]}.mp4; "
                       "fetch them with 'lensbench ivbench download')")
    if imgs:
        missing.append(f"{len(imgs)} of {len({q.image_name for q in qs})} query images not in images/ "
                       f"(e.g. {imgs[0]})")
    return missing
