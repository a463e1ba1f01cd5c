"""``--shard I/N``: a deterministic slice of a benchmark's samples, for SLURM arrays and the like.

Samples (not requests) are sliced, so every request of a sample — its judge and parser rounds
and its per-sample scoring — stays within one shard: shard ``I`` of ``N`` takes the samples at
positions ``I, I+N, I+2N, ...`` of the loaded list (after ``--limit``). Loaders return samples in
a fixed order, so the ``N`` shards cover every sample exactly once, on any machine.
``lensbench merge`` (:mod:`lensbench.runtime.merge`) joins the shard runs into one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from lensbench.core.errors import ConfigError

__all__ = ["parse_shard", "select_shard"]

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse_shard(text: str) -> tuple[int, int]:
    """``"I/N"`` -> ``(I, N)`` with ``0 <= I < N``.

    Raises:
        ConfigError: not of the form I/N, N < 1, or I >= N.
    """
    m = _SHARD.match(text or "")
    if not m:
        raise ConfigError(f"--shard {text!r}: expected I/N, e.g. 0/4 (shard I of N, counted from 0)")
    i, n = int(m.group(1)), int(m.group(2))
    if n < 1 or i >= n:
        raise ConfigError(f"--shard {text!r}: need 0 <= I < N (shards of {n} are numbered 0..{max(n - 1, 0)})")
    return i, n


def select_shard(samples: Sequence[Any], shard: str, fingerprint: Callable[[Sequence[Any]], str]
                 ) -> tuple[list[Any], dict[str, Any]]:
    """The shard's samples and what the manifest records about it: ``index``, ``count``,
    ``n_samples_unsharded`` and ``data_fingerprint_unsharded`` (``fingerprint`` of all samples,
    which every shard of one job shares; ``lensbench merge`` checks it). Raises ConfigError."""
    i, n = parse_shard(shard)
    return list(samples[i::n]), {"index": i, "count": n, "n_samples_unsharded": len(samples),
                                 "data_fingerprint_unsharded": fingerprint(samples)}
