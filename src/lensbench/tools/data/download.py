"""``lensbench data download BENCH``: the official release, laid out as the loader reads it.

Steps: (1) fetch — a Hugging Face snapshot (archives inside it extracted in place) or a GitHub
archive (its data subfolder extracted), then the pinned single files from the official GitHub
repository the hub copy lacks; or, with ``--from DIR``, copy a local mirror / an existing copy
(the data folder is found inside DIR; every file the pinned release has a sha256 for is checked
before anything is copied); (2) verify the file-set counts of
the benchmark's :class:`~lensbench.benchmarks.layout.Layout`; (3) write the manifest (``lensbench-data.json``: source,
requested and resolved revision, per-file sha256, fingerprint) last.

Verified: every file taken from a pinned release is checked against the sha256 shipped with
lensbench (:mod:`~lensbench.tools.data.pins`) before it is put in place; a file that differs,
a file the release never had, or a missing one is refused and no manifest is written. Sources
without pinned hashes (Hugging Face ``main``) are named in the manifest's ``verification``.
Archives are extracted with bounded expansion (:mod:`~lensbench.tools.data.archive`).

Resumable and never half-trusted: a download is a ``.part`` file until complete (a body
shorter than its Content-Length stays ``.part``, resumed next time with an HTTP Range request)
and checked; extracted and copied files appear under their names only when complete (pinned:
sha256; else size and CRC-32 for extracted, size for copied ones); the manifest is removed when
a download starts and written only at the end. Hub files already complete are skipped by
``huggingface_hub``. Offline: the host is probed first (at most ~5 s) and the command fails with
one line naming the source and the ``--from DIR`` alternative.
"""

from __future__ import annotations

import datetime as _dt
import errno
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
from lensbench.tools.data.archive import ArchiveLimits, extract_zip
from lensbench.tools.data.fetch import (PROBE_TIMEOUT_S, SourceUnreachable, github_base, github_raw_base,
                                        hf_endpoint, hf_snapshot, http_download, probe)
from lensbench.benchmarks.layout import Layout, Source
from lensbench.tools.data.layouts import get_layout
from lensbench.tools.data.manifest import (MANIFEST_NAME, fingerprint, hash_files, list_files, read_manifest,
                                           write_manifest)
from lensbench.tools.data.pins import (PinnedSource, file_pin, pinned_source, source_key, unknown_reason,
                                       verify_file)
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


def _extract_archives(dest: Path, limits: ArchiveLimits) -> None:
    """Extract every ``*.zip`` of a hub snapshot next to itself: into its folder when all members
    share one top folder, else into a folder named after the archive."""
    for rel in list_files(dest):
        if not rel.lower().endswith(".zip"):
            continue
        z = dest / rel
        try:
            with zipfile.ZipFile(z) as zf:
                names = zf.namelist()
        except (zipfile.BadZipFile, OSError):
            names = []  # extract_zip names the damage in one line
        tops = {n.split("/", 1)[0] for n in names if n.strip("/")}
        single = bool(names) and len(tops) == 1 and all("/" in n for n in names)
        extract_zip(z, "", z.parent if single else z.parent / z.stem, limits=limits)


def _shown(activity: Callable[[str], Any] | None, label: str):
    """``activity(label)`` (a progress display, used as a context manager), or a display that shows nothing."""
    if activity is not None:
        return activity(label)
    from contextlib import nullcontext

    return nullcontext(None)


def _github_archive(src: Source, rev: str, dest: Path, limits: ArchiveLimits,
                    activity: Callable[[str], Any] | None = None) -> PinnedSource | None:
    staging = dest.parent / f".{dest.name}.download"
    name = src.repo.split("/")[-1]
    with _shown(activity, f"github:{src.repo}@{rev[:10]}") as shown:
        archive = http_download(f"{github_base()}/{src.repo}/archive/{rev}.zip", staging / f"{name}-{rev}.zip",
                                progress=shown)
    pins = pinned_source(source_key("github", src.repo, rev))
    try:
        with zipfile.ZipFile(archive) as zf:
            names = zf.namelist()
    except (zipfile.BadZipFile, OSError):
        names = []
    top = names[0].split("/", 1)[0] if names else ""
    prefix = f"{top}/{src.subdir.strip('/')}/" if src.subdir else f"{top}/"
    if names and not any(n.startswith(prefix) for n in names):
        raise DataError(archive, f"the archive has no folder {src.subdir!r}")
    extract_zip(archive, prefix, dest, strip=f"{top}/", pins=pins, limits=limits)
    shutil.rmtree(staging, ignore_errors=True)
    return pins


