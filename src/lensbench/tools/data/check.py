"""``lensbench data check BENCH DIR``: validate a data folder without running anything.

Checks, each one line: the file-set counts of the benchmark's layout (expected files); the benchmark's
own count of what its loader reads (``count_release``, against the official release); the media the
data files name but the folder lacks (``absent_media``); and, when the folder has a manifest, every
file against its recorded size and sha256. Prints the folder's content fingerprint.

The data folder is looked for inside the folder given (as ``lensbench data download --from DIR``
does), so the checks look at the files the loader reads: a repository checkout or a mirror
passes when its data folder does. Missing media that a run skips by default (the benchmark's
``skip_missing`` option defaults to on: GOBench's git release) is reported, not failed.

A folder written by ``lensbench data demo`` (it holds the demo note) is checked for its layout, not
for the release's sizes: each file set needs its minimum (one file where the release fixes a count),
the loader must read at least one sample, and a first line says it is demo data, NOT the benchmark.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from lensbench.core.datahome import is_demo
from lensbench.core.errors import DataError, LensbenchError
from lensbench.benchmarks.layout import Layout
from lensbench.benchmarks.registry import get_benchmark
from lensbench.tools.data.layouts import get_layout
from lensbench.tools.data.manifest import fingerprint, hash_files, list_files, read_manifest
from lensbench.tools.data.verify import count_files, locate

__all__ = ["CheckItem", "CheckReport", "check"]


@dataclass(frozen=True)
class CheckItem:
    """One check: ``name``, passed or not, and a one-line ``detail``."""

    name: str
    ok: bool
    detail: str


@dataclass
class CheckReport:
    """All checks of one folder; ``ok`` when every item passed. ``fingerprint``: 16 hex (None
    when content hashing was skipped)."""

    bench: str
    root: Path
    items: list[CheckItem] = field(default_factory=list)
    n_samples: int | None = None
    fingerprint: str | None = None

    @property
    def ok(self) -> bool:
        return all(i.ok for i in self.items)

    def lines(self) -> list[str]:
        """Human-readable lines: ``ok|FAIL  name: detail`` per item, then the fingerprint."""
        out = [f"{'ok  ' if i.ok else 'FAIL'}  {i.name}: {i.detail}" for i in self.items]
        if self.fingerprint:
            out.append(f"fingerprint: {self.fingerprint}")
        return out


def _skips_missing(bench: str) -> bool:
    """True when a run of ``bench`` leaves out missing media by default (its ``skip_missing`` option is on)."""
    field = get_benchmark(bench).Options.model_fields.get("skip_missing")
    return bool(field is not None and field.default is True)


def _manifest_item(root: Path, files: dict[str, dict] | None) -> CheckItem | None:
    doc = read_manifest(root)
    if doc is None:
        return None
    want = doc["files"]
    rev = doc.get("revision") or "unknown revision"
    if files is None:  # quick mode: sizes only
        have = {r: {"size": (root / r).stat().st_size} for r in list_files(root)}
        changed = [r for r in want if r in have and have[r]["size"] != want[r].get("size")]
    else:
        have = files
        changed = [r for r in want if r in have and have[r]["sha256"] != want[r].get("sha256")]
    gone = [r for r in want if r not in have]
    extra = [r for r in have if r not in want]
    ok = not (gone or changed)
    detail = f"{len(want)} files recorded ({rev})"
    if gone:
        detail += f"; {len(gone)} missing (e.g. {gone[0]})"
    if changed:
        detail += f"; {len(changed)} changed (e.g. {changed[0]})"
    if extra:
        detail += f"; {len(extra)} not in the manifest"
    return CheckItem("manifest", ok, detail)


def check(bench: str, root: str | Path, *, hash_content: bool = True,
          log: Callable[[str], None] = lambda s: None) -> CheckReport:
    """Validate the data folder ``root`` of benchmark ``bench`` (see the module docstring).

    ``hash_content=False`` compares sizes only against a manifest and prints no fingerprint.
    Never raises for bad data (each problem is a failed item); raises KeyError for an unknown
    benchmark and DataError when ``root`` is not a folder.
    """
    layout: Layout = get_layout(bench)
    root = Path(root)
    if not root.is_dir():
        raise DataError(root, "not a folder")
    rep = CheckReport(bench, root)
    if not any(any(p.is_file() for p in root.glob(m)) for m in layout.markers):
        found = locate(layout, root)
        if found is not None and found != root:
            rep.items.append(CheckItem("data folder", True, f"found at {found} (give that folder to --data-dir)"))
            root = rep.root = found
    demo = is_demo(root)
    if demo:
        rep.items.append(CheckItem("demo data", True, "generated by 'lensbench data demo', NOT the benchmark: "
                                   "the layout is checked, not the release's counts"))
    for c in count_files(layout, root, release_counts=not demo):
        rep.items.append(CheckItem(f"files: {c.fileset.what}", c.problem is None, c.line.split(": ", 1)[1]))
    try:
        n = get_benchmark(bench)().count_release(root)
        rep.n_samples = n
        ok = n > 0 if demo else layout.n_samples is None or n == layout.n_samples
        rep.items.append(CheckItem(f"loader: {layout.samples_what}", ok,
                                   f"{n} (release: {layout.n_samples})" if layout.n_samples else str(n)))
    except (LensbenchError, OSError, ValueError) as exc:  # a bad file, or a missing extra (parquet)
        rep.items.append(CheckItem(f"loader: {layout.samples_what}", False, str(exc)))
    try:
        missing = get_benchmark(bench)().absent_media(root)
        skipped = bool(missing) and _skips_missing(bench)
        detail = "; ".join(missing) if missing else "all present"
        if skipped:
            detail += f"; 'lensbench run {bench}' skips them by default (--no-skip-missing refuses)"
        rep.items.append(CheckItem("media", not missing or skipped, detail))
    except (LensbenchError, OSError, ValueError) as exc:
        rep.items.append(CheckItem("media", False, f"not checked: {exc}"))
    files = None
    if hash_content:
        log(f"hashing {root}")
        files = hash_files(root, list_files(root))
        rep.fingerprint = fingerprint(files)
    m = _manifest_item(root, files)
    if m is not None:
        rep.items.append(m)
    return rep
