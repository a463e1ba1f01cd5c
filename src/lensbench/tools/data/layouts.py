"""Where each benchmark's official release comes from, and the files its loader reads.

One :class:`Layout` per benchmark (CLI name): the source (a Hugging Face dataset or a GitHub
repository archive, at a pinned revision where one is known), single files fetched from the
official GitHub repository at a pinned commit when the hub copy lacks them, and the file sets a
complete data folder holds (glob patterns relative to the folder, with the release's counts).
Sources: SPEC.md (the protocol contract) and ``../shared/data/SOURCES.md`` (repos and commits).

Revisions: a 40-hex commit is pinned; ``"main"`` is resolved to the hub's commit at download
time and that commit is recorded in the folder's manifest (``lensbench-data.json``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["FileSet", "GitFile", "Source", "Layout", "LAYOUTS", "get_layout", "IMAGE_SUFFIXES"]

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")


@dataclass(frozen=True)
class FileSet:
    """Files of one kind in a data folder: ``patterns`` are ``Path.glob`` patterns relative to it.

    ``count``: the exact number in the official release (None: not fixed); ``minimum``: fewer is
    an error (0 = optional, e.g. IV-Bench videos fetched separately); ``media``: images/videos
    (reported as missing media).
    """

    what: str
    patterns: tuple[str, ...]
    count: int | None = None
    minimum: int = 1
    media: bool = False


@dataclass(frozen=True)
class GitFile:
    """One file of a GitHub repository at a pinned commit, stored at ``dest`` in the data folder."""

    repo: str
    commit: str
    path: str
    dest: str


@dataclass(frozen=True)
class Source:
    """``kind="hf"``: the dataset ``repo`` on the Hugging Face Hub (``allow_patterns`` limits the
    files); ``kind="github"``: the archive of ``repo`` at ``revision``, whose folder ``subdir``
    becomes the data folder. ``git_files`` are fetched afterwards when missing."""

    kind: Literal["hf", "github"]
    repo: str
    revision: str
    subdir: str = ""
    allow_patterns: tuple[str, ...] | None = None
    git_files: tuple[GitFile, ...] = ()

    @property
    def pinned(self) -> bool:
        """True when ``revision`` is a full commit hash."""
        return len(self.revision) == 40 and all(c in "0123456789abcdef" for c in self.revision)

    @property
    def label(self) -> str:
        """``hf:casiatao/IF-Bench`` / ``github:huhanwj/RGB-Th-Benchmark`` (for messages)."""
        return f"{'hf' if self.kind == 'hf' else 'github'}:{self.repo}"


@dataclass(frozen=True)
class Layout:
    """A benchmark's data folder as its loader reads it (see the module docstring)."""

    bench: str
    source: Source
    files: tuple[FileSet, ...]
    n_samples: int | None
    samples_what: str
    #: patterns that identify the data folder inside a bigger tree (for ``--from DIR``)
    markers: tuple[str, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)


def _imgs(folder: str) -> tuple[str, ...]:
    return tuple(f"{folder}/*{s}" for s in IMAGE_SUFFIXES)


LAYOUTS: dict[str, Layout] = {
    "rgb-th-bench": Layout(
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
        markers=("*/*/questions.json",),
    ),
    "if-bench": Layout(
        bench="if-bench",
        source=Source("hf", "casiatao/IF-Bench", "main",
                      git_files=(GitFile("casiatao/IF-Bench", "fc784fcabca35cee7fd655b8252b37beddfd82de",
                                         "evaluate/if_bench/if_bench.json", "if_bench.json"),)),
        files=(
            FileSet("question file", ("if_bench.json",), count=1),
            FileSet("infrared images", _imgs("infrared_imgs"), count=499, media=True),
            FileSet("GenViP translated images", _imgs("translated_rgb_imgs"), minimum=0, media=True),
        ),
        n_samples=680, samples_what="questions",
        markers=("if_bench.json",),
    ),
    "iv-bench": Layout(
        bench="iv-bench",
        source=Source("hf", "m-a-p/IV-Bench", "main",
                      git_files=(GitFile("multimodal-art-projection/IV-Bench", "670baf7a8591f13bbdb962df1111136caccbdf1a",
                                         "dataset/test_data.jsonl", "test_data.jsonl"),
                                 GitFile("multimodal-art-projection/IV-Bench", "670baf7a8591f13bbdb962df1111136caccbdf1a",
                                         "dataset/test_video_ids.txt", "test_video_ids.txt"))),
        files=(
            FileSet("question file", ("test_data.jsonl", "dataset/test_data.jsonl"), count=1),
            FileSet("query images", _imgs("images"), minimum=1, media=True),
            FileSet("videos", ("videos/*.mp4",), minimum=0, media=True),
        ),
        n_samples=1686, samples_what="queries",
        markers=("test_data.jsonl", "dataset/test_data.jsonl"),
        notes=("videos are not redistributed: fetch them with 'lensbench ivbench download' into videos/",),
    ),
    "gobench": Layout(
        bench="gobench",
        source=Source("hf", "bonnot/GOBench", "main",
                      git_files=(GitFile("Amber0614/GOBench", "9f5c2caf4b448970fa5ec8c9d5710666275e6c77",
                                         "data/data_total.json", "data_total.json"),)),
        files=(
            FileSet("records file", ("data_total.json", "data/data_total.json"), count=1),
            FileSet("human ratings and images (VLMEvalKit TSV)", ("GOBench.tsv",), minimum=0),
        ),
        n_samples=999, samples_what="records",
        markers=("data_total.json", "data/data_total.json", "GOBench.tsv"),
        notes=("images and human ratings are in GOBench.tsv (--human-ratings DIR/GOBench.tsv)",),
    ),
    "groundingme": Layout(
        bench="groundingme",
        # revision as read and pinned by an independent project (public registry of sources, 2026-09-03)
        source=Source("hf", "lirang04/GroundingME", "78e3c7974b2b1db0ea52266969e40f664a38e330",
                      allow_patterns=("*.parquet", "*.md", "*.json")),
        files=(FileSet("parquet shards", ("*.parquet", "*/*.parquet"), minimum=1),),
        n_samples=1005, samples_what="samples",
        markers=("*.parquet", "*/*.parquet", "groundingme.tsv"),
    ),
}


def get_layout(bench: str) -> Layout:
    """The layout of benchmark ``bench`` (CLI name). Raises KeyError listing the known names."""
    try:
        return LAYOUTS[bench]
    except KeyError:
        raise KeyError(f"unknown benchmark {bench!r}; known: {', '.join(LAYOUTS)}") from None
