"""Crafted run folders for tests and benchmarks of the report side (viewer, leaderboard, statistics).

:func:`craft_run` writes ``run.json``, ``samples.jsonl`` and ``result.json`` for any benchmark with
crafted records (its :meth:`~lensbench.benchmarks.base.Benchmark.craft_records`: seeded random
outcomes, small generated images, in the benchmark's own record shape). Metrics in ``result.json``
are the values of the benchmark's unit tables for its headline metrics (so a leaderboard can attach
CIs to them).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from lensbench.core.jsonl import dumps_line
from lensbench.benchmarks.crafting import Crafter, make_image
from lensbench.core.records import SampleRecord

__all__ = ["craft_run", "write_run", "make_image"]


def write_run(run_dir: Path, benchmark: str, model: str, records: list[SampleRecord], metrics: dict[str, Any],
              complete: bool = True, write_result: bool = True, manifest: dict[str, Any] | None = None) -> Path:
    """Write a run folder from records (``result.json`` only when ``write_result``); ``manifest``:
    extra ``run.json`` fields (``n_samples``, ``options``, ``generation_overrides``, ...). The folder gets
    an empty run store, as a real run has one (a report of a folder whose store is gone warns and exits 3)."""
    from lensbench.runtime.store import RunStore

    run_dir.mkdir(parents=True, exist_ok=True)
    RunStore(run_dir).close()
    (run_dir / "run.json").write_text(json.dumps({"benchmark": benchmark, "model_name": model, "seed": 0,
                                                  "model_spec": f"crafted:{model}", **(manifest or {})}),
                                      encoding="utf-8")
    with (run_dir / "samples.jsonl").open("w", encoding="utf-8") as fh:
        for r in records:
            fh.write(dumps_line(r.line()) + "\n")
    if write_result:
        counts = {"n": sum(r.outcome != "error" for r in records),
                  "n_error": sum(r.outcome == "error" for r in records),
                  "n_unparseable": sum(r.outcome == "unparseable" for r in records)}
        doc = {"benchmark": benchmark, "model": model, "complete": complete and counts["n_error"] == 0,
               "metrics": metrics, "counts": counts, "options": {}, "extra": {}, "run_dir": str(run_dir)}
        (run_dir / "result.json").write_text(json.dumps(doc), encoding="utf-8")
    return run_dir


def craft_run(run_dir: str | Path, benchmark: str, model: str = "model-a", n: int = 48, seed: int = 0,
              accuracy: float = 0.6, p_error: float = 0.0, write_result: bool = True) -> Path:
    """Write a crafted run folder of about ``n`` records of ``benchmark``; returns its path.

    Outcomes are drawn with ``random.Random(seed)``: ``accuracy`` = P(correct | scored),
    ``p_error`` = P(transport error), ~3% unparseable. Images live under ``run_dir/media``.
    Raises KeyError for an unknown benchmark, ConfigError for one without crafted records.
    """
    from lensbench.benchmarks.registry import get_benchmark

    run_dir = Path(run_dir)
    cls = get_benchmark(benchmark)
    records = cls.craft_records(Crafter(benchmark, n, random.Random(seed), accuracy, p_error, run_dir / "media"))
    tables = cls.unit_tables(records)
    metrics: dict[str, Any] = {}
    for h in cls.headlines:
        t = tables.get(h.metric)
        if t is None:
            continue
        block = metrics.setdefault(h.metric, {})
        block[h.column] = t.value(h.category)
        for c in t.categories:
            block.setdefault(c, t.value(c))
    return write_run(run_dir, benchmark, model, records, metrics, complete=p_error == 0, write_result=write_result)
