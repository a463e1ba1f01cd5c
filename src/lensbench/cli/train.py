"""``lensbench train``: the papers' training methods as train -> evaluate -> table loops, one subgroup
per recipe (each lives with its benchmark under ``lensbench/tools/<name>/``), built lazily (:mod:`.lazy`),
plus tiny random models and demo data to try them offline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lensbench.cli.lazy import lazy_group, tool_group_loader
from lensbench.core.console import fail

__all__ = ["train_app", "RECIPES"]

#: subcommand -> ``"module:typer_app"`` of the recipe.
RECIPES: dict[str, str] = {
    "groundingme": "lensbench.tools.groundingme.sft_cli:sft_app",
    "genvip": "lensbench.tools.genvip.editor_cli:editor_app",
    "ivbench": "lensbench.tools.ivbench.sft_cli:sft_app",
}

train_app = typer.Typer(
    help="The papers' training methods, each ending in its paper table: groundingme (GroundingME Sec. 5.3 "
         "data-mixture SFT -> Tab. 5, Tab. 7, Fig. 6), genvip (IF-Bench GenViP editor LoRA, App. C -> Tab. 5), "
         "ivbench (IV-Bench Tab. 3 SFT variants); tiny / demo-data to try them offline. Needs the train extra "
         "(pip install 'lensbench\\[train]').",
    no_args_is_help=True, cls=lazy_group({name: tool_group_loader(t) for name, t in RECIPES.items()}))

TINY = ("qwen2.5-vl", "qwen3-vl", "llava-onevision", "qwen-image-edit")
DEMOS = ("groundingme", "genvip", "ivbench")


@train_app.command("tiny")
def tiny_cmd(kind: Annotated[str, typer.Argument(help=" | ".join(TINY))],
             out: Annotated[Path, typer.Argument(help="folder to write the model into")],
             seed: Annotated[int, typer.Option("--seed")] = 0) -> None:
    """Write a tiny random model (built from a config, no download) for trying the recipes."""
    from lensbench.core.errors import LensbenchError

    try:
        if kind == "qwen-image-edit":
            from lensbench.testing.tiny_editor import save_tiny_editor

            save_tiny_editor(out, seed)
        elif kind in TINY:
            from lensbench.testing.tiny_vlm import save_tiny_vlm

            save_tiny_vlm(kind, out, seed=seed)
        else:
            fail(f"unknown kind {kind!r}; known: {', '.join(TINY)}")
    except LensbenchError as exc:
        fail(str(exc))
    typer.echo(f"wrote a tiny {kind} to {out}")


@train_app.command("demo-data")
def demo_cmd(recipe: Annotated[str, typer.Argument(help=" | ".join(DEMOS))],
             out: Annotated[Path, typer.Argument(help="folder to write the demo data into")]) -> None:
    """Write small synthetic inputs of a recipe in their real formats (lensbench/testing/train_demo.py)."""
    from lensbench.testing import train_demo

    makers = {"groundingme": train_demo.make_grounding_demo, "genvip": train_demo.make_genvip_demo,
              "ivbench": train_demo.make_ivbench_demo}
    if recipe not in makers:
        fail(f"unknown recipe {recipe!r}; known: {', '.join(DEMOS)}")
    for k, p in makers[recipe](out).items():
        typer.echo(f"{k}: {p}")
