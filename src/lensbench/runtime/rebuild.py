"""Rebuild a run folder's ``result.json`` and ``samples.jsonl`` from its store, sending nothing.

Used by ``lensbench report`` when ``result.json`` is missing (deleted, or the run was killed
before writing it): the manifest names the benchmark, its options and the run settings, the
store holds the replies; the benchmark re-scores them offline. Replies missing from the store
are ``error`` records (the report says the run is incomplete).
"""

from __future__ import annotations

from pathlib import Path

from lensbench.backends.base import Backend
from lensbench.benchmarks.registry import get_benchmark
from lensbench.core.errors import ConfigError, TransportError
from lensbench.core.results import RunResult
from lensbench.core.types import Completion, Request
from lensbench.runtime.checks import recover_manifest
from lensbench.runtime.folder import RESULT, load_result
from lensbench.runtime.settings import RunSettings
from lensbench.runtime.store import RunStore

__all__ = ["RecordedBackend", "rebuild_result", "load_or_rebuild"]


class RecordedBackend(Backend):
    """A backend known only by its recorded fingerprint: never sends (offline rebuilds)."""

    def __init__(self, fingerprint: str, display_name: str = ""):
        self.fingerprint = fingerprint
        self.display_name = display_name

    async def generate(self, request: Request) -> Completion:
        """Always fails: an offline rebuild sends nothing."""
        raise TransportError("offline rebuild: no stored reply", retryable=False)


def rebuild_result(run_dir: str | Path, console=None) -> RunResult:
    """Re-score ``run_dir`` from its store and rewrite ``result.json``/``samples.jsonl``; returns the result.

    Raises ConfigError when the folder has no manifest or no store.
    """
    from lensbench.runtime.runner import run_benchmark  # runner imports this module's siblings only

    run_dir = Path(run_dir)
    manifest = recover_manifest(run_dir, console)
    if manifest is None or not (run_dir / RunStore.FILENAME).is_file():
        raise ConfigError(f"{run_dir}: no {RESULT}, and no manifest + store to rebuild it from")
    if "settings" not in manifest:
        raise ConfigError(f"{run_dir}: no {RESULT}, and the manifest predates rebuilds (no 'settings'): "
                          "run the same 'lensbench run' command again to rebuild it")
    bench = get_benchmark(manifest["benchmark"])
    bench = bench(bench.Options(**manifest.get("options", {})))
    settings = RunSettings(**{**manifest["settings"], "out": run_dir, "progress": False})
    recorded = {"model": RecordedBackend(manifest["model_fingerprint"], manifest.get("model_name") or "")}
    if manifest.get("judge_fingerprint"):
        recorded["judge"] = RecordedBackend(manifest["judge_fingerprint"])
    return run_benchmark(bench, settings, console=console, offline=True, backends=recorded)


def load_or_rebuild(run_dir: str | Path, console=None) -> RunResult:
    """``result.json`` of ``run_dir``, rebuilt from the store first when it is missing."""
    run_dir = Path(run_dir)
    if not (run_dir / RESULT).is_file() and (run_dir / RunStore.FILENAME).is_file():
        if console is not None:
            console.print(f"{run_dir}: no {RESULT}; rebuilding it from the store (nothing is sent)", highlight=False)
        return rebuild_result(run_dir, console)
    return load_result(run_dir)