def _local_pins(layout: Layout, revision: str | None) -> dict[str, tuple[tuple[int, str], str]]:
    """The pins that apply to a ``--from`` copy: data-folder path -> ``((size, sha256), source key)``.

    The release source at ``revision`` (default: the layout's; a GitHub source's ``subdir`` is the data
    folder, so its prefix is dropped) and each pinned single file, at its ``dest`` and at its repo path
    (a checkout keeps ``data/data_total.json`` where the download puts ``data_total.json``)."""
    src = layout.source
    out: dict[str, tuple[tuple[int, str], str]] = {}
    pins = pinned_source(source_key(src.kind, src.repo, revision or src.revision))
    if pins is not None:
        prefix = src.subdir.strip("/") + "/" if src.kind == "github" and src.subdir else ""
        out.update({p[len(prefix):]: (pin, pins.key) for p, pin in pins.files.items() if p.startswith(prefix)})
    for gf in src.git_files:
        gpins = pinned_source(source_key("github", gf.repo, gf.commit))
        pin = gpins.expected(gf.path) if gpins is not None else None
        if pin is not None:
            out[gf.dest] = out[gf.path] = (pin, gpins.key)
    return out


def _check_local(src: Path, pins: dict[str, tuple[tuple[int, str], str]]) -> list[str]:
    """Every pinned file of the ``--from`` folder ``src`` against its sha256, before anything is copied; the
    sources checked. Raises DataError naming the file, the expected and the actual sha256 at the first that
    differs (files the table has no pin for are taken as they are)."""
    checked = set()
    for rel in list_files(src):
        if rel not in pins:
            continue
        (size, sha), key = pins[rel]
        got_size, got = file_pin(src / rel)
        if (got_size, got) != (size, sha):
            raise DataError(src / rel, f"differs from the pinned release {key}: sha256 {got} ({got_size} bytes), "
                                       f"expected {sha} ({size} bytes); nothing was copied and no manifest was "
                                       "written")
        checked.add(key)
    return sorted(checked)


def _copy_tree(src: Path, dest: Path, pins: dict[str, tuple[tuple[int, str], str]] | None = None) -> None:
    """Copy the data files of ``src`` into ``dest`` (hard links where possible); files already
    there with the same size are kept (a pinned one only when its sha256 is the pinned one)."""
    pins = pins or {}
    for rel in list_files(src):
        a, b = src / rel, dest / rel
        if _same_size(b, a.stat().st_size) and (rel not in pins or verify_file(b, pins[rel][0])):
            continue
        b.unlink(missing_ok=True)
        try:
            link_or_copy(a, b)
        except OSError as exc:
            if exc.errno == errno.ENOSPC:
                raise DataError(b, "no space left on the device: free some space and run the same command again "
                                   "(complete files are kept)") from None
            raise DataError(b, f"cannot copy from {a}: {exc.strerror or exc}") from None


def _from_local(layout: Layout, from_dir: Path, dest: Path, revision: str | None) -> dict[str, Any]:
    if not from_dir.is_dir():
        raise DataError(from_dir, "--from: not a folder")
    found = locate(layout, from_dir)
    if found is None:
        raise DataError(from_dir, f"--from: no {layout.bench} data here or up to 4 levels below "
                                  f"(looked for {' or '.join(layout.markers)})")
    pins = _local_pins(layout, revision)
    checked = _check_local(found, pins)
    if found.resolve() != dest.resolve():
        (dest / MANIFEST_NAME).unlink(missing_ok=True)  # the folder changes: complete again only when verified
        _copy_tree(found, dest, pins)
    prior = read_manifest(found) or {}
    return {"source": {"kind": "local", "path": str(found.resolve()), "copied_from": prior.get("source")},
            "revision_requested": revision, "revision": revision or prior.get("revision"),
            "verification": {"pinned": checked}}


