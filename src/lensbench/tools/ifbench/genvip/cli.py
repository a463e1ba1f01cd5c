"""``lensbench genvip translate|curate|grid`` (typer)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from lensbench.core.errors import ConfigError
from lensbench.core.console import make_console, fail

__all__ = ["genvip_app"]

genvip_app = typer.Typer(help="GenViP (IF-Bench Sec. 4): translate infrared images to RGB; curate RGB-T training pairs; draw the "
                                "per-editor translation grid (Fig. 15).",
                         no_args_is_help=True)
_console = make_console()


@genvip_app.command("translate")
def translate_cmd(
    images: Annotated[Path, typer.Option("--images", help="folder of infrared images")],
    out: Annotated[Path, typer.Option("--out", help="output folder (existing translations are skipped)")],
    editor: Annotated[str, typer.Option("--editor", help="folder:DIR | openai-images:MODEL | diffusers:MODEL_OR_PATH")],
    lora: Annotated[Optional[str], typer.Option("--lora", help="LoRA weights for diffusers (e.g. Qwen-Edit-2509-FT)")] = None,
    base_url: Annotated[Optional[str], typer.Option("--base-url", help="image-edit endpoint base URL (openai-images)")] = None,
    api_key_env: Annotated[str, typer.Option("--api-key-env", help="environment variable with the API key")] = "OPENAI_API_KEY",
    steps: Annotated[int, typer.Option("--steps", help="inference steps (diffusers; paper: 40)")] = 40,
    seed: Annotated[int, typer.Option("--seed", help="seed (diffusers; paper: 123)")] = 123,
    size: Annotated[int, typer.Option("--size", help="editing resolution, square (paper: 1024)")] = 1024,
    limit: Annotated[Optional[int], typer.Option("--limit", help="translate only the first N images")] = None,
    dtype: Annotated[str, typer.Option("--dtype", help="diffusers: auto (bfloat16 on a GPU, float32 on a CPU) | "
                                       "bfloat16 | float16 | float32")] = "auto",
) -> None:
    """Translate every image of --images into --out with an editor (resumable; failures listed)."""
    from lensbench.tools.ifbench.genvip.editors import make_editor, translate_folder

    try:
        ed = make_editor(editor, base_url=base_url, api_key_env=api_key_env, lora=lora, steps=steps, seed=seed, size=size,
                         dtype=dtype)
        rep = translate_folder(images, out, ed, limit=limit)
    except ConfigError as exc:
        fail(str(exc))
    _console.print(f"translated {rep['done']}, skipped (already there) {rep['skipped']}, failed {len(rep['failed'])} "
                   f"of {rep['total']}; report: {out / 'translate_report.json'}", highlight=False)
    for f in rep["failed"][:20]:
        _console.print(f"  failed: {f['file']}: {f['error']}", highlight=False)
    if rep["failed"]:
        raise typer.Exit(1)


@genvip_app.command("curate")
def curate_cmd(
    pairs: Annotated[Path, typer.Option("--pairs", help="folder with ir/ (or infrared/, thermal/) and rgb/ (or visible/) subfolders")],
    benchmark_images: Annotated[Path, typer.Option("--benchmark-images", help="IF-Bench infrared images (near-duplicate guard)")],
    out: Annotated[Path, typer.Option("--out", help="output folder for manifest.jsonl and summary.json")],
    target: Annotated[int, typer.Option("--target", help="number of pairs to keep (paper: 50,000)")],
    min_side: Annotated[int, typer.Option("--min-side", help="drop pairs with a side below this (px)")] = 200,
    min_brightness: Annotated[float, typer.Option("--min-brightness", help="drop pairs whose RGB mean grey level is below this (0-255)")] = 30.0,
    min_dice: Annotated[float, typer.Option("--min-dice", help="keep pairs with Canny edge Dice >= this (0-1)")] = 0.1,
    edge_tolerance_px: Annotated[int, typer.Option("--edge-tolerance-px", help="dilate edges by this radius before Dice")] = 0,
    embedder: Annotated[str, typer.Option("--embedder", help="phash | dino[:MODEL] (transformers, local weights)")] = "phash",
    dup_hamming: Annotated[int, typer.Option("--dup-hamming", help="phash: duplicate if Hamming distance <= this")] = 6,
    dup_cosine: Annotated[float, typer.Option("--dup-cosine", help="dino: duplicate if cosine >= this")] = 0.95,
    clusters: Annotated[str, typer.Option("--clusters", help="k per hierarchy level, comma-separated")] = "10,5",
    seed: Annotated[int, typer.Option("--seed", help="k-means and sampling seed")] = 0,
) -> None:
    """Filter, de-duplicate, cluster and balance-sample RGB-T pairs (Sec. 4.2); writes a manifest."""
    from lensbench.tools.ifbench.genvip.curate import CurateSettings, DinoEmbedder, PHashEmbedder, curate, find_pairs
    from lensbench.tools.ifbench.genvip.editors import list_images

    try:
        ks = tuple(int(x) for x in clusters.split(",") if x.strip())
        s = CurateSettings(target=target, min_side=min_side, min_brightness=min_brightness, min_dice=min_dice,
                           edge_tolerance_px=edge_tolerance_px, ks=ks, seed=seed, embedder=embedder, dup_hamming=dup_hamming)
        if embedder == "phash":
            emb = PHashEmbedder(dup_hamming)
        elif embedder.startswith("dino"):
            emb = DinoEmbedder(embedder.partition(":")[2] or "facebook/dinov2-small", dup_cosine)
        else:
            raise ConfigError(f"unknown --embedder {embedder!r} (phash, dino[:MODEL])")
        summary = curate(find_pairs(pairs), list_images(benchmark_images), out, s, embedder=emb)
    except (ConfigError, ValueError) as exc:
        fail(str(exc))
    typer.echo(json.dumps({"pairs": summary["pairs"], "kept": summary["kept"], "counts": summary["counts"]}, indent=2))


@genvip_app.command("grid")
def grid_cmd(
    infrared: Annotated[Path, typer.Option("--infrared", help="folder of the infrared images (IF-Bench's images)")],
    translated: Annotated[list[str], typer.Option("--translated", help="[LABEL=]FOLDER of one editor's translations "
                                                  "('genvip translate --out') or an IF-Bench GenViP run folder; "
                                                  "repeat per editor, in column order")],
    out: Annotated[Path, typer.Option("--out", help="PNG file to write")],
    image: Annotated[Optional[list[str]], typer.Option("--image", help="infrared file name of a row (repeat; "
                                                       "default: the first --n translated by every editor)")] = None,
    n: Annotated[int, typer.Option("--n", help="rows when no --image is given")] = 4,
    cell: Annotated[float, typer.Option("--cell", help="inches per cell")] = 2.0,
) -> None:
    """IF-Bench Fig. 15: rows of infrared image | editor 1 | editor 2 | ... for the same images across editors."""
    from lensbench.core.errors import DataError
    from lensbench.tools.ifbench.genvip.grid import draw_grid, editor_column, plan_grid

    try:
        plan = plan_grid(infrared, [editor_column(t) for t in translated], names=image or (), n=n)
        png = draw_grid(plan, cell_in=cell)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(png)
    except (ConfigError, DataError) as exc:
        fail(str(exc))
    _console.print(f"{len(plan.rows)} rows x {1 + len(plan.columns)} columns (Infrared, "
                   f"{', '.join(c.label for c in plan.columns)}) -> {out}", highlight=False, soft_wrap=True)
    for lab, miss in plan.missing.items():
        _console.print(f"  {lab}: {len(miss)} infrared image(s) not translated, left out", highlight=False)
