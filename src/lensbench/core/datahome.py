"""The data home: where ``lensbench data download BENCH`` puts a benchmark, and where a run looks
when ``--data-dir`` is not given. Pure path logic (no downloads, no I/O beyond ``exists``).

``$LENSBENCH_DATA/<bench>`` when the environment variable is set, else
``~/.cache/lensbench/data/<bench>``. ``<bench>`` is the CLI name (``rgb-th-bench``, ``if-bench``,
``iv-bench``, ``gobench``, ``groundingme``); the folder is laid out as that benchmark's loader
reads it, so it can be passed to ``--data-dir`` as is.
"""

from __future__ import annotations

import os
from pathlib import Path

from lensbench.core.errors import ConfigError

__all__ = ["ENV_VAR", "MANIFEST_NAME", "DEMO_MARKER", "data_home", "default_data_dir", "resolve_data_dir",
           "data_status", "is_demo"]

#: environment variable that moves the data home
ENV_VAR = "LENSBENCH_DATA"
#: written last by ``lensbench data download`` into the benchmark folder (its presence = complete)
MANIFEST_NAME = "lensbench-data.json"
#: written by ``lensbench data demo`` into a generated folder: runs on it are labelled as not the benchmark
DEMO_MARKER = "DEMO-DATA-NOT-THE-BENCHMARK.txt"


def data_home() -> Path:
    """``$LENSBENCH_DATA`` (``~`` expanded) if set and non-empty, else ``~/.cache/lensbench/data``."""
    env = os.environ.get(ENV_VAR, "").strip()
    return Path(env).expanduser() if env else Path.home() / ".cache" / "lensbench" / "data"


def default_data_dir(bench: str) -> Path:
    """The default data folder of benchmark ``bench`` (CLI name): ``data_home() / bench``.

    The folder may not exist; see :func:`resolve_data_dir` for the checked form.
    """
    return data_home() / bench


def resolve_data_dir(bench: str, data_dir: str | Path | None) -> Path:
    """``data_dir`` when given, else the default data folder of ``bench`` if it exists.

    Raises ConfigError (one line, naming the folder and the command that fills it) when no
    ``data_dir`` is given and the default folder does not exist.
    """
    if data_dir is not None and str(data_dir) != "":
        return Path(data_dir)
    d = default_data_dir(bench)
    hint = f"run 'lensbench data download {bench}' (or set {ENV_VAR}, or pass --data-dir)"
    if not d.is_dir():
        raise ConfigError(f"no --data-dir given and the default data folder {d} does not exist: {hint}")
    if not any(d.iterdir()):  # e.g. left by a download that failed before the first file
        raise ConfigError(f"no --data-dir given and the default data folder {d} is empty: {hint}")
    return d


def is_demo(data_dir: str | Path) -> bool:
    """True when ``data_dir`` was written by ``lensbench data demo`` (it holds :data:`DEMO_MARKER`)."""
    p = Path(data_dir)
    return (p if p.is_dir() else p.parent).joinpath(DEMO_MARKER).is_file()


def data_status(bench: str) -> str:
    """The default data folder of ``bench`` in one word: ``downloaded`` (a complete ``lensbench data
    download``: its manifest is there), ``demo`` (``lensbench data demo``), ``present`` (files, no
    manifest), ``empty`` or ``missing``."""
    d = default_data_dir(bench)
    if not d.is_dir():
        return "missing"
    if (d / MANIFEST_NAME).is_file():
        return "downloaded"
    if (d / DEMO_MARKER).is_file():
        return "demo"
    return "present" if any(d.iterdir()) else "empty"
