"""lensbench: evaluate multimodal LLMs on IF-Bench, RGB-Th-Bench, IV-Bench, GOBench and GroundingME.

The Python API (same behaviour as the CLI): :func:`run` runs one benchmark on one model into a
run folder and returns its :class:`~lensbench.core.results.RunResult`; :func:`load_run` reads a
run folder (result, manifest, per-sample records). Both are imported on first use.
"""

from lensbench.core.version import __version__

__all__ = ["__version__", "run", "load_run"]


def __getattr__(name: str):
    if name in ("run", "load_run"):
        from lensbench import api

        return getattr(api, name)
    raise AttributeError(f"module 'lensbench' has no attribute {name!r}")
