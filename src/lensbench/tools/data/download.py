"""``lensbench data download BENCH``: the official release, laid out as the loader reads it.

Steps: (1) fetch — a Hugging Face snapshot (archives inside it extracted in place) or a GitHub
archive (its data subfolder extracted), then the pinned single files from the official GitHub
repository the hub copy lacks; or, with ``--from DIR``, copy a local mirror / an existing copy
(the data folder is found inside DIR); (2) verify the file-set counts of
:mod:`~lensbench.tools.data.layouts`; (3) write the manifest (``lensbench-data.json``: source,
requested and resolved revision, per-file sha256, fingerprint) last.

Resumable: hub files already complete are skipped by ``huggingface_hub``; a partial GitHub
archive continues with an HTTP Range request; extracted and copied files of the right size are
kept. Offline: the host is probed first (at most ~5 s) and the command fails with one line
naming the source and the ``--from DIR`` alternative.
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from lensbench.core.version import __version__
from lensbench.core.datahome import default_data_dir
from lensbench.core.errors import DataError
from lensbench.core.extras import require
from lensbench.core.files import link_or_copy
from lensbench.tools.data.fetch import (PROBE_TIMEOUT_S, SourceUnreachable, github_base, github_raw_base,
                                        hf_endpoint, hf_snapshot, http_download, probe)
from lensbench.tools.data.layouts import Layout, Source, get_layout
from lensbench.tools.data.manifest import fingerprint, hash_files, list_files, read_manifest, write_manifest
from lensbench.tools.data.verify import count_files, locate

__all__ = ["download"]


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _need_host(url: str, what: str, bench: str, timeout: float) -> None:
    reason = probe(url, timeout)
    if reason:
        host = urlsplit(url).hostname
        raise SourceUnreachable(f"cannot reach {host} for {what} ({reason}): offline? lay out a local mirror or "
                                f"an existing copy instead: lensbench data download {bench} --from DIR")


def _same_size(a: Path, size: int) -> bool:
    return a.is_file() and a.stat().st_size == size


def _extract(zf: zipfile.ZipFile, prefix: str, target: Path) -> int:
    """Extract the members under ``prefix`` into ``target`` (prefix stripped); files already
    there with the member's size are kept. Returns the number of files written."""
    n = 0
    root = target.resolve()
    for info in zf.infolist():
        if info.is_dir() or not info.filename.startswith(prefix):
            continue
        rel = info.filename[len(prefix):]
        out = (target / rel).resolve()
        if root not in out.parents:
            raise DataError(info.filename, "archive member escapes the data folder")
        if _same_size(out, info.file_size):
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + ".part")
        with zf.open(info) as src, open(tmp, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        os.replace(tmp, out)
        n += 1
    return n


def _extract_archives(dest: Path) -> None:
    """Extract every ``*.zip`` of a hub snapshot next to itself: into its folder when all members
    share one top folder, else into a folder named after the archive."""
    for rel in list_files(dest):
        if not rel.lower().endswith(".zip"):
            continue
        z = dest / rel
        with zipfile.ZipFile(z) as zf:
            tops = {n.split("/", 1)[0] for n in zf.namelist() if n.strip("/")}
            single = len(tops) == 1 and all("/" in n for n in zf.namelist())
            _extract(zf, "", z.parent if single else z.parent / z.stem)


def _github_archive(src: Source, rev: str, dest: Path) -> None:
    staging = dest.parent / f".{dest.name}.download"
    name = src.repo.split("/")[-1]
    archive = http_download(f"{github_base()}/{src.repo}/archive/{rev}.zip", staging / f"{name}-{rev}.zip")
    with zipfile.ZipFile(archive) as zf:
        top = zf.namelist()[0].split("/", 1)[0]
        prefix = f"{top}/{src.subdir.strip('/')}/" if src.subdir else f"{top}/"
        if not any(n.startswith(prefix) for n in zf.namelist()):
            raise DataError(archive, f"the archive has no folder {src.subdir!r}")
        _extract(zf, prefix, dest)
    shutil.rmtree(staging, ignore_errors=True)


def _copy_tree(src: Path, dest: Path) -> None:
    """Copy the data files of ``src`` into ``dest`` (hard links where possible); files already
    there with the same size are kept."""
    for rel in list_files(src):
        a, b = src / rel, dest / rel
        if _same_size(b, a.stat().st_size):
            continue
        b.unlink(missing_ok=True)
        link_or_copy(a, b)


def _from_local(layout: Layout, from_dir: Path, dest: Path, revision: str | None) -> dict[str, Any]:
    if not from_dir.is_dir():
        raise DataError(from_dir, "--from: not a folder")
    found = locate(layout, from_dir)
    if found is None:
        raise DataError(from_dir, f"--from: no {layout.bench} data here or up to 4 levels below "
                                  f"(looked for {' or '.join(layout.markers)})")
    if found.resolve() != dest.resolve():
        _copy_tree(found, dest)
    prior = read_manifest(found) or {}
    return {"source": {"kind": "local", "path": str(found.resolve()), "copied_from": prior.get("source")},
            "revision_requested": revision, "revision": revision or prior.get("revision")}


def _from_source(layout: Layout, revision: str | None, dest: Path, timeout: float,
                 log: Callable[[str], None]) -> dict[str, Any]:
    src = layout.source
    rev = revision or src.revision
    if src.kind == "hf":
        require("huggingface_hub", "data", "lensbench data download")  # before the network: deterministic
        _need_host(hf_endpoint(), f"the Hugging Face dataset {src.repo}", layout.bench, timeout)
        log(f"fetching hf:{src.repo}@{rev} into {dest}")
        resolved = hf_snapshot(src.repo, rev, dest, allow_patterns=src.allow_patterns)
        _extract_archives(dest)
    else:
        _need_host(github_base(), f"the GitHub repository {src.repo}", layout.bench, timeout)
        log(f"fetching github:{src.repo}@{rev} ({src.subdir or 'all'}) into {dest}")
        _github_archive(src, rev, dest)
        resolved = rev
    got = []
    for gf in src.git_files:
        if (dest / gf.dest).is_file():
            continue
        _need_host(github_raw_base(), f"{gf.path} of the GitHub repository {gf.repo}", layout.bench, timeout)
        log(f"fetching github:{gf.repo}@{gf.commit[:10]}:{gf.path}")
        http_download(f"{github_raw_base()}/{gf.repo}/{gf.commit}/{gf.path}", dest / gf.dest)
        got.append({"repo": gf.repo, "commit": gf.commit, "path": gf.path, "dest": gf.dest})
    return {"source": {"kind": src.kind, "repo": src.repo, "subdir": src.subdir or None, "git_files": got},
            "revision_requested": rev, "revision": resolved}


def download(bench: str, dest: str | Path | None = None, *, revision: str | None = None,
             from_dir: str | Path | None = None, probe_timeout: float = PROBE_TIMEOUT_S,
             log: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """Fetch (or, with ``from_dir``, copy) benchmark ``bench`` into ``dest`` (default: its data
    home folder), verify its file counts and write the manifest; returns the manifest.

    Raises KeyError (unknown benchmark), SourceUnreachable (offline: one line naming the source
    and ``--from DIR``), FetchError (HTTP / hub error), MissingExtraError (``data`` extra for the
    hub), DataError (``--from`` folder without the data, or counts that do not match: nothing
    is marked complete; run again after fixing, completed files are kept).
    """
    layout = get_layout(bench)
    dest = Path(dest) if dest else default_data_dir(bench)
    dest.mkdir(parents=True, exist_ok=True)
    if from_dir is not None:
        origin = _from_local(layout, Path(from_dir), dest, revision)
    else:
        origin = _from_source(layout, revision, dest, probe_timeout, log)
    counts = count_files(layout, dest)
    bad = [c.line for c in counts if c.problem]
    if bad:
        raise DataError(dest, "incomplete " + layout.bench + " folder: " + "; ".join(bad)
                        + "".join(f" ({n})" for n in layout.notes))
    log(f"hashing {dest}")
    files = hash_files(dest, list_files(dest))
    doc = {"bench": bench, **origin, "downloaded_at": _now(), "lensbench_version": __version__,
           "counts": {c.fileset.what: c.found for c in counts}, "n_files": len(files),
           "fingerprint": fingerprint(files), "files": files}
    write_manifest(dest, doc)
    return doc
