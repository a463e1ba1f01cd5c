"""``lensbench gobench generate | filter | rate | summary | export-ratings`` (typer)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from lensbench.core.errors import ConfigError, DataError, LensbenchError
from lensbench.core.console import make_console, fail

__all__ = ["gobench_app"]

gobench_app = typer.Typer(help="GOBench generation side: make images for the 333 prompts, filter them (quality, "
                               "near-duplicates), rate them (people: a local web page; MLLM judge: 'lensbench run "
                               "gobench'), summarise (Tables 1-2, agreement).",
                          no_args_is_help=True)
_console = make_console()


def _fail(msg) -> None:
    fail(str(msg))


def _records(data_dir: Path):
    from lensbench.benchmarks.gobench.load import find_records_file, load_records

    return load_records(find_records_file(data_dir))


@gobench_app.command("generate")
def generate_cmd(
    generator: Annotated[str, typer.Option("--generator", help="folder:DIR | openai-images:MODEL | diffusers:MODEL_OR_PATH")],
    out: Annotated[Path, typer.Option("--out", help="output folder: <category>/<N>.png per scenario (existing kept)")],
    data_dir: Annotated[Path, typer.Option("--data-dir", help="GOBench data folder (data_total.json)")],
    base_url: Annotated[Optional[str], typer.Option("--base-url", help="Images API base URL (openai-images)")] = None,
    api_key_env: Annotated[str, typer.Option("--api-key-env", help="environment variable with the API key")] = "OPENAI_API_KEY",
    size: Annotated[str, typer.Option("--size", help="image size, e.g. 1024x1024")] = "1024x1024",
    steps: Annotated[int, typer.Option("--steps", help="inference steps (diffusers)")] = 30,
    seed: Annotated[int, typer.Option("--seed", help="seed (diffusers)")] = 0,
    limit: Annotated[Optional[int], typer.Option("--limit", help="only the first N scenarios")] = None,
) -> None:
    """One image per scenario prompt (333) with a text-to-image backend; resumable; failures listed."""
    from lensbench.tools.gobench.generate import generate_all, make_generator

    try:
        recs = _records(data_dir)
        gen = make_generator(generator, base_url=base_url, api_key_env=api_key_env, size=size, steps=steps, seed=seed)
    except (ConfigError, DataError) as exc:
        _fail(str(exc))
    try:
        rep = generate_all(recs, out, gen, limit=limit, log=_console.print)
    finally:
        gen.close()
    _console.print(f"made {rep.made}, kept {rep.kept} existing, failed {len(rep.failed)} -> {out}")
    for key, err in rep.failed[:20]:
        _console.print(f"  {key}: {err}", highlight=False)
    if rep.failed:
        raise typer.Exit(1)


@gobench_app.command("filter")
def filter_cmd(
    images: Annotated[list[Path], typer.Option("--images", help="a generator's folder (<category>/<N>.png, as "
                                               "'generate --out' writes); repeat per generator, preferred first")],
    out: Annotated[Path, typer.Option("--out", help="new folder: <generator>/<category>/<file> kept, filter.jsonl")],
    min_side: Annotated[int, typer.Option("--min-side", help="drop images whose short side is below this (px)")] = 256,
    min_std: Annotated[float, typer.Option("--min-std", help="drop flat images: grey std below this (0-255)")] = 8.0,
    min_sharpness: Annotated[float, typer.Option("--min-sharpness", help="drop blurry images: Laplacian variance "
                                                 "below this")] = 10.0,
    hash: Annotated[str, typer.Option("--hash", help="perceptual hash: phash | dhash | ahash | whash")] = "phash",
    max_distance: Annotated[int, typer.Option("--max-distance", help="near-duplicate: hashes at most this many "
                                              "bits apart (of 64)")] = 8,
    embedder: Annotated[Optional[str], typer.Option("--embedder", help="also compare image embeddings: simple | "
                                                    "clip[:ARCH[:PRETRAINED]] | hf:MODEL_ID")] = None,
    min_similarity: Annotated[float, typer.Option("--min-similarity", help="near-duplicate: embedding cosine "
                                                  "at least this")] = 0.95,
    unit: Annotated[str, typer.Option("--unit", help="scenario: drop a scenario whole when any generator's image "
                                      "fails, so every generator keeps the same scenarios (as the release: 333 x 3); "
                                      "image: judge each image alone")] = "scenario",
) -> None:
    """Gen-1K filtering before rating: drop poor-quality images and near-duplicates (Sec. 2.1); every decision logged."""
    from lensbench.tools.gobench.filter import FilterSettings, filter_generations

    try:
        _checks, counts = filter_generations(images, out, FilterSettings(
            min_side=min_side, min_std=min_std, min_sharpness=min_sharpness, hash=hash, max_distance=max_distance,
            embedder=embedder, min_similarity=min_similarity, unit=unit))
    except (ConfigError, DataError) as exc:
        _fail(str(exc))
    dropped = ", ".join(f"{k} {v}" for k, v in counts["dropped"].items()) or "none"
    _console.print(f"{counts['scenarios']} scenarios: {counts['scenarios_kept']} kept; "
                   f"{counts['images']} images: {counts['kept']} kept, dropped: {dropped} -> {out} "
                   f"(decisions in {out / 'filter.jsonl'})", highlight=False, soft_wrap=True)
    for g, n in counts["per_generator"].items():
        _console.print(f"  {g}: {n} kept; rate them: lensbench gobench rate --images {out / g} --data-dir DATA",
                       highlight=False, soft_wrap=True)


@gobench_app.command("rate")
def rate_cmd(
    images: Annotated[Path, typer.Option("--images-dir", "--images", help="folder of images: <category>/<N.M>.png or <category>/<N>.png")],
    data_dir: Annotated[Path, typer.Option("--data-dir", help="GOBench data folder (data_total.json)")],
    db: Annotated[Path, typer.Option("--db", help="SQLite ratings file (shared by raters; created)")] = Path("gobench_ratings.sqlite"),
    rater: Annotated[Optional[str], typer.Option("--rater", help="rater name (else asked on the page or ?rater=NAME)")] = None,
    generator: Annotated[Optional[str], typer.Option("--generator", help="name of the images' generator (default: the folder name)")] = None,
    port: Annotated[int, typer.Option("--port", help="port on 127.0.0.1")] = 8765,
    host: Annotated[str, typer.Option("--host", help="interface to listen on (beyond 127.0.0.1: a warning; "
                                                     "prefer an SSH tunnel)")] = "127.0.0.1",
) -> None:
    """Serve the rating page (URL with a fresh access token); every answer is stored in --db at once; Ctrl-C to stop."""
    from lensbench.tools.gobench.ratings_db import RatingsDB
    from lensbench.tools.gobench.server import collect_items, serve_ratings

    try:
        items, unknown = collect_items(images, _records(data_dir), generator or images.resolve().name)
    except (ConfigError, DataError) as exc:
        _fail(str(exc))
    if unknown:
        _console.print(f"{len(unknown)} file(s) are not GOBench images and are left out, e.g. {unknown[0]}")
    store = RatingsDB(db)
    try:
        serve_ratings(items, store, roots=[images], host=host, port=port, rater=rater,
                      log=lambda m: _console.print(m, highlight=False, soft_wrap=True))
    except OSError as exc:
        _fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    finally:
        store.close()


@gobench_app.command("export-ratings")
def export_cmd(
    db: Annotated[Path, typer.Option("--db", help="SQLite ratings file")],
    out: Annotated[Path, typer.Option("--out", help="CSV to write")],
) -> None:
    """Write complete ratings (one row per rater and image) as a CSV for --human-ratings / summary."""
    from lensbench.tools.gobench.ratings_db import RatingsDB
    from lensbench.runtime.folder import check_out_file

    if not db.is_file():
        _fail(f"{db}: not found")
    try:
        check_out_file(out)
    except LensbenchError as exc:
        _fail(str(exc))
    store = RatingsDB(db)
    try:
        n = store.export_csv(out)
    finally:
        store.close()
    _console.print(f"{n} rating rows -> {out}")


@gobench_app.command("summary")
def summary_cmd(
    ratings: Annotated[Optional[list[Path]], typer.Option("--ratings", help="ratings CSV/TSV or rate SQLite (repeat)")] = None,
    run: Annotated[Optional[list[Path]], typer.Option("--run", help="a 'lensbench run gobench' folder: MLLM-judge ratings (repeat)")] = None,
    generator_map: Annotated[Optional[str], typer.Option("--generator-map", help="names of release variants, e.g. '1=A,2=B,3=C'")] = None,
    data_dir: Annotated[Optional[Path], typer.Option("--data-dir", help="GOBench data folder (data_total.json): needed for a GOBench.tsv with numbered rows")] = None,
    format: Annotated[str, typer.Option("--format", help="md, csv or json")] = "md",
    with_paper: Annotated[bool, typer.Option("--with-paper", help="show the paper's Tables 1-2 beside ours")] = False,
) -> None:
    """Per-generator means (Table 2), PLCC/SRCC between dimensions (Table 1), Krippendorff's alpha."""
    from lensbench.tools.gobench.summary import load_sources, parse_generator_map, render_summary, summarize

    if not ratings and not run:
        _fail("give --ratings FILE and/or --run RUN_DIR")
    try:
        gmap = parse_generator_map(generator_map)
        recs = _records(data_dir) if data_dir is not None else None
        summ = summarize(load_sources(ratings or [], run or [], recs), gmap)
    except (ValueError, DataError, ConfigError) as exc:
        _fail(str(exc))
    if format == "json":
        sys.stdout.write(json.dumps(summ, indent=2) + "\n")
    elif format in ("md", "csv"):
        sys.stdout.write(render_summary(summ, format, with_paper))
    else:
        _fail(f"--format must be md, csv or json, got {format!r}")
