"""``lensbench gobench generate | rate | summary`` (typer)."""

from __future__ import annotations

import typer

__all__ = ["gobench_app"]

gobench_app = typer.Typer(help="GOBench generation side: generate images, rate them, summarise ratings.",
                          no_args_is_help=True)
