"""``lensbench merge RUN_DIR... --out RUN``: join the shard folders of a ``--shard I/N`` job into one run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lensbench.core.console import err_console, guard

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add the ``merge`` command to ``app``."""

    @app.command("merge")
    @guard
    def merge_cmd(
        run_dirs: Annotated[list[Path], typer.Argument(help="the shard run folders (all N shards of one job)",
                                                       metavar="RUN_DIR...")],
        out: Annotated[Path, typer.Option("--out", metavar="DIR", help="new folder for the merged run")],
        allow_incomplete: Annotated[bool, typer.Option(
            "--allow-incomplete", help="also merge shards that did not finish or have failed requests (the merged "
                                       "result says which; their missing replies count as not sent)")] = False,
    ) -> None:
        """Merge the folders of 'lensbench run ... --shard I/N' (all N shards) into one run and score it offline.

        The same checks as one run (benchmark, model, options, data); replies deduplicated, conflicts refused."""
        from lensbench.runtime.merge import merge_runs

        result = merge_runs(run_dirs, out, err_console, allow_incomplete=allow_incomplete)
        n = result.counts.get("n_error", 0)
        err_console.print(f"merged {len(run_dirs)} shards into {out}" + (f" ({n} errors)" if n else "")
                          + f"; see 'lensbench report {out}'", highlight=False, markup=False)
        if result.extra.get("incomplete_shards"):
            err_console.print(f"incomplete: {result.extra['incomplete_shards']}", highlight=False, markup=False)
