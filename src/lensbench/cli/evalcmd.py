"""``lensbench eval CONFIG``: a models x benchmarks x settings matrix, then one combined leaderboard."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from lensbench.core.console import err_console, guard

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add the ``eval`` command to ``app``."""

    @app.command("eval")
    @guard
    def eval_cmd(
        config: Annotated[Path, typer.Argument(help="TOML or YAML config (models, benchmarks, variants)",
                                               metavar="CONFIG")],
        format: Annotated[str, typer.Option("--format", metavar="FORMAT", help="leaderboard format: md or csv")] = "md",
        dry_run: Annotated[bool, typer.Option("--dry-run", help="list the cells and their folders; run nothing")] = False,
    ) -> None:
        """Run every (model, benchmark, variant) cell of CONFIG into one run root (resumable as a whole),
        each model's cells sharing its concurrency budget; ends with a leaderboard (one row per model).

        Exit code 3 when a cell failed or is incomplete (run the same command again to retry)."""
        from lensbench.runtime.matrix import expand_cells, load_config, run_matrix

        if format not in ("md", "csv"):
            from lensbench.core.console import fail

            fail(f"--format must be md or csv, got {format!r}")
        cfg = load_config(config)
        cells = expand_cells(cfg, config)
        if dry_run:
            for c in cells:
                sys.stdout.write(f"{c.model}\t{c.benchmark}\t{c.variant or '-'}\t{c.out}\n")
            return
        err_console.print(f"{len(cells)} cell(s) into {cfg.out}", highlight=False)
        done = run_matrix(cfg, console=err_console)
        failed = [(c, r) for c, r in done if isinstance(r, str)]
        for c, msg in failed:
            err_console.print(f"{c.out}: failed: {msg}", highlight=False, markup=False)
        from lensbench.cli.view import leaderboard_report

        sys.stdout.write(leaderboard_report([c.out for c, r in done if not isinstance(r, str)], format))
        incomplete = [c for c, r in done if not isinstance(r, str) and not r.complete]
        if failed or incomplete:
            err_console.print(f"{len(failed)} cell(s) failed, {len(incomplete)} incomplete: run the same "
                              f"'lensbench eval {config}' again to retry them", highlight=False, markup=False)
            raise typer.Exit(3)
