"""Network fetches for ``lensbench data download``: a fast reachability probe, resumable HTTP
downloads (GitHub archives and single files, over urllib), and Hugging Face snapshots
(``huggingface_hub``, the ``data`` extra).

Base URLs can be moved (mirrors, tests): ``HF_ENDPOINT`` (huggingface_hub's own variable),
``LENSBENCH_GITHUB_URL`` (default ``https://github.com``, archives at
``<base>/<repo>/archive/<rev>.zip``) and ``LENSBENCH_GITHUB_RAW_URL`` (default
``https://raw.githubusercontent.com``, files at ``<base>/<repo>/<commit>/<path>``).
"""

from __future__ import annotations

import errno
import http.client
import os
import socket
import threading
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

from lensbench.core.errors import LensbenchError
from lensbench.core.extras import require
from lensbench.tools.data.pins import file_pin, mismatch

__all__ = ["SourceUnreachable", "FetchError", "github_base", "github_raw_base", "hf_endpoint", "probe",
           "is_html", "http_download", "hf_snapshot"]

#: seconds for the reachability probe (the whole offline failure stays well under 10 s)
PROBE_TIMEOUT_S = 5.0


class SourceUnreachable(LensbenchError):
    """The source's host cannot be reached (offline, DNS, firewall). One line, names the host."""


class FetchError(LensbenchError):
    """A download failed after the host was reached (HTTP error, broken transfer). Names the URL."""


def github_base() -> str:
    """Base URL of GitHub archives (``LENSBENCH_GITHUB_URL`` or ``https://github.com``)."""
    return os.environ.get("LENSBENCH_GITHUB_URL", "").rstrip("/") or "https://github.com"


def github_raw_base() -> str:
    """Base URL of raw GitHub files (``LENSBENCH_GITHUB_RAW_URL`` or ``https://raw.githubusercontent.com``)."""
    return os.environ.get("LENSBENCH_GITHUB_RAW_URL", "").rstrip("/") or "https://raw.githubusercontent.com"


def hf_endpoint() -> str:
    """The Hugging Face endpoint (``HF_ENDPOINT`` or ``https://huggingface.co``)."""
    return os.environ.get("HF_ENDPOINT", "").rstrip("/") or "https://huggingface.co"


def probe(url: str, timeout: float = PROBE_TIMEOUT_S) -> str | None:
    """None when a TCP connection to ``url``'s host and port opens within ``timeout`` seconds,
    else the reason (a short string). Name resolution is bounded by the same timeout (it runs in
    a thread), so an offline machine answers in at most ``timeout`` seconds."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    result: list[str | None] = []

    def attempt() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                result.append(None)
        except OSError as exc:
            result.append(f"{type(exc).__name__}: {exc}")

    t = threading.Thread(target=attempt, daemon=True)
    t.start()
    t.join(timeout)
    return result[0] if result else f"no answer within {timeout:g} s"


def is_html(head: bytes) -> bool:
    """True when ``head`` (a body's first bytes) starts an HTML page: an error, login or captive-portal
    page served instead of the file."""
    h = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return h.startswith((b"<!doctype html", b"<html", b"<head", b"<body"))


def http_download(url: str, dest: Path, *, timeout: float = 60.0, pin: tuple[int, str] | None = None,
                  source: str = "", progress=None) -> Path:
    """Download ``url`` to ``dest``, resuming a previous ``dest.part`` with an HTTP Range request
    (a server that ignores the range restarts it). The file appears under ``dest`` only when
    complete: every byte the ``Content-Length`` announced arrived, the body is not an HTML page,
    and, with ``pin`` = ``(size, sha256)`` (the pinned file of release ``source``), its content
    matches. Returns ``dest``. ``progress``: a display told the bytes expected (``set_total``) and each block
    received (``advance``), e.g. :class:`lensbench.runtime.progress.Activity` with ``unit="B"``.

    Raises FetchError naming the URL (HTTP error; a body shorter than announced or a broken
    transfer: the ``.part`` is kept, run again to resume; an HTML page: the ``.part`` is removed;
    a full disk), DataError when the content differs from ``pin`` (the ``.part`` is removed).
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    have = part.stat().st_size if part.exists() else 0
    if pin is not None and have > pin[0]:
        part.unlink()
        have = 0
    headers = {"User-Agent": "lensbench-data"}
    if have:
        headers["Range"] = f"bytes={have}-"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout) as r:
            resumed = bool(have) and r.status == 206
            got = have if resumed else 0
            length = r.headers.get("Content-Length")
            expected = got + int(length) if length and length.isdigit() else None
            if progress is not None:
                progress.set_total(expected)
                progress.advance(got)
            with open(part, "ab" if resumed else "wb") as fh:
                while block := r.read(1 << 20):
                    if got == 0 and is_html(block[:512]):
                        fh.close()
                        part.unlink(missing_ok=True)
                        raise FetchError(f"{url}: the server sent an HTML page, not the file (an error, login or "
                                         "captive-portal page?); nothing was kept")
                    fh.write(block)
                    got += len(block)
                    if progress is not None:
                        progress.advance(len(block))
        if expected is not None and got < expected:
            raise FetchError(f"{url}: the transfer ended after {got} of {expected} bytes (run the same command again "
                             "to resume)")
    except urllib.error.HTTPError as exc:
        if not (exc.code == 416 and have):  # 416 with a partial file: it may already be complete
            raise FetchError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except FetchError:
        raise
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise FetchError(f"{url}: no space left on the device writing {part} (free some space and run the same "
                             "command again to resume)") from None
        raise FetchError(f"{url}: {getattr(exc, 'reason', exc)} (run the same command again to resume)") from None
    except http.client.HTTPException as exc:
        raise FetchError(f"{url}: broken transfer ({type(exc).__name__}) (run the same command again to resume)") \
            from None
    if pin is not None and file_pin(part) != pin:
        got = file_pin(part)
        part.unlink()
        raise mismatch(dest, got, pin, source)
    os.replace(part, dest)
    return dest


def hf_snapshot(repo: str, revision: str, dest: Path, *, allow_patterns: tuple[str, ...] | None = None,
                timeout: float = 10.0) -> str:
    """Fetch the dataset ``repo`` at ``revision`` into ``dest`` with ``huggingface_hub``
    (resumable: complete files are skipped, partial ones continued); returns the resolved commit.

    Raises MissingExtraError without the ``data`` extra, FetchError for hub errors (unknown repo
    or revision, gated dataset, broken transfer).
    """
    hub = require("huggingface_hub", "data", "lensbench data download")
    try:
        sha = hub.HfApi(endpoint=hf_endpoint()).dataset_info(repo, revision=revision, timeout=timeout).sha
        hub.snapshot_download(repo_id=repo, repo_type="dataset", revision=sha or revision, local_dir=str(dest),
                              allow_patterns=list(allow_patterns) if allow_patterns else None,
                              etag_timeout=timeout, endpoint=hf_endpoint())
    except Exception as exc:  # noqa: BLE001 - hub errors come in many classes; one line names the dataset
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise FetchError(f"hf:{repo}@{revision}: {type(exc).__name__}: {msg} "
                         "(run the same command again to resume)") from None
    return sha or revision
