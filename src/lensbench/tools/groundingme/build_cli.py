"""``lensbench groundingme build`` (typer): the Sec. 3.2 construction pipeline up to the review.

Mounted on the ``groundingme`` group by :func:`register`; heavy parts (torch, transformers,
backends, engine) are imported inside the commands.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from lensbench.core.console import err_console, guard

__all__ = ["register", "open_session"]


def _say(msg: str) -> None:
    err_console.print(msg, highlight=False, markup=False)


def open_session(work: Path, model: str, base_url: list[str], api_key_env: str, concurrency: int, seed: int,
                 progress: bool = False):
    """The :class:`~lensbench.runtime.session.Session` of a work folder: backend ``model`` (a spec),
    store ``work/responses.sqlite``. Raises ConfigError for a bad spec."""
    from lensbench.backends.base import BackendConfig
    from lensbench.runtime.session import EndpointSettings, Session, build_backend

    backend = build_backend(EndpointSettings(spec=model, base_urls=base_url, api_key_env=api_key_env),
                            BackendConfig(seed=seed))
    return Session(work, {"model": backend}, concurrency=concurrency, progress=progress, seed=seed)


def build_cmd(
    work: Annotated[Path, typer.Option("--work", help="work folder (created; rerun to resume)")],
    model: Annotated[str, typer.Option("--model", help="image-aware model spec for tags, descriptions and negative "
                                                       "edits, e.g. openai:gemini-2.5-flash (paper: Gemini-2.5-Flash)")],
    images: Annotated[Optional[Path], typer.Option("--images", help="SA-1B-style image folder")] = None,
    boxes: Annotated[Optional[Path], typer.Option("--boxes", help="box file for --images (JSON/JSONL: image, bbox, "
                                                                  "label[, score]) instead of tagging + detection")] = None,
    small_boxes: Annotated[Optional[Path], typer.Option("--small-boxes", help="HR-Bench-style manual boxes (Small, "
                                                                              "described from crops)")] = None,
    small_images: Annotated[Optional[Path], typer.Option("--small-images", help="folder of --small-boxes' images "
                                                                                "(default: its folder)")] = None,
    detector: Annotated[Optional[str], typer.Option("--detector", help="GroundingDINO checkpoint (hub id or folder; "
                                                                       "needs lensbench[hf])")] = None,
    tagger: Annotated[str, typer.Option("--tagger", help="engine (the --model lists classes) | ram++")] = "engine",
    tagger_checkpoint: Annotated[Optional[str], typer.Option("--tagger-checkpoint", help="RAM++ .pth")] = None,
    box_threshold: Annotated[float, typer.Option("--box-threshold", help="GroundingDINO box score threshold")] = 0.35,
    class_name: Annotated[str, typer.Option("--class-name", help="word (of the best token, paper) | tag")] = "word",
    nms_iou: Annotated[float, typer.Option("--nms-iou", help="IoU above which the NMS drops a box")] = 0.5,
    device: Annotated[Optional[str], typer.Option("--device", help="torch device (default cuda if any)")] = None,
    min_class_instances: Annotated[int, typer.Option("--min-class-instances", help="paper: 3")] = 3,
    max_area_ratio: Annotated[float, typer.Option("--max-area-ratio", help="paper: 0.5")] = 0.5,
    preferred_min_instances: Annotated[int, typer.Option("--preferred-min-instances", help="paper: > 5")] = 6,
    dense_min_instances: Annotated[int, typer.Option("--dense-min-instances", help="paper: 8")] = 8,
    max_per_image: Annotated[int, typer.Option("--max-per-image", help="objects described per image")] = 3,
    rejection_share: Annotated[float, typer.Option("--rejection-share", help="share turned into Rejection "
                                                                             "(paper: 0.2)")] = 0.2,
    visual_check: Annotated[bool, typer.Option("--visual-check", help="--model is shown each negative's image and "
                                                                      "asked whether an object matches it; those it "
                                                                      "says match stay Discriminative")] = False,
    base_url: Annotated[Optional[list[str]], typer.Option("--base-url", help="endpoint(s) of --model")] = None,
    api_key_env: Annotated[str, typer.Option("--api-key-env", help="variable holding the API key")] = "OPENAI_API_KEY",
    concurrency: Annotated[int, typer.Option("--concurrency", help="requests in flight at most")] = 8,
    max_tokens: Annotated[Optional[int], typer.Option("--max-tokens", help="max new tokens per request")] = None,
    seed: Annotated[int, typer.Option("--seed", help="seed of every random choice")] = 0,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="progress display")] = False,
) -> None:
    """Boxes (tags + GroundingDINO + NMS), selection, descriptions and Rejection negatives (Sec. 3.2) into
    WORK/candidates.jsonl; next: 'groundingme review', then 'groundingme export'."""
    from lensbench.runtime.lock import RunLock
    from lensbench.tools.groundingme.build import BuildOptions, build
    from lensbench.tools.groundingme.select import SelectionRules

    try:
        opts = BuildOptions(images=images, boxes=boxes, small_boxes=small_boxes, small_images=small_images,
                            tagger=tagger, tagger_checkpoint=tagger_checkpoint, detector=detector,
                            box_threshold=box_threshold, class_name=class_name, nms_iou=nms_iou, device=device,
                            rules=SelectionRules(min_class_instances=min_class_instances, max_area_ratio=max_area_ratio,
                                                 preferred_min_instances=preferred_min_instances,
                                                 dense_min_instances=dense_min_instances),
                            max_per_image=max_per_image, rejection_share=rejection_share, visual_check=visual_check,
                            seed=seed,
                            max_tokens=max_tokens)
    except ValueError as exc:
        from lensbench.core.errors import ConfigError

        raise ConfigError(f"groundingme build: {exc}") from None
    work.mkdir(parents=True, exist_ok=True)

    async def main():
        async with open_session(work, model, base_url or [], api_key_env, concurrency, seed, progress) as s:
            return await build(opts, work, s.generate, model, _say)

    with RunLock(work):
        counts = asyncio.run(main())
    _say(json.dumps(counts, ensure_ascii=False))
    typer.echo(str(work / "candidates.jsonl"))
    failed = counts.get("n_error", 0) + counts.get("n_tag_error", 0)
    if failed:
        _say(f"{failed} request(s) failed (server or transport) and are left out; run the same command again to "
             "retry them (every stored reply is reused)")
        raise typer.Exit(3)


def register(app: typer.Typer) -> None:
    """Add ``build`` (and the review commands of :mod:`.review_cli`) to the ``groundingme`` group."""
    from lensbench.tools.groundingme.review_cli import register_review

    app.command("build")(guard(build_cmd))
    register_review(app)
