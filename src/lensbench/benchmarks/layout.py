"""Where a benchmark's official release comes from, and the files its loader reads (``lensbench data``).

A benchmark states its :class:`Layout` (``Benchmark.layout``, in its own folder): the source (a
Hugging Face dataset or a GitHub repository archive, at a pinned revision where one is known), single
files fetched from the official GitHub repository at a pinned commit when the hub copy lacks them, and
the file sets a complete data folder holds (glob patterns relative to the folder, with the release's
counts). Sources: each benchmark's README (its release, repository and commit) and docs/protocol.md.

Revisions: a 40-hex commit is pinned; ``"main"`` is resolved to the hub's commit at download time and
that commit is recorded in the folder's manifest (``lensbench-data.json``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["FileSet", "GitFile", "Source", "Release", "Layout", "IMAGE_SUFFIXES", "image_files"]

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
class Release:
    """The size of the official release, as a run's coverage counts it (docs/protocol.md: "A run's coverage
    is counted against the release ..., never against its own folder").

    ``clusters`` ``cluster_what`` (plural; the CI's resampled cluster: RGB-Th-Bench's 29 scenes) and
    ``samples`` ``samples_what`` (what is scored: its 1,624 questions), both > 0; ``note`` says which release
    when the paper evaluated another (IV-Bench: the public subset, not the paper's full set). A benchmark
    whose cluster is its sample (GroundingME) states the same count twice.
    """

    clusters: int
    cluster_what: str
    samples: int
    samples_what: str
    note: str = ""

    def __post_init__(self) -> None:
        if self.clusters <= 0 or self.samples <= 0:
            raise ValueError(f"a release holds at least one cluster and one sample, got {self.clusters}, "
                             f"{self.samples}")

    @property
    def one_count(self) -> bool:
        """True when clusters and samples are the same thing (then coverage names one count)."""
        return self.cluster_what == self.samples_what


@dataclass(frozen=True)
class Layout:
    """A benchmark's data folder as its loader reads it (see the module docstring): ``bench`` (its CLI
    name), ``source``, the ``files`` a complete folder holds, ``n_samples`` ``samples_what`` its loader
    reads from the official release, ``markers`` (patterns that identify the folder inside a bigger tree,
    for ``--from DIR``), ``notes`` (printed after a download) and ``release``: the release's size in the
    benchmark's clusters and scored samples (:class:`Release`; None: not stated, coverage then says
    "release size unknown")."""

    bench: str
    source: Source
    files: tuple[FileSet, ...]
    n_samples: int | None
    samples_what: str
    #: patterns that identify the data folder inside a bigger tree (for ``--from DIR``)
    markers: tuple[str, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)
    release: Release | None = None


def image_files(folder: str) -> tuple[str, ...]:
    """Glob patterns of the images in ``folder`` (every suffix of :data:`IMAGE_SUFFIXES`)."""
    return tuple(f"{folder}/*{s}" for s in IMAGE_SUFFIXES)
