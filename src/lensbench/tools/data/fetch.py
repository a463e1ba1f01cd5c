"""Network fetches for ``lensbench data download``: a fast reachability probe, resumable HTTP
downloads (GitHub archives and single files, over urllib), and Hugging Face snapshots
(``huggingface_hub``, the ``data`` extra).

Base URLs can be moved (mirrors, tests): ``HF_ENDPOINT`` (huggingface_hub's own variable),
``LENSBENCH_GITHUB_URL`` (default ``https://github.com``, archives at
``<base>/<repo>/archive/<rev>.zip``) and ``LENSBENCH_GITHUB_RAW_URL`` (default
``https://raw.githubusercontent.com``, files at ``<base>/<repo>/<commit>/<path>``).
"""

from __future__ import annotations

import os
import socket
import threading
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

from lensbench.core.errors import LensbenchError
from lensbench.core.extras import require

__all__ = ["SourceUnreachable", "FetchError", "github_base", "github_raw_base", "hf_endpoint", "probe",
           "http_download", "hf_snapshot"]

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


def http_download(url: str, dest: Path, *, timeout: float = 60.0) -> Path:
    """Download ``url`` to ``dest``, resuming a previous ``dest.part`` with an HTTP Range request
    (a server that ignores the range restarts it). The file appears under ``dest`` only when
    complete. Returns ``dest``. Raises FetchError naming the URL."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    have = part.stat().st_size if part.exists() else 0
    headers = {"User-Agent": "lensbench-data"}
    if have:
        headers["Range"] = f"bytes={have}-"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout) as r:
            mode = "ab" if have and r.status == 206 else "wb"
            with open(part, mode) as fh:
                while block := r.read(1 << 20):
                    fh.write(block)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and have:  # the partial file is already complete
            os.replace(part, dest)
            return dest
        raise FetchError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise FetchError(f"{url}: {getattr(exc, 'reason', exc)} (run the same command again to resume)") from None
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
