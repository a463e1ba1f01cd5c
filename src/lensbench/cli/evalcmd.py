"""``lensbench eval CONFIG``: a models x benchmarks x settings matrix, then one combined leaderboard."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from lensbench.core.console import err_console, fail, guard

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add the ``eval`` command to ``app``."""

    @app.command("eval", short_help="Run a models x benchmarks x variants matrix from one config; end with a "
                                    "leaderboard.")
    @guard
    def eval_cmd(
        config: Annotated[Optional[Path], typer.Argument(help="TOML or YAML config (models, benchmarks, variants)",
                                                         metavar="CONFIG")] = None,
        format: Annotated[str, typer.Option("--format", metavar="FORMAT", help="leaderboard format: md or csv")] = "md",
        dry_run: Annotated[bool, typer.Option("--dry-run", help="list the cells and their folders; run nothing")] = False,
        keys: Annotated[bool, typer.Option("--keys", help="print every config key (type, default, what) and "
                                                          "exit")] = False,
        progress: Annotated[bool, typer.Option("--progress/--no-progress",
                                               help="show each running cell and the whole matrix (bars on a "
                                                    "terminal, a status block every 30 s otherwise)")] = True,
    ) -> None:
        """Run every (model, benchmark, variant) cell of CONFIG into one run root (resumable as a whole), each
        model's cells sharing its concurrency budget; ends with a leaderboard (one row per model).

        Every key is listed by 'lensbench eval --keys' (docs/eval-config.md). Exit code 3 when a cell failed or
        is incomplete (run the same command again to retry)."""
        if keys:
            from lensbench.runtime.matrix_keys import config_reference

            sys.stdout.write(config_reference() + "\n")
            return
        if config is None:
            fail("give a CONFIG file (every key: 'lensbench eval --keys')")
        from lensbench.runtime.matrix import cell_name, expand_cells, load_config, run_matrix

        if format not in ("md", "csv"):
            fail(f"--format must be md or csv, got {format!r}")
        cfg = load_config(config)
        cells = expand_cells(cfg, config)
        if dry_run:
            for c in cells:
                sys.stdout.write(f"{c.model}\t{c.benchmark}\t{c.variant or '-'}\t{c.out}\n")
            return
        err_console.print(f"{len(cells)} cell(s) into {cfg.out}: " + ", ".join(cell_name(c) for c in cells))
        done = run_matrix(cfg, console=err_console, progress=progress)
        failed = [(c, r) for c, r in done if isinstance(r, str)]
        for c, msg in failed:
            err_console.print(f"{c.out}: failed: {msg}")
        from lensbench.cli.view import leaderboard_report

        sys.stdout.write(leaderboard_report([c.out for c, r in done if not isinstance(r, str)], format))
        incomplete = [c for c, r in done if not isinstance(r, str) and not r.complete]
        if failed or incomplete:
            err_console.print(f"{len(failed)} cell(s) failed, {len(incomplete)} incomplete: run the same "
                              f"'lensbench eval {config}' again to retry them")
            for c in incomplete:
                hint = c.settings.failed_hint("")
                if hint != " to retry them":
                    err_console.print(f"{c.out}: {hint}", highlight=False, markup=False)
            raise typer.Exit(3)
