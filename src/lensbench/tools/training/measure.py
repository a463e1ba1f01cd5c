"""Throughput and peak memory of a training run (what ``benchmarks/train_throughput.py`` prints)."""

from __future__ import annotations

import resource
import sys
import time
from typing import Any

__all__ = ["Meter"]


class Meter:
    """Times a run and reads peak memory.

    ``start()`` resets the CUDA peak counter (when torch has CUDA); ``stop(samples)`` returns
    ``{"wall_s", "samples", "samples_per_s", "peak_rss_mb", "peak_gpu_mb"}``: wall time in
    seconds, samples seen, samples per second, the process's peak resident memory in MiB (over
    its whole life, ``getrusage``) and the CUDA peak allocated memory in MiB since ``start``
    (None without CUDA).
    """

    def __init__(self) -> None:
        self.t0 = 0.0

    def start(self) -> "Meter":
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()
        self.t0 = time.perf_counter()
        return self

    def stop(self, samples: int) -> dict[str, Any]:
        wall = time.perf_counter() - self.t0
        torch = sys.modules.get("torch")
        gpu = None
        if torch is not None and torch.cuda.is_available():
            gpu = round(torch.cuda.max_memory_allocated() / 2**20, 1)
        rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return {"wall_s": round(wall, 3), "samples": samples, "samples_per_s": round(samples / wall, 3) if wall else None,
                "peak_rss_mb": round(rss_kb / 1024, 1), "peak_gpu_mb": gpu}
