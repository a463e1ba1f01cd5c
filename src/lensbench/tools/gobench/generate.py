"""Text-to-image generation for GOBench's 333 scenario prompts (paper Sec. 2.1: each model makes one
image per scenario).

Generators (``--generator`` spec: ``folder:DIR`` | ``openai-images:MODEL`` | ``diffusers:MODEL_OR_PATH``)
live in :mod:`lensbench.backends.images.generators` (re-exported here).

Output: ``OUT/<category>/<N>.png`` per scenario (e.g. ``direct_light_images/1.png``) plus
``OUT/generation.jsonl`` (one line per image: scenario, prompt, generator, seconds). Existing
images are kept (resumable); failures are listed, not fatal.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from lensbench.core.jsonl import dumps_line
from lensbench.backends.images.generators import (DiffusersGenerator, FolderGenerator, GenerationError,
                                                  OpenAIImagesGenerator, TextToImage, make_generator)
from lensbench.benchmarks.gobench.records import GORecord

__all__ = ["GenerationError", "TextToImage", "FolderGenerator", "OpenAIImagesGenerator", "DiffusersGenerator",
           "make_generator", "scenarios", "generate_all", "GenerationReport"]


def scenarios(records: list[GORecord]) -> list[tuple[str, GORecord]]:
    """``(scenario key, first record of it)`` for each of the 333 scenarios, in file order."""
    seen: dict[str, GORecord] = {}
    for r in records:
        seen.setdefault(r.scenario, r)
    return list(seen.items())


@dataclass
class GenerationReport:
    """What :func:`generate_all` did: counts and ``(scenario, error)`` failures."""

    made: int = 0
    kept: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)


def generate_all(records: list[GORecord], out: Path, gen: TextToImage, *, limit: int | None = None,
                 log=None) -> GenerationReport:
    """One image per scenario into ``out/<category>/<N>.png`` (existing ones kept), logged to
    ``out/generation.jsonl``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rep = GenerationReport()
    todo = scenarios(records)[: limit or None]
    with (out / "generation.jsonl").open("a", encoding="utf-8") as fh:
        for key, rec in todo:
            dst = out / f"{key}.png"
            if dst.is_file():
                rep.kept += 1
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            tmp = dst.with_suffix(".tmp.png")
            t0 = time.time()
            try:
                gen.generate(rec.prompt, key, tmp)
                tmp.replace(dst)
            except GenerationError as exc:
                rep.failed.append((key, str(exc)))
                tmp.unlink(missing_ok=True)
                if log:
                    log(f"failed: {exc}")
                continue
            rep.made += 1
            fh.write(dumps_line({"scenario": key, "image": f"{key}.png", "prompt": rec.prompt, "generator": gen.name,
                                 "seconds": round(time.time() - t0, 3)}) + "\n")
            fh.flush()
    return rep
