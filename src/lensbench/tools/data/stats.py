"""``lensbench data stats``: ask the named benchmark for its dataset statistics (each benchmark
computes its own, :meth:`lensbench.benchmarks.base.Benchmark.dataset_stats`)."""

from __future__ import annotations

from pathlib import Path

from lensbench.benchmarks.registry import get_benchmark
from lensbench.core.errors import ConfigError, DataError
from lensbench.report.datastats import DatasetStats

__all__ = ["benchmark_stats", "check_plots_dir"]


def benchmark_stats(bench: str, data_dir: str | Path) -> DatasetStats:
    """The statistics of benchmark ``bench`` (CLI name) on ``data_dir``.

    Raises ConfigError for an unknown benchmark or one without statistics, DataError for a
    missing folder or unreadable data.
    """
    try:
        cls = get_benchmark(bench)
    except KeyError as exc:
        raise ConfigError(str(exc.args[0])) from None
    if not Path(data_dir).exists():
        raise DataError(data_dir, f"no such data folder for {bench} (give DIR, or 'lensbench data download {bench}')")
    return cls().dataset_stats(Path(data_dir))


def check_plots_dir(plots: str | Path | None) -> None:
    """Refuse a ``--plots`` folder that is an existing file (before anything is computed); None passes.
    Raises ConfigError naming the path."""
    if plots is not None and Path(plots).exists() and not Path(plots).is_dir():
        raise ConfigError(f"--plots {plots} is a file; give a folder for the PNG plots")
