"""``lensbench ivbench``: IV-Bench side tools: fetch the YouTube videos, synthesize IV-Bench-style data.

Commands import their heavy parts (yt-dlp, backends, engine, frame cache) inside the function.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from lensbench.benchmarks.ivbench.data import TASK_ABBREV, TASKS
from lensbench.core.errors import ConfigError
from lensbench.core.console import fail
from lensbench.core.flags import old_option, renamed

__all__ = ["ivbench_app"]

ivbench_app = typer.Typer(help="IV-Bench tools: fetch videos, synthesize IV-Bench-style data (Sec. 4.4).",
                          no_args_is_help=True)


@ivbench_app.command("download")
def download_cmd(
    ids: Path = typer.Option(..., "--ids", help="video ids, one per line (dataset/test_video_ids.txt) or the jsonl"),
    out: Path = typer.Option(..., "--out", help="folder for <video_id>.mp4 (the run's DATA/videos)"),
    max_height: int = typer.Option(720, "--max-height", help="highest video resolution to fetch (px)"),
) -> None:
    """Download the YouTube videos with yt-dlp (the optional 'video' extra of lensbench); offline: a clear error."""
    from lensbench.core.errors import LensbenchError
    from lensbench.tools.ivbench.download import download_videos, read_ids

    try:
        res = download_videos(read_ids(ids), out, max_height=max_height)
    except LensbenchError as exc:
        fail(str(exc))
    typer.echo(f"downloaded {len(res['ok'])}, already present {len(res['skipped'])}, failed {len(res['failed'])}")
    if res["failed"]:
        typer.echo("failed: " + " ".join(res["failed"]), err=True)
        raise typer.Exit(3)


@ivbench_app.command("synthesize")
def synthesize_cmd(
    videoqa: Path = typer.Option(..., "--videoqa", help="video-QA jsonl: video_id, question, answer[, distractors]"),
    videos: Path = typer.Option(..., "--videos", help="folder of <video_id>.mp4"),
    model: Optional[str] = typer.Option(None, "--model", help="rewrite model spec (openai:NAME, replay:..., ...)"),
    out: Path = typer.Option(..., "--out", help="output IV-Bench jsonl (images/ written beside it)"),
    judge_model: Optional[str] = typer.Option(None, "--judge-model",
                                              help="image-necessity judge spec (default: --model)"),
    embedder: str = typer.Option("simple", "--embedder", help="simple | clip[:ARCH[:PRETRAINED]] | hf:MODEL_ID"),
    base_url: Optional[list[str]] = typer.Option(None, "--base-url", help="endpoint(s) of --model"),
    judge_base_url: Optional[list[str]] = typer.Option(None, "--judge-base-url", help="endpoint(s) of --judge-model"),
    frames: int = typer.Option(16, "--frames", help="candidate frames per video for the image"),
    question_type: str = typer.Option("Details Event", "--question-type",
                                      help="task label for items without question_type (one of the 13)"),
    work: Optional[Path] = typer.Option(None, "--work", help="resumable work folder (default OUT.work)"),
    concurrency: int = typer.Option(8, "--concurrency", help="requests in flight"),
    llm_old: Annotated[Optional[str], old_option("--llm", "--model")] = None,
    judge_old: Annotated[Optional[str], old_option("--judge", "--judge-model")] = None,
) -> None:
    """Rewrite entity mentions (LLM), drop items answerable without the image (judge), pick the image frame."""
    from lensbench.backends.base import BackendConfig
    from lensbench.backends.providers import make_backend
    from lensbench.runtime.session import Session
    from lensbench.core.errors import LensbenchError
    from lensbench.media.frame_cache import FrameCache
    from lensbench.tools.ivbench.synth import load_videoqa, make_embedder, synthesize
    from lensbench.runtime.folder import check_out_file

    llm = renamed(model, llm_old, "--llm", "--model", required=True)
    judge = renamed(judge_model, judge_old, "--judge", "--judge-model")
    work = work or out.with_suffix(".work")
    try:
        check_out_file(out)
        if question_type not in TASK_ABBREV:
            raise ConfigError(f"--question-type {question_type!r}: use one of {', '.join(TASKS)}")
        items = load_videoqa(videoqa)
        emb = make_embedder(embedder)
        backends = {"model": make_backend(llm, BackendConfig(base_urls=base_url or [])),
                    "judge": make_backend(judge or llm, BackendConfig(base_urls=judge_base_url or base_url or []))}
        work.mkdir(parents=True, exist_ok=True)

        async def main():  # replies cached in the work folder: a re-run sends only what is missing
            async with Session(work, backends, concurrency=concurrency, progress=False) as session:
                return await synthesize(items, videos, out, session.generate, emb, FrameCache(work / "frames"),
                                        frames=frames, default_question_type=question_type)

        counts = asyncio.run(main())
    except LensbenchError as exc:
        fail(str(exc))
    typer.echo(json.dumps(counts))
