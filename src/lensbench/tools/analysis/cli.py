"""``lensbench analyze items | judge``: is the benchmark sound? Item analysis and judge noise from stored runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from lensbench.core.console import fail, guard
from lensbench.scoring.bootstrap import DEFAULT_RESAMPLES

__all__ = ["analyze_app"]

analyze_app = typer.Typer(help="Is the benchmark sound? Item analysis over many runs (difficulty, discrimination, "
                               "2PL, flags, a smaller subset) and judge noise (re-judge a run's stored replies).",
                          no_args_is_help=True)

_FORMATS = ("md", "csv", "json")


def _check_format(fmt: str) -> None:
    if fmt not in _FORMATS:
        fail(f"--format: {fmt!r} is not one of {', '.join(_FORMATS)}")


@analyze_app.command("items")
@guard
def items_cmd(
    run_dirs: Annotated[list[Path], typer.Argument(help="run folders of one benchmark (blind runs are recognised and "
                                                        "used only for 'answerable without the image')",
                                                   metavar="RUN_DIR")],
    format: Annotated[str, typer.Option("--format", metavar="FORMAT", help="md, csv (one row per item) or json")] = "md",
    out: Annotated[Optional[Path], typer.Option("--out", help="also write items.md, items.csv, items.json and the "
                                                              "suggested subset-<name>.json to this folder")] = None,
    resamples: Annotated[int, typer.Option("--resamples", min=1, help="bootstrap resamples of every CI")] = DEFAULT_RESAMPLES,
    seed: Annotated[int, typer.Option("--seed", help="seed of the bootstrap draw")] = 0,
    irt: Annotated[bool, typer.Option("--irt/--no-irt", help="fit the 2PL item response model")] = True,
) -> None:
    """Per item: difficulty, point-biserial discrimination, 2PL; flags; the headline and ranking without the
    flagged items (95% CIs over the benchmark's clusters); a smaller subset that ranks the runs alike."""
    from lensbench.analysis.items import analyze_items, to_csv, to_json, to_markdown, write_outputs

    _check_format(format)
    for d in run_dirs:
        if not d.is_dir():
            fail(f"{d}: not a folder (give lensbench run folders)")
    rep = analyze_items(run_dirs, n_resamples=resamples, seed=seed, irt=irt)
    if out is not None:
        for p in write_outputs(rep, out):
            typer.echo(f"wrote {p}", err=True)
    if format == "md":
        typer.echo(to_markdown(rep), nl=False)
    elif format == "csv":
        typer.echo(to_csv(rep), nl=False)
    else:
        typer.echo(json.dumps(to_json(rep), indent=1, ensure_ascii=False))


@analyze_app.command("judge")
@guard
def judge_cmd(
    run_dir: Annotated[Path, typer.Argument(help="a finished run whose benchmark has a judge round (IF-Bench answer "
                                                 "parser, GroundingME best-of-N)", metavar="RUN_DIR")],
    judge_model: Annotated[Optional[str], typer.Option("--judge-model", help="the second judge's backend spec "
                                                                         "(default: the run's own judge)")] = None,
    permute: Annotated[bool, typer.Option("--permute", help="show the judge its choices in another order where the "
                                                            "protocol allows (GroundingME best-of-N: each pair "
                                                            "swapped)")] = False,
    judge_base_url: Annotated[Optional[list[str]], typer.Option("--judge-base-url", help="its endpoint(s)")] = None,
    judge_api_key_env: Annotated[str, typer.Option("--judge-api-key-env", help="environment variable with its "
                                                                               "API key")] = "OPENAI_API_KEY",
    judge_model_arg: Annotated[Optional[list[str]], typer.Option("--judge-model-arg", help="judge backend argument "
                                                                                           "KEY=VALUE")] = None,
    name: Annotated[Optional[str], typer.Option("--name", help="folder name under RUN/analysis/ (default: "
                                                               "judge-<spec>)")] = None,
    data_dir: Annotated[Optional[Path], typer.Option("--data-dir", help="the benchmark's data folder, when the "
                                                                        "run's has moved")] = None,
    format: Annotated[str, typer.Option("--format", metavar="FORMAT", help="md or json")] = "md",
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="judge requests in flight")] = 8,
    resamples: Annotated[int, typer.Option("--resamples", min=1, help="bootstrap resamples of every CI")] = DEFAULT_RESAMPLES,
    seed: Annotated[int, typer.Option("--seed", help="seed of the bootstrap draw")] = 0,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="show the judge round's progress")] = True,
) -> None:
    """Re-judge RUN's stored replies with a second judge (only the judge is called; its calls are stored in
    RUN/analysis/judge-NAME/run and resumed), then: Cohen's kappa with a 95% CI over the benchmark's clusters,
    the replies the judges decide differently, and the headline's paired change."""
    from lensbench.tools.analysis.judge import judge_noise, rejudge, to_markdown

    if format not in ("md", "json"):
        fail(f"--format: {format!r} is not one of md, json")
    if not run_dir.is_dir():
        fail(f"{run_dir}: not a folder (give a lensbench run folder)")
    second = rejudge(run_dir, judge_model, permute=permute, name=name, judge_base_url=judge_base_url,
                     judge_api_key_env=judge_api_key_env, judge_model_arg=judge_model_arg, data_dir=data_dir,
                     concurrency=concurrency, progress=progress)
    noise = judge_noise(run_dir, second, n_resamples=resamples, seed=seed)
    (second.parent / "judge-noise.json").write_text(json.dumps(noise.to_json(), indent=1) + "\n", encoding="utf-8")
    (second.parent / "judge-noise.md").write_text(to_markdown(noise), encoding="utf-8")
    if format == "md":
        typer.echo(to_markdown(noise), nl=False)
    else:
        typer.echo(json.dumps(noise.to_json(), indent=1))
