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
from lensbench.report.runs import RESULT, load_result
from lensbench.runtime.lock import RunLock
from lensbench.runtime.repair import store_problem
from lensbench.runtime.settings import RunSettings
from lensbench.runtime.store import RunStore

__all__ = ["RecordedBackend", "rebuild_result", "load_or_rebuild", "load_for_report"]


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
    """``result.json`` of ``run_dir``, rebuilt from the store first when it is missing. Reading takes the
    run lock shared (other readers may read along; a folder being written is refused, naming its PID);
    a rebuild takes it exclusively. Raises ConfigError."""
    return load_for_report(run_dir, console)[0]


def load_for_report(run_dir: str | Path, console=None) -> tuple[RunResult, str | None]:
    """``(result, problem)``: the result as :func:`load_or_rebuild` gives it, and what is wrong with the
    store behind an existing ``result.json`` (missing or damaged; None when it is whole). A report must
    say so: the numbers are then the result as last written, not what the store holds."""
    run_dir = Path(run_dir)
    store = run_dir / RunStore.FILENAME
    if not (run_dir / RESULT).is_file() and store.is_file():
        if console is not None:
            console.print(f"{run_dir}: no {RESULT}; rebuilding it from the store (nothing is sent)", highlight=False)
        return rebuild_result(run_dir, console), None
    if not run_dir.is_dir():
        raise ConfigError(f"{run_dir}: no such run folder")
    with RunLock(run_dir, shared=True):
        result = load_result(run_dir)
        if not store.is_file():
            kept = sorted(p.name for p in run_dir.glob(RunStore.FILENAME + ".damaged-*") if "-wal" not in p.name
                          and "-shm" not in p.name)
            return result, (f"its store {RunStore.FILENAME} is missing: these numbers are {RESULT} as last written "
                            "and the replies behind them are gone"
                            + (f" (a damaged copy is kept: {kept[-1]}; 'lensbench repair' salvaged it before)"
                               if kept else "; restore the store, or re-run with --yes to send every request again"))
        problem = store_problem(store)
    if problem is not None:
        return result, (f"its store {RunStore.FILENAME} is damaged ({problem}): these numbers are {RESULT} as last "
                        f"written; run 'lensbench repair {run_dir}' to salvage the replies, then report again")
    return result, None
