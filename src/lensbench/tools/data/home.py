"""The default data folder per benchmark (re-exported from :mod:`lensbench.core.datahome`, which
run/ and the CLI use too: run/ may not import tools/)."""

from __future__ import annotations

from lensbench.core.datahome import ENV_VAR, MANIFEST_NAME, data_home, default_data_dir, resolve_data_dir

__all__ = ["ENV_VAR", "MANIFEST_NAME", "data_home", "default_data_dir", "resolve_data_dir"]
