"""``lensbench train groundingme ...``: GroundingME Sec. 5.3 data-mixture SFT, data -> train -> evaluate
-> Tab. 5 / Tab. 7 / Fig. 6 (see the benchmark README, "Train -> evaluate -> table")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from lensbench.core.console import fail
from lensbench.core.errors import LensbenchError
from lensbench.tools.training.cli_options import VLM_KEYS, set_option, vlm_train_command

__all__ = ["sft_app"]

sft_app = typer.Typer(help="GroundingME Sec. 5.3 data-mixture SFT: grounding items, neg:pos mixtures, LoRA / full "
                           "SFT (TRL), evaluation through hf:, Tab. 5 / Tab. 7 / Fig. 6.", no_args_is_help=True)

SetOpt = set_option(VLM_KEYS)
FmtOpt = Annotated[str, typer.Option("--bbox-format", help="the trained model's box convention: rel1000 (Qwen3-VL), "
                                     "abs-resized (Qwen2.5-VL), abs, rel1")]


@sft_app.command("data")
def data_cmd(source: Annotated[Path, typer.Option("--source", help="COCO-refs folder, HF parquet file/folder, or "
                                                  "JSON(L) rows with image, description, bbox")],
             out: Annotated[Path, typer.Option("--out", help="grounding items JSONL to write")],
             images: Annotated[Optional[Path], typer.Option("--images", help="image folder (COCO train2014)")] = None,
             split: Annotated[Optional[str], typer.Option("--split", help="keep rows of this split (train, val)")] = None,
             box_format: Annotated[str, typer.Option("--box-format", help="auto | xyxy | xywh")] = "auto",
             limit: Annotated[Optional[int], typer.Option("--limit", help="sample N items (paper: 30,000)")] = None,
             seed: Annotated[int, typer.Option("--seed")] = 0) -> None:
    """Read positives from a RefCOCOg-style source into grounding items (then 'lensbench groundingme
    negatives --source ITEMS --pool' makes their negatives)."""
    from lensbench.tools.groundingme.refexp import read_grounding_items, sample_items, write_items_file

    try:
        items = sample_items(read_grounding_items(source, images_dir=images, split=split, box_format=box_format,
                                                  media_dir=out.parent / "images"), limit, seed)
    except LensbenchError as exc:
        fail(str(exc))
    write_items_file(out, items)
    typer.echo(f"wrote {len(items)} grounding items to {out}")


@sft_app.command("mix")
def mix_cmd(positives: Annotated[Path, typer.Option("--positives", help="training positives (grounding items)")],
            negatives: Annotated[Path, typer.Option("--negatives", help="training negatives ('groundingme negatives --pool')")],
            out: Annotated[Path, typer.Option("--out", help="folder for mix_<neg>-<pos>.jsonl and mixtures.json")],
            bbox_format: FmtOpt = "rel1000",
            ratios: Annotated[str, typer.Option("--ratios", help="comma-separated NEG:POS")] = "1:8,1:4,1:2,1:1,2:1",
            total: Annotated[Optional[int], typer.Option("--total", help="items per mixture, the same for every ratio "
                                                         "(default: the paper's 30000, or the most the pools allow at "
                                                         "every ratio)")] = None,
            per_ratio_max: Annotated[bool, typer.Option("--per-ratio-max", help="each ratio as large as the pools "
                                                        "allow (sizes differ: ratio confounded with size)")] = False,
            val_positives: Annotated[Optional[Path], typer.Option("--val-positives", help="validation positives "
                                                                  "(RefCOCOg_val) for the in-domain eval set")] = None,
            val_negatives: Annotated[Optional[Path], typer.Option("--val-negatives", help="validation negatives "
                                                                  "(RefCOCOg_rej_val)")] = None,
            seed: Annotated[int, typer.Option("--seed")] = 0) -> None:
    """SFT mixtures at each ratio (Table 9 prompt, answers in --bbox-format), all of one size (Sec. 5.3:
    30,000 each, or the most the pools allow at every ratio) and, with --val-*, the in-domain
    evaluation set (OUT/eval, a 'grounding-rej' data folder)."""
    from lensbench.benchmarks.groundingme.items import read_items_file
    from lensbench.tools.groundingme.sft_data import write_eval_set, write_mixtures

    try:
        man = write_mixtures(out, read_items_file(positives), read_items_file(negatives),
                             ratios=tuple(r.strip() for r in ratios.split(",") if r.strip()), total=total, seed=seed,
                             bbox_format=bbox_format, per_ratio_max=per_ratio_max)
        if val_positives and val_negatives:
            write_eval_set(out / "eval", read_items_file(val_positives), read_items_file(val_negatives))
    except LensbenchError as exc:
        fail(str(exc))
    typer.echo(f"items per mixture: {man['total'] if man['total'] is not None else 'differs'} "
               f"({man['total_rule']})", err=True)
    typer.echo(json.dumps(man["ratios"], indent=1))


sft_app.command("train")(vlm_train_command(3.0, "Train one mixture (paper: 3 epochs); the checkpoint for hf: is "
                                                 "OUT/model."))


@sft_app.command("sweep")
def sweep_cmd(model: Annotated[str, typer.Option("--model", help="base model folder or Hub id (Origin)")],
              mixtures: Annotated[Path, typer.Option("--mixtures", help="folder of 'mix' (mixtures.json)")],
              out: Annotated[Path, typer.Option("--out", help="sweep folder (resumable)")],
              eval_set: Annotated[Optional[Path], typer.Option("--eval-set", help="in-domain set (default MIXTURES/eval)")] = None,
              groundingme: Annotated[Optional[Path], typer.Option("--groundingme", help="GroundingME data folder")] = None,
              ratios: Annotated[Optional[str], typer.Option("--ratios", help="subset of the mixtures' ratios")] = None,
              sets: SetOpt = [],  # noqa: B006
              batch: Annotated[int, typer.Option("--eval-batch", help="hf: batch size")] = 16,
              max_tokens: Annotated[Optional[int], typer.Option("--max-tokens", help="max new tokens per reply")] = None,
              max_pixels: Annotated[Optional[int], typer.Option("--max-pixels", help="GroundingME image budget")] = None,
              limit: Annotated[Optional[int], typer.Option("--limit", help="evaluate the first N items")] = None) -> None:
    """Baseline evaluation, then train + evaluate every ratio; prints Tab. 5, Tab. 7, Fig. 6."""
    from lensbench.tools.groundingme.sft_table import render_sweep
    from lensbench.tools.groundingme.sweep import SweepPlan, run_sweep
    from lensbench.tools.training.settings import VLMTrainSettings, settings_from_cli

    ev = {k: v for k, v in (("max_tokens", max_tokens), ("max_pixels", max_pixels), ("limit", limit)) if v is not None}
    try:
        plan = SweepPlan(train=settings_from_cli(VLMTrainSettings, sets, model=model, out=out, epochs=3.0),
                         mixtures=mixtures, eval_set=eval_set or mixtures / "eval", out=out, groundingme=groundingme,
                         ratios=tuple(r.strip() for r in ratios.split(",")) if ratios else None, eval=ev, batch=batch,
                         progress=True)
        doc = run_sweep(plan, log=lambda m: typer.echo(m, err=True))
    except LensbenchError as exc:
        fail(str(exc))
    typer.echo(render_sweep(doc))


@sft_app.command("table")
def table_cmd(sweep: Annotated[Path, typer.Argument(help="sweep folder")],
              fmt: Annotated[str, typer.Option("--format", help="md | csv")] = "md",
              figure: Annotated[Optional[Path], typer.Option("--figure", help="write Fig. 6 as this PNG")] = None,
              no_paper: Annotated[bool, typer.Option("--no-paper", help="leave out the paper's rows")] = False) -> None:
    """Tab. 5, Tab. 7 and Fig. 6 of a sweep, our rows beside the paper's."""
    from lensbench.tools.groundingme.sft_table import plot_fig6, render_sweep
    from lensbench.tools.groundingme.sweep import read_sweep

    try:
        doc = read_sweep(sweep)
        typer.echo(render_sweep(doc, fmt, with_paper=not no_paper))
        if figure:
            typer.echo(f"Fig. 6: {plot_fig6(doc, figure, with_paper=not no_paper)}", err=True)
    except LensbenchError as exc:
        fail(str(exc))


@sft_app.command("export")
def export_cmd(mixtures: Annotated[Path, typer.Option("--mixtures", help="folder of 'mix'")],
               fmt: Annotated[str, typer.Option("--format", help="swift | llamafactory")],
               out: Annotated[Path, typer.Option("--out", help="output folder")]) -> None:
    """The mixtures as ms-swift JSONL or LLaMA-Factory ShareGPT files (+ dataset_info.json)."""
    from lensbench.tools.training.exports import export
    from lensbench.tools.training.sft_data import read_examples

    try:
        man = json.loads((mixtures / "mixtures.json").read_text(encoding="utf-8"))
        for r, info in man["ratios"].items():
            stem = Path(info["file"]).stem
            path = export(read_examples(mixtures / info["file"]), fmt,
                          out / (f"{stem}.jsonl" if fmt == "swift" else f"{stem}.json"), name=f"groundingme_{stem}")
            typer.echo(f"{r}: {path}")
    except (LensbenchError, ValueError, OSError) as exc:
        fail(str(exc))
