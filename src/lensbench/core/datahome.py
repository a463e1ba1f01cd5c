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

__all__ = ["ENV_VAR", "MANIFEST_NAME", "data_home", "default_data_dir", "resolve_data_dir"]

#: environment variable that moves the data home
ENV_VAR = "LENSBENCH_DATA"
#: written last by ``lensbench data download`` into the benchmark folder (its presence = complete)
MANIFEST_NAME = "lensbench-data.json"


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
    if not d.is_dir():
        raise ConfigError(f"no --data-dir given and the default data folder {d} does not exist: "
                          f"run 'lensbench data download {bench}' (or set {ENV_VAR}, or pass --data-dir)")
    return d
