"""``lensbench ifbench build | review | finalize``: build your own IF-Bench (paper Sec. 3.2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from lensbench.core.console import fail
from lensbench.core.errors import LensbenchError
from lensbench.core.flags import old_option, renamed

__all__ = ["ifbench_app"]

ifbench_app = typer.Typer(help="IF-Bench construction (Sec. 3.2): generate four-option questions for your infrared "
                               "images (Fig. 14 prompt, any model), calibrate them on a review page, write the release.",
                          no_args_is_help=True)
_console = Console(stderr=True)


def _stages(groups: list[str] | None):
    from lensbench.tools.review import merged_answers

    out = []
    for g in groups or []:
        files = [Path(p) for p in g.split(",") if p.strip()]
        try:
            out.append(merged_answers(files))
        except (FileNotFoundError, ValueError) as exc:
            fail(str(exc))
    return out


@ifbench_app.command("build")
def build_cmd(
    images: Annotated[Path, typer.Option("--images", help="folder of infrared images: <source data set>/<files>")],
    model: Annotated[str, typer.Option("--model", help="generator backend spec, e.g. openai:Qwen/Qwen2.5-VL-72B-Instruct")],
    out: Annotated[Path, typer.Option("--out", help="output folder: if_bench.json, infrared_imgs/, build.json")],
    base_url: Annotated[Optional[list[str]], typer.Option("--base-url", help="endpoint(s) of --model")] = None,
    api_key_env: Annotated[str, typer.Option("--api-key-env", help="environment variable with the API key")] = "OPENAI_API_KEY",
    annotations: Annotated[Optional[Path], typer.Option("--annotations", help="JSON/JSONL targets for precise "
                                                        "localization: {image, targets: [{description, box}]}")] = None,
    min_side: Annotated[int, typer.Option("--min-side", help="drop images whose width or height is below this (px)")] = 200,
    per_dataset: Annotated[Optional[int], typer.Option("--per-dataset", help="sample N images per source data set "
                                                       "(paper: 100)")] = None,
    seed: Annotated[int, typer.Option("--seed", help="seed of the samplings and the letter balancing")] = 0,
    limit: Annotated[Optional[int], typer.Option("--limit", help="only the first N kept images")] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", help="requests in flight")] = 8,
    temperature: Annotated[float, typer.Option("--temperature", help="generation temperature")] = 0.0,
    max_tokens: Annotated[Optional[int], typer.Option("--max-tokens", help="longest reply (tokens)")] = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="show the progress display")] = True,
) -> None:
    """Filter the images (short side >= 200 px), generate and check questions, balance letters, write the release."""
    from lensbench.runtime.session import EndpointSettings
    from lensbench.tools.ifbench.build import BuildSettings, build

    try:
        rep = build(BuildSettings(images=images, out=out, annotations=annotations, min_side=min_side,
                                  per_dataset=per_dataset, seed=seed, limit=limit, concurrency=concurrency,
                                  temperature=temperature, max_tokens=max_tokens, progress=progress,
                                  endpoint=EndpointSettings(spec=model, base_urls=base_url or [],
                                                            api_key_env=api_key_env)))
    except LensbenchError as exc:
        fail(str(exc))
    i = rep.images
    typer.echo(f"images: {i['found']} found, {i['sampled']} sampled, {i['unreadable']} unreadable, "
               f"{i['too_small']} below {min_side} px, {i['kept']} kept, {i['asked']} asked")
    typer.echo(f"requests: {rep.requests} ({rep.cached} stored before, {rep.sent} sent)")
    typer.echo(f"questions: {rep.questions} written to {out / 'if_bench.json'}; rejected: "
               + (", ".join(f"{k} {v}" for k, v in rep.rejected.items()) or "none"))
    typer.echo("right letters: " + " ".join(f"{k} {v}" for k, v in rep.letters.items()))
    if rep.transport_errors:
        typer.echo(f"{len(rep.transport_errors)} image(s) got no reply (transport errors, never scored): "
                   f"run the same command again to retry them", err=True)
        raise typer.Exit(3)


@ifbench_app.command("review")
def review_cmd(
    db: Annotated[Path, typer.Option("--db", help="SQLite answers file of this stage (created; one per reviewer "
                                                  "or shared)")],
    data_dir: Annotated[Optional[Path], typer.Option("--data-dir", help="a built folder (if_bench.json, "
                                                     "infrared_imgs/)")] = None,
    after: Annotated[Optional[list[str]], typer.Option("--after", help="answers of an earlier stage: DB[,DB...] "
                                                       "(repeat per stage); review what it kept, edits applied")] = None,
    reviewer: Annotated[Optional[str], typer.Option("--reviewer", help="reviewer name (else asked on the page)")] = None,
    rule: Annotated[str, typer.Option("--rule", help="how earlier stages decide: majority | unanimous | any")] = "majority",
    port: Annotated[int, typer.Option("--port", help="port")] = 8765,
    host: Annotated[str, typer.Option("--host", help="interface (beyond 127.0.0.1: a warning)")] = "127.0.0.1",
    data_old: Annotated[Optional[Path], old_option("--data", "--data-dir")] = None,
) -> None:
    """Serve the calibration page: accept / edit / reject each question (URL with a fresh token; Ctrl-C to stop)."""
    from lensbench.tools.ifbench.calibrate import CALIBRATION_FORM, after_stages, review_items
    from lensbench.tools.review import ReviewDB, serve_review
    from lensbench.tools.review.server import check_media

    data = renamed(data_dir, data_old, "--data", "--data-dir", required=True)
    img_dir = data / "infrared_imgs"
    try:
        records, _ = after_stages(data, _stages(after), rule)
        for qid, r in records.items():  # media paths named by a data file resolve inside its folder
            check_media(img_dir / r["dst_thermal_path"], [img_dir], data / "if_bench.json", f"{qid}.dst_thermal_path")
    except (LensbenchError, ValueError) as exc:
        fail(str(exc))
    if not records:
        fail("no question left to review")
    with ReviewDB(db, CALIBRATION_FORM) as store:
        try:
            serve_review(review_items(records, img_dir), store, roots=[img_dir], host=host, port=port,
                         reviewer=reviewer, log=lambda m: _console.print(m, highlight=False, soft_wrap=True))
        except OSError as exc:
            fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")


@ifbench_app.command("finalize")
def finalize_cmd(
    stage: Annotated[list[str], typer.Option("--stage", help="answers of one stage: DB[,DB...]; repeat in order "
                                             "(coarse, then expert)")],
    out: Annotated[Path, typer.Option("--out", help="new folder for the calibrated release")],
    data_dir: Annotated[Optional[Path], typer.Option("--data-dir", help="the built folder the stages reviewed")] = None,
    rule: Annotated[str, typer.Option("--rule", help="majority | unanimous | any (a tie rejects)")] = "majority",
    seed: Annotated[int, typer.Option("--seed", help="seed of the letter balancing")] = 0,
    format: Annotated[str, typer.Option("--format", help="text or json")] = "text",
    data_old: Annotated[Optional[Path], old_option("--data", "--data-dir")] = None,
) -> None:
    """Apply the calibration stages, re-check and balance, write the final release; print agreement per stage."""
    from lensbench.tools.ifbench.calibrate import final_counts, finalize

    data = renamed(data_dir, data_old, "--data", "--data-dir", required=True)
    try:
        final, reports = finalize(data, _stages(stage), out, rule=rule, seed=seed)
    except (LensbenchError, ValueError) as exc:
        fail(str(exc))
    counts = final_counts(final)
    if format == "json":
        typer.echo(json.dumps({"stages": [r.__dict__ for r in reports], "final": counts}, indent=2, ensure_ascii=False))
        return
    fmt = (lambda v: "-" if v is None else f"{v:.3f}")
    for k, r in enumerate(reports, 1):
        a = r.agreement
        pct = "-" if a["percent"] is None else f"{a['percent']:.1f}%"
        typer.echo(f"stage {k}: {len(r.reviewers)} reviewer(s); {r.decided} decided, {r.kept} kept ({r.edited} edited), "
                   f"{r.rejected} rejected, {r.undecided} undecided, {len(r.invalid_edits)} invalid edits; agreement "
                   f"on {a['n_items']} items: {pct}, Cohen {fmt(a['cohen_kappa'])}, Fleiss {fmt(a['fleiss_kappa'])}, "
                   f"Krippendorff {fmt(a['krippendorff_alpha'])}")
        for qid, why in r.invalid_edits.items():
            typer.echo(f"  invalid edit {qid}: {why}", err=True)
    typer.echo(f"final: {counts['questions']} questions on {counts['images']} images -> {out / 'if_bench.json'}; "
               "right letters " + " ".join(f"{k} {v}" for k, v in counts["letters"].items()))
