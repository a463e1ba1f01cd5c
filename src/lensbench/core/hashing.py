"""Content hashes of many media files at once, in parallel threads.

A request's key hashes its images' bytes (:func:`lensbench.core.types.file_sha256`, cached per
path, size and mtime). Benchmarks name hundreds of images; hashing them one after another on the
main thread counted against the run's start-up (issue 11). ``hashlib`` and file reads release the
GIL, so :func:`prime_sha256` hashes the files not cached yet on a few threads; the per-file calls
that follow are cache hits.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from lensbench.core.types import file_sha256

__all__ = ["prime_sha256"]


def prime_sha256(paths: Iterable[str | Path], workers: int | None = None) -> dict[str, str]:
    """SHA-256 hex digests (64 chars) of ``paths`` (duplicates hashed once), computed on up to
    ``workers`` threads (default: CPU count, at most 8) and left in :func:`file_sha256`'s cache.

    Returns ``{str(path): digest}``. Raises FileNotFoundError naming the first missing file (in
    the order given).
    """
    uniq = list(dict.fromkeys(str(p) for p in paths))
    if len(uniq) <= 1:
        return {p: file_sha256(p) for p in uniq}
    n = min(len(uniq), workers or min(8, os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=n, thread_name_prefix="lensbench-hash") as pool:
        return dict(zip(uniq, pool.map(file_sha256, uniq)))
