"""Command-line pieces the recipes share: the repeated ``--set KEY=VALUE`` option and the ``train``
command of an image-text SFT recipe (one SFT example file -> one checkpoint)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from lensbench.core.console import fail
from lensbench.core.errors import LensbenchError

__all__ = ["set_option", "vlm_train_command"]


def set_option(keys: str) -> Any:
    """The ``--set KEY=VALUE`` option type (repeatable); ``keys`` lists some keys for the help."""
    return Annotated[list[str], typer.Option("--set", help=f"training setting KEY=VALUE (repeat): {keys}, ...")]


VLM_KEYS = "epochs, batch_size, learning_rate, lora, lora_r, max_steps, seed, save_steps, device"
SetOpt = set_option(VLM_KEYS)


def vlm_train_command(epochs: float, doc: str) -> Callable[..., None]:
    """A typer command ``--data FILE --model BASE --out DIR [--set ...]`` that trains with
    :func:`~lensbench.tools.training.vlm_sft.train_vlm` (``epochs`` = the recipe's default) and
    prints the summary's main fields as JSON; ``doc`` is its help."""

    def train_cmd(data: Annotated[Path, typer.Option("--data", help="SFT examples (JSONL)")],
                  model: Annotated[str, typer.Option("--model", help="base model folder or Hub id")],
                  out: Annotated[Path, typer.Option("--out", help="training folder (OUT/model for hf:)")],
                  sets: SetOpt = []) -> None:  # noqa: B006
        from lensbench.tools.training.settings import VLMTrainSettings, settings_from_cli
        from lensbench.tools.training.vlm_sft import train_vlm

        try:
            s = train_vlm(data, settings_from_cli(VLMTrainSettings, sets, model=model, out=out, epochs=epochs))
        except LensbenchError as exc:
            fail(str(exc))
        typer.echo(json.dumps({k: s.get(k) for k in ("model_dir", "steps", "losses", "samples_per_s", "skipped",
                                                        "resumed_from")}))

    train_cmd.__doc__ = doc
    return train_cmd
