"""``lensbench train``: the papers' training methods as train -> evaluate -> table loops, one subgroup
per recipe (each lives with its benchmark under ``lensbench/tools/<name>/``), built lazily (:mod:`.lazy`),
plus tiny random models and demo data to try them offline."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Annotated

import typer

from lensbench.cli.lazy import lazy_group, tool_group_loader
from lensbench.cli.tools import TRAIN_RECIPES
from lensbench.core.console import fail

__all__ = ["train_app"]

train_app = typer.Typer(
    help="The papers' training methods as train -> evaluate -> table loops, one subcommand per recipe (each ending in "
         "its paper's table); tiny / demo-data to try them offline. Needs the train extra "
         "(pip install 'lensbench\\[train]').",
    no_args_is_help=True, cls=lazy_group({name: tool_group_loader(app) for name, app, _demo in TRAIN_RECIPES}))

TINY = ("qwen2.5-vl", "qwen3-vl", "llava-onevision", "qwen-image-edit")
DEMOS = tuple(name for name, _app, _demo in TRAIN_RECIPES)


@train_app.command("tiny")
def tiny_cmd(kind: Annotated[str, typer.Argument(help=" | ".join(TINY))],
             out: Annotated[Path, typer.Argument(help="folder to write the model into")],
             seed: Annotated[int, typer.Option("--seed")] = 0) -> None:
    """Write a tiny random model (built from a config, no download) for trying the recipes."""
    from lensbench.core.errors import LensbenchError

    try:
        if kind == "qwen-image-edit":
            from lensbench.tools.training.tiny_editor import save_tiny_editor

            save_tiny_editor(out, seed)
        elif kind in TINY:
            from lensbench.tools.training.tiny_vlm import save_tiny_vlm

            save_tiny_vlm(kind, out, seed=seed)
        else:
            fail(f"unknown kind {kind!r}; known: {', '.join(TINY)}")
    except LensbenchError as exc:
        fail(str(exc))
    typer.echo(f"wrote a tiny {kind} to {out}")


@train_app.command("demo-data")
def demo_cmd(recipe: Annotated[str, typer.Argument(help=" | ".join(DEMOS))],
             out: Annotated[Path, typer.Argument(help="folder to write the demo data into")]) -> None:
    """Write small synthetic inputs of a recipe in their real formats (the recipe's train_demo module)."""
    makers = {name: demo for name, _app, demo in TRAIN_RECIPES}
    if recipe not in makers:
        fail(f"unknown recipe {recipe!r}; known: {', '.join(DEMOS)}")
    mod, _, attr = makers[recipe].partition(":")
    for k, p in getattr(importlib.import_module(mod), attr)(out).items():
        typer.echo(f"{k}: {p}")
