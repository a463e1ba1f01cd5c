"""Run folders read for the cross-benchmark readers: :func:`read_run` is :func:`lensbench.report.runs.read_folder`
with the registry's lookup, so each :class:`~lensbench.report.runs.LoadedRun` knows its benchmark
(:attr:`~lensbench.report.runs.LoadedRun.facts`). The other names of :mod:`lensbench.report.runs` are handed on."""

from __future__ import annotations

from pathlib import Path

from lensbench.report.runs import (MANIFEST, RESULT, SAMPLES, LoadedRun, ensure_records, iter_samples, load_result,
                                   read_folder, read_manifest, run_intervals, run_table_settings, run_tables)
from lensbench.report.subset import ItemSubset
from lensbench.views.catalog import describe

__all__ = ["MANIFEST", "SAMPLES", "RESULT", "read_manifest", "load_result", "iter_samples", "LoadedRun", "read_run",
           "ensure_records", "run_tables", "run_intervals", "run_table_settings"]


def read_run(run_dir: str | Path, with_records: bool = True, subset: ItemSubset | None = None) -> LoadedRun:
    """Read ``run_dir`` leniently (never raises for a missing or broken file; see
    :class:`~lensbench.views.runs.LoadedRun`), its benchmark looked up in the registry.
    ``with_records=False``: ``samples.jsonl`` is read on first use (:func:`ensure_records`); ``subset``: the run
    restricted to those items (:func:`lensbench.report.subset.apply_subset`; raises ConfigError when it does not fit)."""
    return read_folder(run_dir, with_records, lookup=describe, subset=subset)
