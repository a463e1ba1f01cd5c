"""``lensbench train genvip ...``: the GenViP editor LoRA (IF-Bench App. C, Qwen-Edit-2509-FT) as a loop:
pairs -> LoRA -> ``genvip translate --lora`` -> IF-Bench ``--input if+rgb+text`` -> Tab. 5."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from lensbench.core.console import fail
from lensbench.core.flags import old_option, renamed
from lensbench.core.errors import ConfigError, LensbenchError
from lensbench.tools.training.cli_options import set_option

__all__ = ["editor_app"]

editor_app = typer.Typer(help="GenViP editor LoRA (IF-Bench App. C): curated RGB-T pairs <-> DiffSynth-Studio "
                              "metadata, flow-matching LoRA on Qwen-Image-Edit (rank 32, 2 epochs, batch 8, 1024 px, "
                              "lr 1e-4), translate -> IF-Bench GenViP run -> Tab. 5.", no_args_is_help=True)

SetOpt = set_option("rank, epochs, batch_size, resolution, learning_rate, max_steps, mixed_precision, seed")


def _pairs(manifest: Optional[Path], metadata: Optional[Path], base: Optional[Path]):
    from lensbench.tools.ifbench.genvip.editor_data import pairs_from_manifest, read_diffsynth_metadata

    if bool(manifest) == bool(metadata):
        raise ConfigError("give exactly one of --manifest (genvip curate) and --metadata (DiffSynth-Studio JSON)")
    return pairs_from_manifest(manifest) if manifest else read_diffsynth_metadata(metadata, base)


@editor_app.command("metadata")
def metadata_cmd(manifest: Annotated[Path, typer.Option("--manifest", help="genvip curate output (folder or manifest.jsonl)")],
                 out: Annotated[Path, typer.Option("--out", help="DiffSynth-Studio metadata JSON to write")],
                 base: Annotated[Optional[Path], typer.Option("--base", help="DiffSynth --dataset_base_path")] = None,
                 empty_prompt: Annotated[bool, typer.Option("--empty-prompt", help="write prompt \"\" as the release")] = False
                 ) -> None:
    """Write the curated pairs as DiffSynth-Studio training metadata (train there instead)."""
    from lensbench.tools.ifbench.genvip.editor_data import pairs_from_manifest, write_diffsynth_metadata

    try:
        pairs = pairs_from_manifest(manifest)
    except LensbenchError as exc:
        fail(str(exc))
    typer.echo(f"wrote {len(pairs)} pairs to {write_diffsynth_metadata(pairs, out, base, empty_prompt=empty_prompt)}")


@editor_app.command("train")
def train_cmd(out: Annotated[Path, typer.Option("--out", help="training folder (LoRA in OUT/lora)")],
              model: Annotated[str, typer.Option("--model", help="Qwen-Image-Edit pipeline (paper: Qwen/Qwen-Image-Edit-2509)")]
              = "Qwen/Qwen-Image-Edit-2509",
              manifest: Annotated[Optional[Path], typer.Option("--manifest", help="genvip curate output")] = None,
              metadata: Annotated[Optional[Path], typer.Option("--metadata", help="DiffSynth-Studio metadata JSON")] = None,
              base: Annotated[Optional[Path], typer.Option("--base", help="DiffSynth --dataset_base_path")] = None,
              sets: SetOpt = []) -> None:  # noqa: B006
    """Train the editor LoRA (App. C defaults); writes diffusers and DiffSynth-Studio LoRA files."""
    from lensbench.tools.training.editor_lora import train_editor_lora
    from lensbench.tools.training.settings import EditorTrainSettings, settings_from_cli

    try:
        s = train_editor_lora(_pairs(manifest, metadata, base), settings_from_cli(EditorTrainSettings, sets, model=model,
                                                                                 out=out), progress=True)
    except LensbenchError as exc:
        fail(str(exc))
    typer.echo(json.dumps({k: s.get(k) for k in ("lora_dir", "steps", "losses", "samples_per_s", "resumed_from")}))


@editor_app.command("lora")
def lora_cmd(src: Annotated[Path, typer.Option("--in", help="LoRA file or diffusers LoRA folder")],
             out: Annotated[Path, typer.Option("--out", help="safetensors file to write")],
             to: Annotated[str, typer.Option("--to", help="diffusers | diffsynth")],
             scale: Annotated[float, typer.Option("--scale", help="to diffsynth: the adapter's alpha/r")] = 1.0) -> None:
    """Convert LoRA weights between DiffSynth-Studio and diffusers key names."""
    from lensbench.backends.images.lora_keys import read_lora, to_diffsynth, to_diffusers
    from lensbench.core.extras import require

    try:
        st = require("safetensors.torch", "train", "writing LoRA weights")
        sd = read_lora(src)
        conv = to_diffusers(sd) if to == "diffusers" else to_diffsynth(sd, scale) if to == "diffsynth" else None
        if conv is None:
            raise ConfigError(f"--to must be diffusers or diffsynth, got {to!r}")
        out.parent.mkdir(parents=True, exist_ok=True)
        st.save_file({k: v.contiguous() for k, v in conv.items()}, str(out))
    except (LensbenchError, ValueError) as exc:
        fail(str(exc))
    typer.echo(f"wrote {len(conv)} tensors to {out}")


@editor_app.command("loop")
def loop_cmd(lora: Annotated[Path, typer.Option("--lora", help="the trained LoRA (OUT/lora of 'train')")],
             model: Annotated[str, typer.Option("--model", help="understanding model spec (paper: Qwen2.5-VL-7B)")],
             out: Annotated[Path, typer.Option("--out", help="folder: translated/, genvip/, vanilla/ runs")],
             data_dir: Annotated[Optional[Path], typer.Option("--data-dir", help="IF-Bench data folder (if_bench.json, "
                                                              "infrared_imgs/)")] = None,
             editor_model: Annotated[str, typer.Option("--editor-model", help="the LoRA's base pipeline")]
             = "Qwen/Qwen-Image-Edit-2509",
             steps: Annotated[int, typer.Option("--steps", help="inference steps (App. C: 40)")] = 40,
             size: Annotated[int, typer.Option("--size", help="editing resolution (App. C: 1024)")] = 1024,
             editor_dtype: Annotated[str, typer.Option("--editor-dtype", help="auto (bfloat16 on a GPU, float32 on a "
                                                       "CPU: bfloat16 is ~16x slower there) | bfloat16 | float16 | "
                                                       "float32")] = "auto",
             limit: Annotated[Optional[int], typer.Option("--limit", help="first N questions")] = None,
             max_tokens: Annotated[Optional[int], typer.Option("--max-tokens", help="max new tokens per reply")] = None,
             judge_model: Annotated[Optional[str], typer.Option("--judge-model", help="answer parser (hybrid judgment)")]
             = None,
             data_old: Annotated[Optional[Path], old_option("--data", "--data-dir")] = None) -> None:
    """Translate IF-Bench's infrared images with the LoRA editor, run IF-Bench with GenViP (IF + RGB +
    Text) and vanilla (IF), and print Tab. 5 with the paper's rows. Progress (each translated image,
    each run's bar) goes to stderr."""
    from lensbench.api import run
    from lensbench.benchmarks.ifbench.data import load_questions
    from lensbench.tools.ifbench.genvip.editor_table import render_editor_table
    from lensbench.tools.ifbench.genvip.editors import make_editor, translate_folder

    data = renamed(data_dir, data_old, "--data", "--data-dir", required=True)
    ev = {k: v for k, v in (("limit", limit), ("max_tokens", max_tokens), ("judge_model", judge_model)) if v is not None}
    try:
        qs = load_questions(data)[: limit or None]
        src = out / "infrared"
        src.mkdir(parents=True, exist_ok=True)
        for f in sorted({Path(q.if_path) for q in qs if q.if_path}):  # only the images the questions use
            if not (src / f.name).exists():
                (src / f.name).symlink_to(f.resolve())
        typer.echo(f"loading the editor {editor_model} (dtype {editor_dtype})", err=True)
        ed = make_editor(f"diffusers:{editor_model}", lora=str(lora), steps=steps, size=size, dtype=editor_dtype)
        t0 = time.monotonic()

        def tick(i: int, n: int) -> None:
            typer.echo(f"translate: {i}/{n} images ({time.monotonic() - t0:.0f} s)", err=True)

        rep = translate_folder(src, out / "translated", ed, on_progress=tick)
        if rep["failed"]:
            raise ConfigError(f"{len(rep['failed'])} translation(s) failed, first: {rep['failed'][0]}")
        typer.echo("IF-Bench, vanilla (IF) then GenViP (IF+RGB+Text)", err=True)
        results = [run("if-bench", model=model, out=out / "vanilla", data_dir=data, input="if", progress=True, **ev),
                   run("if-bench", model=model, out=out / "genvip", data_dir=data, input="if+rgb+text", progress=True,
                       translated_dir=str(out / "translated"), skip_missing=bool(limit), **ev)]
    except LensbenchError as exc:
        fail(str(exc))
    typer.echo(render_editor_table(results))


@editor_app.command("table")
def table_cmd(runs: Annotated[list[Path], typer.Argument(help="IF-Bench run folders")],
              fmt: Annotated[str, typer.Option("--format", help="md | csv")] = "md") -> None:
    """Tab. 5 of IF-Bench runs with an Editor column, the paper's rows beside ours."""
    from lensbench.api import load_run
    from lensbench.tools.ifbench.genvip.editor_table import render_editor_table

    try:
        typer.echo(render_editor_table([load_run(r).result for r in runs], fmt))
    except LensbenchError as exc:
        fail(str(exc))