def _from_source(layout: Layout, revision: str | None, dest: Path, timeout: float,
                 log: Callable[[str], None], limits: ArchiveLimits,
                 activity: Callable[[str], Any] | None = None) -> dict[str, Any]:
    src = layout.source
    rev = revision or src.revision
    verified: list[str] = []
    unverified: list[str] = []
    if src.kind == "hf":
        require("huggingface_hub", "data", "lensbench data download")  # before the network: deterministic
        _need_host(hf_endpoint(), f"the Hugging Face dataset {src.repo}", layout.bench, timeout)
        log(f"fetching hf:{src.repo}@{rev} into {dest}")
        resolved = hf_snapshot(src.repo, rev, dest, allow_patterns=src.allow_patterns)
        key = source_key("hf", src.repo, resolved)
        pins = pinned_source(key)
        if pins is not None:
            _check_pinned_files(pins, dest)
            verified.append(key)
        else:
            unverified.append(key)
            log(f"note: the files of {key} are not verified: lensbench ships no pinned sha256 for them "
                f"({unknown_reason(key) or 'not in the table'})")
        _extract_archives(dest, limits)
    else:
        _need_host(github_base(), f"the GitHub repository {src.repo}", layout.bench, timeout)
        log(f"fetching github:{src.repo}@{rev} ({src.subdir or 'all'}) into {dest}")
        pins = _github_archive(src, rev, dest, limits, activity)
        key = source_key("github", src.repo, rev)
        (verified if pins is not None else unverified).append(key)
        if pins is None:
            log(f"note: the files of {key} are not verified: lensbench ships no pinned sha256 for this revision")
        resolved = rev
    got = []
    for gf in src.git_files:
        key = source_key("github", gf.repo, gf.commit)
        pins = pinned_source(key)
        pin = pins.expected(gf.path) if pins is not None else None
        target = dest / gf.dest
        if target.is_file() and (verify_file(target, pin) if pin is not None else True):
            continue
        _need_host(github_raw_base(), f"{gf.path} of the GitHub repository {gf.repo}", layout.bench, timeout)
        log(f"fetching github:{gf.repo}@{gf.commit[:10]}:{gf.path}")
        with _shown(activity, f"github:{gf.repo}:{gf.path}") as shown:
            http_download(f"{github_raw_base()}/{gf.repo}/{gf.commit}/{gf.path}", target, pin=pin, source=key,
                          progress=shown)
        (verified if pin is not None else unverified).append(f"{key}:{gf.path}")
        got.append({"repo": gf.repo, "commit": gf.commit, "path": gf.path, "dest": gf.dest})
    return {"source": {"kind": src.kind, "repo": src.repo, "subdir": src.subdir or None, "git_files": got},
            "revision_requested": rev, "revision": resolved,
            "verification": {"pinned": sorted(set(verified)), "not_pinned": sorted(set(unverified))}}


def _check_pinned_files(pins: PinnedSource, dest: Path) -> None:
    """Every pinned file of a hub snapshot present with its sha256; a differing one is removed."""
    for repo_path, pin in pins.files.items():
        f = dest / repo_path
        if not verify_file(f, pin):
            if f.is_file():
                f.unlink()
            raise DataError(f, f"missing or different from the pinned release {pins.key}: removed; no manifest "
                               "was written (run the same command again to fetch it anew)")


def download(bench: str, dest: str | Path | None = None, *, revision: str | None = None,
             from_dir: str | Path | None = None, probe_timeout: float = PROBE_TIMEOUT_S,
             log: Callable[[str], None] = lambda s: None, limits: ArchiveLimits = ArchiveLimits(),
             activity: Callable[[str], Any] | None = None) -> dict[str, Any]:
    """Fetch (or, with ``from_dir``, copy) benchmark ``bench`` into ``dest`` (default: its data
    home folder), verify its file counts and write the manifest; returns the manifest.

    ``limits``: expansion bounds of archives (a zip bomb is refused). ``activity``: ``label -> display`` of each
    GitHub download's bytes (:class:`lensbench.runtime.progress.Activity`; the hub shows its own bars).

    Raises KeyError (unknown benchmark), SourceUnreachable (offline: one line naming the source
    and ``--from DIR``), FetchError (HTTP / hub error, a short or HTML body, a full disk),
    MissingExtraError (``data`` extra for the hub), DataError (a file differing from its pinned
    sha256, a damaged archive, a zip bomb, a symlink member, ``--from`` folder without the data,
    counts that do not match: nothing is marked complete; run again after fixing, completed files
    are kept).
    """
    layout = get_layout(bench)
    dest = Path(dest) if dest else default_data_dir(bench)
    created = not dest.exists()
    dest.mkdir(parents=True, exist_ok=True)
    try:
        if from_dir is not None:
            origin = _from_local(layout, Path(from_dir), dest, revision)
        else:
            (dest / MANIFEST_NAME).unlink(missing_ok=True)  # the folder changes: complete again only when verified
            origin = _from_source(layout, revision, dest, probe_timeout, log, limits, activity)
    except BaseException:
        # a folder this call created and left empty (offline, refused) would later read as a data folder
        # without data: remove it, so 'lensbench run' gives the download hint again. Partial files are kept.
        if created and dest.is_dir() and not any(p.is_file() for p in dest.rglob("*")):
            shutil.rmtree(dest, ignore_errors=True)
        raise
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
