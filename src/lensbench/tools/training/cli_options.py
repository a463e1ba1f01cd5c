"""Command-line pieces the recipes share: the repeated ``--set KEY=VALUE`` option and the ``train``
command of an image-text SFT recipe (one SFT example file -> one checkpoint)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from lensbench.core.console import fail
from lensbench.core.flags import old_option, renamed
from lensbench.core.errors import LensbenchError

__all__ = ["set_option", "vlm_train_command", "eval_callback_from_cli"]


def set_option(keys: str) -> Any:
    """The ``--set KEY=VALUE`` option type (repeatable); ``keys`` lists some keys for the help."""
    return Annotated[list[str], typer.Option("--set", help=f"training setting KEY=VALUE (repeat): {keys}, ...")]


VLM_KEYS = "epochs, batch_size, learning_rate, lora, lora_r, max_steps, seed, save_steps, device"
SetOpt = set_option(VLM_KEYS)


EvalBenchOpt = Annotated[list[str], typer.Option(
    "--eval-bench", help="evaluate the model in memory during training on BENCH=DATA_DIR (repeat); runs in "
                         "OUT/evals/step-<N>/<bench>, curve in OUT/evals/curve.csv")]
EvalEveryOpt = Annotated[Optional[int], typer.Option(
    "--eval-every", help="evaluate every N steps (default: at each epoch end)")]
EvalLimitOpt = Annotated[Optional[int], typer.Option("--eval-limit", help="evaluate the first K samples of each")]
EvalTokensOpt = Annotated[Optional[int], typer.Option("--eval-max-tokens", help="max new tokens per evaluation "
                                                     "reply (default: the protocol's)")]


def eval_callback_from_cli(benches: list[str], every: int | None, limit: int | None, max_tokens: int | None, out: Path,
                           seed: int):
    """The :class:`~lensbench.tools.training.eval_callback.LensbenchEvalCallback` of ``--eval-bench`` /
    ``--eval-every`` / ``--eval-limit`` / ``--eval-max-tokens`` (None without ``--eval-bench``), its runs
    under ``out/evals``. Raises ConfigError for a bad item or number, or ``--eval-every`` / ``--eval-limit``
    without ``--eval-bench``."""
    from lensbench.core.errors import ConfigError

    if not benches:
        if every is not None or limit is not None:
            raise ConfigError("--eval-every / --eval-limit: give the benchmarks with --eval-bench BENCH=DATA_DIR")
        return None
    if limit is not None and limit < 1:
        raise ConfigError(f"--eval-limit {limit}: must be a positive number of samples")
    from lensbench.tools.training.eval_callback import LensbenchEvalCallback, parse_eval_benches

    return LensbenchEvalCallback(parse_eval_benches(benches), out / "evals", limit=limit, every_n_steps=every,
                                 on_epoch_end=every is None, seed=seed,
                                 run_settings={"max_tokens": max_tokens} if max_tokens else None)


def vlm_train_command(epochs: float, doc: str) -> Callable[..., None]:
    """A typer command ``--examples FILE --model BASE --out DIR [--set ...] [--eval-bench BENCH=DIR --eval-every N
    --eval-limit K]`` that trains with :func:`~lensbench.tools.training.vlm_sft.train_vlm` (``epochs`` = the
    recipe's default), evaluating in memory during training when ``--eval-bench`` is given
    (:func:`eval_callback_from_cli`), and prints the summary's main fields as JSON; ``doc`` is its help. The old
    name ``--data`` of ``--examples`` still works (hidden, :mod:`lensbench.core.flags`)."""

    def train_cmd(model: Annotated[str, typer.Option("--model", help="base model folder or Hub id")],
                  out: Annotated[Path, typer.Option("--out", help="training folder (OUT/model for hf:)")],
                  examples: Annotated[Optional[Path], typer.Option("--examples", help="SFT examples (JSONL)")] = None,
                  sets: SetOpt = [],  # noqa: B006
                  eval_bench: EvalBenchOpt = [],  # noqa: B006
                  eval_every: EvalEveryOpt = None, eval_limit: EvalLimitOpt = None,
                  eval_max_tokens: EvalTokensOpt = None,
                  data_old: Annotated[Optional[Path], old_option("--data", "--examples")] = None) -> None:
        from lensbench.tools.training.settings import VLMTrainSettings, settings_from_cli
        from lensbench.tools.training.vlm_sft import train_vlm

        data = renamed(examples, data_old, "--data", "--examples", required=True)
        try:
            settings = settings_from_cli(VLMTrainSettings, sets, model=model, out=out, epochs=epochs)
            cb = eval_callback_from_cli(eval_bench, eval_every, eval_limit, eval_max_tokens, out, settings.seed)
            s = train_vlm(data, settings, eval_callback=cb)
        except LensbenchError as exc:
            fail(str(exc))
        typer.echo(json.dumps({k: s.get(k) for k in ("model_dir", "steps", "losses", "samples_per_s", "skipped",
                                                        "resumed_from", "evaluations")}))

    train_cmd.__doc__ = doc
    return train_cmd
