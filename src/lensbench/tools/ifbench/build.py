"""``lensbench ifbench build``: images -> candidate questions in the release layout (paper Sec. 3.2).

Steps: collect and filter the images (:mod:`.collect`), one Fig. 14 request per image through
lensbench's engine (:class:`~lensbench.runtime.session.Session`: the store is
``OUT/generation/responses.sqlite``, so a re-run, also after a kill, sends only what is missing),
check every generated question against the release schema (:mod:`.generate`), balance the right
letters and write ``OUT/if_bench.json`` with ``OUT/infrared_imgs/`` (:mod:`.release`). Also
written: ``OUT/build.json`` (settings and every count) and ``OUT/rejected.jsonl`` (each refused
question or reply with its reason). One process owns ``OUT`` at a time.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lensbench.backends.base import BackendConfig
from lensbench.benchmarks.ifbench.data import DIMENSIONS
from lensbench.core.errors import ConfigError
from lensbench.core.jsonl import dumps_line
from lensbench.core.types import GenParams
from lensbench.runtime.lock import RunLock
from lensbench.runtime.session import EndpointSettings, Session, build_backend
from lensbench.tools.ifbench.collect import collect_images
from lensbench.tools.ifbench.generate import SourceImage, generation_request, parse_reply, pos_info
from lensbench.tools.ifbench.release import balance_letters, image_name, letter_counts, place_image, write_release

__all__ = ["BuildSettings", "BuildReport", "build"]

MANIFEST = "build.json"


@dataclass
class BuildSettings:
    """What ``build`` does: the images folder, the model endpoint, filters and generation settings."""

    images: Path
    out: Path
    endpoint: EndpointSettings
    annotations: Path | None = None
    min_side: int = 200
    per_dataset: int | None = None
    seed: int = 0
    limit: int | None = None
    concurrency: int = 8
    temperature: float = 0.0
    max_tokens: int | None = None
    progress: bool = False


@dataclass
class BuildReport:
    """Counts of one build (all written to ``build.json``)."""

    images: dict[str, int] = field(default_factory=dict)
    requests: int = 0
    sent: int = 0
    cached: int = 0
    transport_errors: list[str] = field(default_factory=list)
    questions: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    letters: dict[str, int] = field(default_factory=dict)
    per_dimension: dict[str, int] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """Every image got a reply (no transport error left)."""
        return not self.transport_errors


def _check_out(out: Path) -> None:
    if (out / "if_bench.json").exists() and not (out / MANIFEST).is_file():
        raise ConfigError(f"{out} holds an if_bench.json that 'lensbench ifbench build' did not write; "
                          "choose another --out (it is never overwritten)")


def _records(img: SourceImage, name: str, questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    base: dict[str, Any] = {"dataset": img.dataset, "dst_thermal_path": name}
    if img.targets:
        base["pos_info"] = ", ".join(pos_info(t) for t in img.targets)
    return [{**base, "question": q} for q in questions]


def build(s: BuildSettings) -> BuildReport:
    """Run the pipeline (module docstring). Raises DataError / ConfigError before any request for
    bad images, annotations, settings or an ``OUT`` that is not a build folder."""
    out = Path(s.out)
    _check_out(out)
    out.mkdir(parents=True, exist_ok=True)
    with RunLock(out):
        col = collect_images(s.images, min_side=s.min_side, per_dataset=s.per_dataset, seed=s.seed,
                             annotations=s.annotations)
        imgs = col.images[: s.limit] if s.limit is not None else col.images
        rep = BuildReport(images={"found": col.found, "sampled": col.sampled, "unreadable": col.unreadable,
                                  "too_small": col.too_small, "kept": col.kept, "asked": len(imgs)})
        params = GenParams(temperature=s.temperature, max_tokens=s.max_tokens)
        reqs = [generation_request(img, s.seed, params) for img in imgs]
        rep.requests = len(reqs)
        backend = build_backend(s.endpoint, BackendConfig(seed=s.seed))

        async def send():
            async with Session(out / "generation", {"model": backend}, concurrency=s.concurrency,
                               progress=s.progress, seed=s.seed) as session:
                got = await session.generate(reqs, "generation")
                return got, session.engine.stats

        replies, stats = asyncio.run(send())
        rep.cached, rep.sent = stats.cached, stats.sent
        by_dim: dict[str, list[dict[str, Any]]] = {}
        rejected: Counter[str] = Counter()
        with (out / "rejected.jsonl").open("w", encoding="utf-8") as rej:
            for img, req in zip(imgs, reqs):
                r = replies[req.id]
                if not r.ok:
                    rep.transport_errors.append(img.key)
                    continue
                checked = parse_reply(r.text, req.meta["dimensions"])
                for reason, detail in checked.rejected:
                    rejected[reason] += 1
                    rej.write(dumps_line({"image": img.key, "reason": reason, "detail": detail},
                                         ensure_ascii=False) + "\n")
                if checked.valid:
                    name = image_name(img.path)
                    place_image(img.path, out / "infrared_imgs", name)
                    for rec in _records(img, name, checked.valid):
                        by_dim.setdefault(rec["question"]["dimension"], []).append(rec)
        balanced = balance_letters({d: by_dim[d] for d in DIMENSIONS if d in by_dim}, s.seed)
        write_release(out, balanced)
        rep.questions = sum(len(v) for v in balanced.values())
        rep.rejected = dict(sorted(rejected.items()))
        rep.letters = letter_counts(balanced)
        rep.per_dimension = {d: len(v) for d, v in balanced.items()}
        manifest = {"settings": {"images": str(s.images), "annotations": str(s.annotations) if s.annotations else None,
                                 "model": s.endpoint.spec, "min_side": s.min_side, "per_dataset": s.per_dataset,
                                 "seed": s.seed, "limit": s.limit, "temperature": s.temperature,
                                 "max_tokens": s.max_tokens, "prompt": "Fig. 14 (prompts/generation.txt)"},
                    "report": {**rep.__dict__, "complete": rep.complete}}
        tmp = out / (MANIFEST + ".tmp")
        tmp.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        tmp.replace(out / MANIFEST)
    return rep
