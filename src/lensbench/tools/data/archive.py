"""Safe extraction of a release's zip archive into a data folder (``lensbench data download``).

An archive from the network is untrusted until checked, so before anything is written the
member list is checked: no symbolic links, no member under another member that is a file, no
path leaving the folder, and bounded expansion (a zip bomb: a member may expand at most
:data:`MAX_RATIO` times its compressed size once over :data:`SMALL`, the whole at most
:data:`MAX_RATIO` times the archive's size and :data:`MAX_TOTAL` bytes), and the free disk space
must hold what is written. Each member is written to a ``.part`` name, hashed as it is written,
checked against its pinned sha256 (or, unpinned, its CRC-32) and only then renamed into place:
a file a later run finds is always complete and checked. A truncated or damaged archive, a full
disk or a name clash is one :class:`DataError` line naming the archive and the member.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from lensbench.core.errors import DataError
from lensbench.tools.data.fetch import is_html
from lensbench.tools.data.pins import Hasher, PinnedSource, verify_file

__all__ = ["MAX_RATIO", "MAX_TOTAL", "SMALL", "ArchiveLimits", "extract_zip"]

#: most a member (over SMALL bytes) or the whole archive may expand, as a multiple of its compressed size
MAX_RATIO = 100
#: members up to this size are not held to MAX_RATIO (tiny text files compress very well)
SMALL = 16 << 20
#: most bytes one archive may write (the largest release archive expands to a few GB)
MAX_TOTAL = 64 << 30
#: free space kept beyond what is written
_MARGIN = 64 << 20


@dataclass(frozen=True)
class ArchiveLimits:
    """Expansion bounds (see the module docstring); tests lower them."""

    max_ratio: float = MAX_RATIO
    small: int = SMALL
    max_total: int = MAX_TOTAL


def _damaged(archive: Path, exc: BaseException) -> DataError:
    try:
        with open(archive, "rb") as fh:
            head = fh.read(512)
    except OSError:
        head = b""
    what = ("an HTML page, not a zip archive (an error or login page served instead of the file)" if is_html(head)
            else f"truncated or damaged zip archive ({type(exc).__name__}: {str(exc)[:120]})")
    archive.unlink(missing_ok=True)
    return DataError(archive, f"{what}; it was removed: run the same command again to download it anew")


def _no_space(path: Path, need: int | None = None) -> DataError:
    free = shutil.disk_usage(path if path.is_dir() else path.parent).free
    more = f" (needs {need / 1e6:.0f} MB, {free / 1e6:.0f} MB free)" if need is not None else f" ({free / 1e6:.0f} MB free)"
    return DataError(path, f"no space left on the device{more}: free some space and run the same command again "
                           "(complete files are kept)")


def _members(zf: zipfile.ZipFile, archive: Path, prefix: str, limits: ArchiveLimits) -> list[zipfile.ZipInfo]:
    """The members under ``prefix`` to write, after the structural and expansion checks."""
    infos = [i for i in zf.infolist() if i.filename.startswith(prefix) and i.filename != prefix]
    files = {i.filename.rstrip("/") for i in infos if not i.is_dir()}
    total = 0
    for i in infos:
        if stat.S_ISLNK(i.external_attr >> 16):
            raise DataError(archive, f"member {i.filename!r} is a symbolic link: refused (a release holds plain files)")
        parts = i.filename.rstrip("/").split("/")
        for k in range(1, len(parts)):
            if "/".join(parts[:k]) in files:
                raise DataError(archive, f"member {i.filename!r} lies under {'/'.join(parts[:k])!r}, which the archive "
                                         "holds as a file: refused")
        if i.is_dir():
            continue
        if i.file_size > limits.small and i.file_size > limits.max_ratio * max(1, i.compress_size):
            raise DataError(archive, f"member {i.filename!r} expands {i.compress_size} -> {i.file_size} bytes "
                                     f"(over {limits.max_ratio:g}x): refused as a zip bomb")
        total += i.file_size
    size = archive.stat().st_size
    if total > limits.max_total or (total > limits.small and total > limits.max_ratio * size):
        raise DataError(archive, f"expands {size} -> {total} bytes (over {limits.max_ratio:g}x the archive or "
                                 f"{limits.max_total / 2**30:g} GiB): refused as a zip bomb")
    return [i for i in infos if not i.is_dir()]


def _target(root: Path, rel: str, archive: Path, member: str) -> Path:
    out = Path(os.path.normpath(root / rel))
    if not rel or os.path.isabs(rel) or root not in out.parents:
        raise DataError(archive, f"member {member!r} would be written outside the data folder: refused")
    return out


def _crc_ok(path: Path, crc: int) -> bool:
    c = 0
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            c = zlib.crc32(block, c)
    return c == crc


def _write_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, out: Path, pin: tuple[int, str] | None,
                  source: str) -> None:
    tmp = out.with_name(out.name + ".part")
    h = Hasher()
    try:
        with zf.open(info) as src, open(tmp, "wb") as dst:
            while block := src.read(1 << 20):
                h.update(block)
                if h.size > info.file_size:
                    raise DataError(out, f"member {info.filename!r} is longer than it declares: refused")
                dst.write(block)
        if pin is not None:
            h.check(out, pin, source)
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def extract_zip(archive: Path, prefix: str, target: Path, *, strip: str | None = None,
                pins: PinnedSource | None = None, limits: ArchiveLimits = ArchiveLimits()) -> int:
    """Extract the members of ``archive`` under ``prefix`` into ``target`` (``prefix`` removed).

    ``pins``: the pinned source; a member's repo path is its name with ``strip`` (the archive's
    top folder, e.g. ``"repo-<sha>/"``) removed. A pinned member must match its sha256; with
    ``pins.complete_under``, a member the table does not list is refused, and so is a pinned
    file the archive lacks. Files already in place that check out (pinned sha256, else size and
    CRC-32) are kept. Returns the number of files written.

    Raises DataError (one line, naming the archive or file): damaged / truncated archive or an
    HTML page (the archive is removed), a zip bomb, a symbolic link, a member under a file
    member, a path outside ``target``, a pinned mismatch, a full disk, a name clash on disk.
    """
    root = Path(os.path.normpath(target.absolute()))
    n = 0
    try:
        with zipfile.ZipFile(archive) as zf:
            infos = _members(zf, archive, prefix, limits)
            jobs = []
            seen: set[str] = set()
            for info in infos:
                rel = info.filename[len(prefix):]
                out = _target(root, rel, archive, info.filename)
                repo_path = info.filename[len(strip):] if strip and info.filename.startswith(strip) else info.filename
                pin = pins.expected(repo_path) if pins is not None else None
                if pins is not None and pin is None and pins.covers(repo_path):
                    raise DataError(archive, f"member {info.filename!r} is not a file of the pinned release "
                                             f"{pins.key}: refused")
                seen.add(repo_path)
                if pin is not None and verify_file(out, pin) or pin is None and out.is_file() and \
                        out.stat().st_size == info.file_size and _crc_ok(out, info.CRC):
                    continue
                jobs.append((info, out, pin))
            if pins is not None and pins.complete_under is not None:
                lacking = sorted(p for p in pins.files if p.startswith(pins.complete_under) and p not in seen)
                if lacking:
                    raise DataError(archive, f"lacks {len(lacking)} file(s) of the pinned release {pins.key} "
                                             f"(e.g. {lacking[0]!r}): refused")
            need = sum(i.file_size for i, _o, _p in jobs)
            root.mkdir(parents=True, exist_ok=True)
            if need + _MARGIN > shutil.disk_usage(root).free:
                raise _no_space(root, need)
            for info, out, pin in jobs:
                try:
                    out.parent.mkdir(parents=True, exist_ok=True)
                except (FileExistsError, NotADirectoryError):
                    raise DataError(out.parent, f"a file stands where member {info.filename!r} needs a folder: move "
                                                "it away and run the same command again") from None
                if out.is_dir():
                    raise DataError(out, f"a folder stands where member {info.filename!r} is a file: refused")
                _write_member(zf, info, out, pin, pins.key if pins is not None else "")
                n += 1
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise _damaged(archive, exc) from None
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise _no_space(root) from None
        raise DataError(archive, f"cannot extract: {exc}") from None
    return n
