"""``lensbench groundingme negatives`` (typer): build Sec. 5.3 rejection negatives and mix them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from lensbench.core.errors import ConfigError, LensbenchError
from lensbench.core.console import fail
from lensbench.core.flags import old_option, renamed
from lensbench.core.jsonl import dumps_line

__all__ = ["groundingme_app"]

groundingme_app = typer.Typer(help="GroundingME tools: build a GroundingME-style benchmark from your images (Sec. 3.2: "
                                   "build, review, export), build rejection negatives (Sec. 5.3). Boxes of a run: "
                                   "'lensbench show RUN_DIR --id ID'.", no_args_is_help=True)


def _fail(exc: Exception) -> None:
    fail(str(exc))


@groundingme_app.command("negatives")
def negatives_cmd(
    source: Annotated[Path, typer.Option("--source", help="RefCOCOg-style JSON / JSONL / parquet")],
    out: Annotated[Path, typer.Option("--out", help="output JSONL (mixture)")],
    model: Annotated[Optional[str], typer.Option("--model", help="editing LLM backend spec, e.g. openai:MODEL")] = None,
    ratio: Annotated[str, typer.Option("--ratio", help="NEG:POS (paper: 1:8, 1:4, 1:2, 1:1, 2:1)")] = "1:1",
    total: Annotated[Optional[int], typer.Option("--total", help="items in the mixture (default: max)")] = None,
    seed: Annotated[int, typer.Option("--seed", help="seed for attribute types and sampling")] = 0,
    base_url: Annotated[list[str], typer.Option("--base-url", help="endpoint(s) of the LLM")] = [],  # noqa: B006
    api_key_env: Annotated[str, typer.Option("--api-key-env", help="environment variable with the API key")] = "OPENAI_API_KEY",
    concurrency: Annotated[int, typer.Option("--concurrency", help="requests in flight at most")] = 8,
    pool: Annotated[bool, typer.Option("--pool", help="write every kept negative (no mixing with the positives): "
                                       "the negative pool of 'lensbench train groundingme mix'")] = False,
    visual_check: Annotated[Optional[str], typer.Option(
        "--visual-check", help="image-aware model spec that confirms each negative matches no object in its image "
        "(drops the ones it says match); needs items with an image path")] = None,
    visual_check_base_url: Annotated[list[str], typer.Option("--visual-check-base-url",
                                                             help="endpoint(s) of --visual-check")] = [],  # noqa: B006
    keep_unclear: Annotated[bool, typer.Option("--keep-unclear", help="keep negatives whose check gave no yes/no")] = False,
    llm_old: Annotated[Optional[str], old_option("--llm", "--model")] = None,
) -> None:
    """Edit descriptions into negatives (bbox null) and mix them with positives at NEG:POS (or, with
    --pool, write the negatives alone); --visual-check confirms them with an image-aware model."""
    from lensbench.backends.base import BackendConfig
    from lensbench.runtime.folder import check_out_file
    from lensbench.runtime.session import EndpointSettings, Session, build_backend
    from lensbench.tools.groundingme.negatives import build_negatives, mix_negatives, parse_ratio, read_refexp_source

    llm = renamed(model, llm_old, "--llm", "--model", required=True)
    try:
        check_out_file(out)
        parse_ratio(ratio)
        items = read_refexp_source(source)
        backend = build_backend(EndpointSettings(spec=llm, base_urls=base_url, api_key_env=api_key_env),
                                BackendConfig(seed=seed))
    except LensbenchError as exc:
        _fail(exc)

    async def main():  # replies cached in OUT.cache: a re-run sends only what is missing
        async with Session(out.with_name(out.name + ".cache"), {"model": backend}, concurrency=concurrency,
                           progress=False) as session:
            return await build_negatives(items, lambda reqs: session.generate(reqs, "negatives"), seed=seed)

    negs = asyncio.run(main())
    checked = ""
    if visual_check:
        negs, counts = _visual_check(negs, visual_check, visual_check_base_url, api_key_env, seed,
                                     out.with_name(out.name + ".vcheck"), concurrency, keep_unclear)
        checked = f"; visual check: {json.dumps(counts)}"
    positives = [{**it, "label": "positive"} for it in items]
    try:
        mix = negs if pool else mix_negatives(positives, negs, ratio, seed, total)
    except LensbenchError as exc:
        _fail(exc)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as fh:
        for it in mix:
            fh.write(dumps_line(it, default=str) + "\n")
    n_neg = sum(1 for it in mix if it.get("label") == "negative")
    typer.echo(f"{len(negs)}/{len(items)} descriptions edited{checked}; wrote {len(mix)} items "
               f"({n_neg} negatives, {len(mix) - n_neg} positives) to {out}")


def _visual_check(negs, spec: str, base_urls: list[str], api_key_env: str, seed: int, store: Path, concurrency: int,
                  keep_unclear: bool):
    """Run :func:`~lensbench.tools.groundingme.visual_check.visual_check` through a Session (cached in ``store``)."""
    from lensbench.backends.base import BackendConfig
    from lensbench.runtime.session import EndpointSettings, Session, build_backend
    from lensbench.tools.groundingme.visual_check import visual_check

    missing = [n.get("id") for n in negs if not n.get("image") or not Path(str(n["image"])).is_file()]
    if missing:
        _fail(ConfigError(f"--visual-check needs each item's image file; {len(missing)} negative(s) have none "
                          f"(first: {missing[0]!r}); give grounding items ('lensbench train groundingme data')"))
    try:
        backend = build_backend(EndpointSettings(spec=spec, base_urls=base_urls, api_key_env=api_key_env),
                                BackendConfig(seed=seed))
    except LensbenchError as exc:
        _fail(exc)

    async def run():
        async with Session(store, {"model": backend}, concurrency=concurrency, progress=False, seed=seed) as session:
            return await visual_check(negs, session.generate, keep_unclear=keep_unclear)

    return asyncio.run(run())


def _mount_construction() -> None:
    from lensbench.tools.groundingme.build_cli import register

    register(groundingme_app)


_mount_construction()
