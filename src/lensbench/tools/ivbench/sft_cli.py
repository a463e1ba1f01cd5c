"""``lensbench train ivbench ...``: IV-Bench Tab. 3 SFT variants (paper Sec. 4.4): export the synthesized
(and the unaligned) data as training conversations, fine-tune a LLaVA-OneVision-family model with
TRL, evaluate the variants through ``hf:``, render Tab. 3."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from lensbench.core.console import fail
from lensbench.core.flags import old_option, renamed
from lensbench.core.errors import ConfigError, LensbenchError
from lensbench.tools.training.cli_options import VLM_KEYS, set_option, vlm_train_command

__all__ = ["sft_app"]

sft_app = typer.Typer(help="IV-Bench Tab. 3 SFT variants: synthesized IV-aligned vs unaligned video-QA data as "
                           "LLaVA-Video-style conversations with frames, TRL SFT of a LLaVA-OneVision-family model, "
                           "evaluation through hf:, Tab. 3.", no_args_is_help=True)

SetOpt = set_option(VLM_KEYS)


@sft_app.command("export")
def export_cmd(questions: Annotated[Path, typer.Option("--questions", help="'ivbench synthesize' output jsonl")],
               videos: Annotated[Path, typer.Option("--videos", help="folder of <video_id>.mp4")],
               out: Annotated[Path, typer.Option("--out", help="output folder")],
               images: Annotated[Optional[Path], typer.Option("--images", help="query images (default: beside the "
                                                              "questions, images/)")] = None,
               frames: Annotated[int, typer.Option("--frames", help="frames per video (paper: 32)")] = 32,
               variants: Annotated[str, typer.Option("--variants", help="iv,video")] = "iv,video",
               seed: Annotated[int, typer.Option("--seed", help="option order, draw and shuffle seed")] = 0,
               llava_video: Annotated[Optional[list[Path]], typer.Option(
                   "--llava-video", help="pure-video data: a LLaVA-Video-178K file (*_cap/_oe_qa/_mc_qa_processed"
                                         ".json; repeat)")] = None,
               video_root: Annotated[Optional[Path], typer.Option("--video-root", help="folder the 'video' paths are "
                                                                  "relative to (default: each file's folder)")] = None,
               image_data: Annotated[Optional[list[Path]], typer.Option(
                   "--image-data", help="pure-image data: a LLaVA-format image instruction JSON (repeat)")] = None,
               image_root: Annotated[Optional[Path], typer.Option("--image-root", help="folder the 'image' paths are "
                                                                  "relative to (default: each file's folder)")] = None,
               video_ratio: Annotated[float, typer.Option("--video-ratio", help="pure-video items per main example "
                                                          "(the paper: 'small amounts', no number; ours)")] = 0.1,
               image_ratio: Annotated[float, typer.Option("--image-ratio", help="pure-image items per main example "
                                                          "(ours, as --video-ratio)")] = 0.1,
               row: Annotated[bool, typer.Option("--row/--no-row", help="also the llava-video-178k variant (Tab. 3 "
                                                 "row 4): every --llava-video item + the image data")] = False) -> None:
    """Write sft_<variant>.jsonl (lensbench/TRL) and llava_<variant>.json (LLaVA-Video style), each variant
    combined with the same pure-video and pure-image examples when their data is given (Sec. 4.4)."""
    from lensbench.tools.ivbench.sft_data import export_sft
    from lensbench.tools.ivbench.sft_mix import MixSources

    mix = MixSources(tuple(llava_video or ()), video_root, tuple(image_data or ()), image_root, video_ratio,
                     image_ratio) if llava_video or image_data else None
    try:
        done = export_sft(questions, videos, images or questions.parent / "images", out, frames=frames, seed=seed,
                          variants=tuple(v.strip() for v in variants.split(",") if v.strip()), mix=mix, row=row)
    except LensbenchError as exc:
        fail(str(exc))
    typer.echo(json.dumps(done, indent=1))


sft_app.command("train")(vlm_train_command(1.0, "Fine-tune one variant (a LLaVA-OneVision-family model; the paper "
                                                 "gives no hyperparameters: 1 epoch by default)."))


@sft_app.command("variants")
def variants_cmd(model: Annotated[str, typer.Option("--model", help="base model folder or Hub id")],
                 export: Annotated[Path, typer.Option("--export", help="folder of 'export'")],
                 out: Annotated[Path, typer.Option("--out", help="folder: base/, iv/, video/")],
                 data_dir: Annotated[Optional[Path], typer.Option("--data-dir", help="IV-Bench data folder "
                                                                  "(evaluation)")] = None,
                 sets: SetOpt = [],  # noqa: B006
                 frames: Annotated[str, typer.Option("--frames", help="evaluation frames (paper: 32)")] = "32",
                 batch: Annotated[int, typer.Option("--eval-batch", help="hf: batch size")] = 4,
                 max_tokens: Annotated[Optional[int], typer.Option("--max-tokens", help="max new tokens")] = None,
                 limit: Annotated[Optional[int], typer.Option("--limit", help="first N queries")] = None,
                 row_model: Annotated[Optional[str], typer.Option(
                     "--row-model", help="evaluate this checkpoint as the llava-video-178k row instead of training "
                                         "it (the paper's row is the released LLaVA-Video model)")] = None,
                 data_old: Annotated[Optional[Path], old_option("--data", "--data-dir")] = None) -> None:
    """Evaluate the base model, train + evaluate each exported variant (the llava-video-178k row too when
    exported, or --row-model), print Tab. 3."""
    from lensbench.tools.ivbench.sft_table import render_table3
    from lensbench.tools.training.evaluate import evaluate_checkpoint
    from lensbench.tools.training.settings import VLMTrainSettings, settings_from_cli
    from lensbench.tools.training.vlm_sft import train_vlm

    data = renamed(data_dir, data_old, "--data", "--data-dir", required=True)
    ev = {k: v for k, v in (("max_tokens", max_tokens), ("limit", limit)) if v is not None}
    rows, doc = [], {"base_model": model, "runs": {}}
    try:
        exp = json.loads((export / "export.json").read_text(encoding="utf-8")) if (export / "export.json").is_file() \
            else None
        if exp is None:
            raise ConfigError(f"{export}: no export.json (run 'lensbench train ivbench export' first)")
        name = Path(model).name or model
        todo = [("base", model)] + [(v, None) for v in exp if not (row_model and v == "llava-video-178k")]
        for variant, ckpt in todo + ([("llava-video-178k", row_model)] if row_model else []):
            if ckpt is None:
                s = train_vlm(exp[variant]["sft"], settings_from_cli(VLMTrainSettings, sets, model=model,
                                                                      out=out / variant / "train", epochs=1.0))
                ckpt = s["model_dir"]
            typer.echo(f"{variant}: evaluating {ckpt}", err=True)
            r = evaluate_checkpoint("iv-bench", ckpt, out / variant / "run", data_dir=data, batch=batch,
                                    model_name=f"{name} {variant}", frames=frames, **ev)
            rows.append((variant, r))
            doc["runs"][variant] = str(out / variant / "run")
        (out / "variants.json").write_text(json.dumps(doc, indent=2), encoding="utf-8")
    except LensbenchError as exc:
        fail(str(exc))
    typer.echo(render_table3(rows, Path(model).name or model))


@sft_app.command("table")
def table_cmd(folder: Annotated[Path, typer.Argument(help="folder of 'variants'")],
              fmt: Annotated[str, typer.Option("--format", help="md | csv")] = "md") -> None:
    """Tab. 3 of a variants folder, the paper's rows beside ours."""
    from lensbench.api import load_run
    from lensbench.tools.ivbench.sft_table import render_table3

    try:
        doc = json.loads((folder / "variants.json").read_text(encoding="utf-8"))
        rows = [(v, load_run(p).result) for v, p in doc["runs"].items()]
    except (OSError, ValueError, LensbenchError) as exc:
        fail(f"{folder}: {exc}")
    typer.echo(render_table3(rows, Path(doc["base_model"]).name or doc["base_model"], fmt))
