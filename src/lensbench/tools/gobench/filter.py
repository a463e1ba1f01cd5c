"""GOBench Gen-1K filtering before the rating page (paper Sec. 2.1: "we filter out some cases that
exhibit extremely poor generation quality and those that show excessive content similarity").

The paper filters by hand; this is an automatic first pass whose every decision is written down
(``filter.jsonl``) and whose survivors still go to the people on the rating page:

1. **Quality** (each image alone): unreadable or truncated files; a short side below
   ``min_side`` px; a flat image (grey-level standard deviation below ``min_std``, 0-255 scale:
   blank or washed-out); a blurry one (variance of the 4-neighbour Laplacian of the grey image,
   resized to at most 512 px on its long side, below ``min_sharpness``).
2. **Near-duplicates** (across every image of every generator, in input order, so the earlier
   ``--images`` folder wins): perceptual hash (``imagehash``: pHash by default) within
   ``max_distance`` bits of a kept image's, or, when an image embedder is given, cosine
   similarity at least ``min_similarity`` to a kept image's embedding.

**Unit** (``unit``): ``scenario`` (default) filters whole scenarios, as the release implies: GOBench-Gen-1k
holds 333 scenarios x 3 generators (999 images; every kept scenario has all three generations and the
scenario numbers run without gaps, so the 340 designed scenarios lost 7 whole, renumbered). A scenario
(``<category>/<N>``, the same file stem in every ``--images`` folder) is dropped whole when any
generator's image of it is missing or fails a quality rule, or is a near-duplicate of an image of an
earlier kept scenario (any generator; the generations of ONE scenario are meant to be alike and are not
compared with each other); its other images are logged as ``same scenario dropped`` with the image that
caused it (``cause``). So every generator keeps the same scenarios and the per-generator table (Tab. 2)
stays balanced. ``image`` is the earlier per-image rule (each image judged alone, across all images).

Kept images are linked (else copied) to ``OUT/<generator>/<category>/<file>``, the layout
``lensbench gobench rate --images OUT/<generator>`` and ``lensbench run gobench --layout scenario``
read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lensbench.core.errors import ConfigError, DataError
from lensbench.core.extras import require
from lensbench.core.files import link_or_copy
from lensbench.core.jsonl import dumps_line

__all__ = ["FilterSettings", "UNITS", "ImageCheck", "quality_metrics", "filter_generations", "HASHES"]

HASHES = ("phash", "dhash", "ahash", "whash")
_EXTS = {".png", ".jpg", ".jpeg", ".webp"}


@dataclass(frozen=True)
class FilterSettings:
    """Thresholds (module docstring): ``min_side`` px, ``min_std`` and ``min_sharpness`` on the
    0-255 grey scale, ``hash`` one of :data:`HASHES`, ``max_distance`` bits (of 64),
    ``embedder`` a spec (``simple`` | ``clip[...]`` | ``hf:ID``) or None, ``min_similarity`` in
    (0, 1], ``unit`` one of :data:`UNITS` (``scenario``: drop whole scenarios, module docstring)."""

    min_side: int = 256
    min_std: float = 8.0
    min_sharpness: float = 10.0
    hash: str = "phash"
    max_distance: int = 8
    embedder: str | None = None
    min_similarity: float = 0.95
    unit: str = "scenario"


UNITS = ("scenario", "image")


@dataclass
class ImageCheck:
    """One image's measurements and fate: ``kept``; ``reason`` (``unreadable``, ``too small``,
    ``flat``, ``blurry``, ``near-duplicate (hash)``, ``near-duplicate (embedding)``, and in the
    scenario unit ``scenario incomplete`` / ``same scenario dropped``) and ``duplicate_of`` (the kept
    image it repeats) when dropped; ``scenario`` = ``<category>/<file stem>``; ``cause`` = the image
    whose failure dropped the scenario (scenario unit)."""

    image: str
    generator: str
    scenario: str = ""
    width: int = 0
    height: int = 0
    std: float | None = None
    sharpness: float | None = None
    hash: str | None = None
    kept: bool = False
    reason: str | None = None
    duplicate_of: str | None = None
    distance: float | None = None
    cause: str | None = None


def quality_metrics(path: str | Path) -> tuple[int, int, float, float]:
    """``(width, height, grey std, Laplacian variance)`` of an image file (module docstring).
    Raises OSError / ValueError for an unreadable or truncated file."""
    from PIL import Image

    with Image.open(path) as im:
        im.load()
        w, h = im.size
        g = im.convert("L")
        if max(w, h) > 512:
            g.thumbnail((512, 512))
        a = np.asarray(g, dtype=np.float64)
    lap = a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] - 4 * a[1:-1, 1:-1]
    return w, h, float(a.std()), float(lap.var()) if lap.size else 0.0


def _hasher(name: str):
    imagehash = require("imagehash", "gobench", "the near-duplicate filter")
    if name not in HASHES:
        raise ConfigError(f"--hash must be one of {', '.join(HASHES)}, got {name!r}")
    return getattr(imagehash, name)


def _scan(folders: Sequence[Path]) -> list[tuple[str, Path, str]]:
    out, names = [], set()
    for f in folders:
        f = Path(f)
        if not f.is_dir():
            raise DataError(f, "--images is not a folder")
        gen = f.resolve().name
        if gen in names:
            raise ConfigError(f"two --images folders are named {gen!r}: the generator name must differ")
        names.add(gen)
        files = sorted(p for p in f.glob("*/*") if p.suffix.lower() in _EXTS and p.is_file())
        if not files:
            raise DataError(f, "no images (<category>/<file>.png) in this folder")
        out += [(gen, p, f"{gen}/{p.parent.name}/{p.name}") for p in files]
    return out


def _quality(c: ImageCheck, path: Path, hasher, s: FilterSettings) -> bool:
    """Measure one image into ``c`` (size, contrast, sharpness, perceptual hash); False with ``c.reason`` set when
    it is unreadable, too small, flat or blurry."""
    from PIL import Image

    try:
        c.width, c.height, c.std, c.sharpness = quality_metrics(path)
        with Image.open(path) as im:
            c.hash = str(hasher(im))
    except (OSError, ValueError, SyntaxError):
        c.reason = "unreadable"
        return False
    if min(c.width, c.height) < s.min_side:
        c.reason = "too small"
    elif c.std < s.min_std:
        c.reason = "flat"
    elif c.sharpness < s.min_sharpness:
        c.reason = "blurry"
    return c.reason is None


def _duplicate(i: int, j: int, good: list[tuple[ImageCheck, Path]], vecs, s: FilterSettings) -> bool:
    """Mark ``good[i]`` a near-duplicate of ``good[j]`` (hash within ``max_distance`` bits, or embedding cosine at
    least ``min_similarity``); True when it is one."""
    c, other = good[i][0], good[j][0]
    d = (int(c.hash, 16) ^ int(other.hash, 16)).bit_count()
    if d <= s.max_distance:
        c.reason, c.duplicate_of, c.distance = "near-duplicate (hash)", other.image, float(d)
        return True
    if vecs is not None:
        sim = float(np.dot(vecs[i], vecs[j]))
        if sim >= s.min_similarity:
            c.reason, c.duplicate_of, c.distance = "near-duplicate (embedding)", other.image, sim
            return True
    return False


def _drop_near_duplicates(good: list[tuple[ImageCheck, Path]], emb, s: FilterSettings) -> None:
    """Keep each image unless an earlier kept one is within ``max_distance`` bits of its hash or (with an embedder)
    at least ``min_similarity`` like it: ``kept`` set, or ``reason`` / ``duplicate_of`` / ``distance``."""
    vecs = emb.embed_images([p for _c, p in good]) if emb is not None and good else None
    kept_idx: list[int] = []
    for i, (c, _path) in enumerate(good):
        if not any(_duplicate(i, j, good, vecs, s) for j in kept_idx):
            c.kept = True
            kept_idx.append(i)


def _scenario_order(key: str) -> tuple[str, int, str]:
    cat, stem = key.rsplit("/", 1)
    return (cat, int(stem), "") if stem.isdigit() else (cat, 1 << 30, stem)


def _filter_scenarios(checks: list[ImageCheck], paths: list[Path], passed: list[bool], generators: list[str],
                      emb, s: FilterSettings) -> None:
    """The scenario unit (module docstring): a scenario is kept only when every generator has an image of it, all
    pass the quality rules and none repeats an image of an earlier kept scenario; else all its images are dropped."""
    by: dict[str, list[int]] = {}
    for i, c in enumerate(checks):
        by.setdefault(c.scenario, []).append(i)
    good_idx = [i for i in range(len(checks)) if passed[i]]
    vecs_all = emb.embed_images([paths[i] for i in good_idx]) if emb is not None and good_idx else None
    row = {i: k for k, i in enumerate(good_idx)}
    good = [(checks[i], paths[i]) for i in good_idx]
    kept_rows: list[int] = []
    for scen in sorted(by, key=_scenario_order):
        idx = by[scen]
        have = {checks[i].generator for i in idx}
        cause = next((checks[i].image for i in idx if not passed[i]), None)
        if cause is None and have == set(generators):
            cause = next((checks[i].image for i in idx
                          if any(_duplicate(row[i], j, good, vecs_all, s) for j in kept_rows)), None)
        if cause is None and have == set(generators):
            for i in idx:
                checks[i].kept = True
                kept_rows.append(row[i])
            continue
        for i in idx:
            if checks[i].reason is None:
                checks[i].reason, checks[i].cause = ("same scenario dropped", cause) if cause else \
                    (f"scenario incomplete (missing in {', '.join(g for g in generators if g not in have)})", None)


def filter_generations(folders: Sequence[Path], out: Path, s: FilterSettings = FilterSettings()
                       ) -> tuple[list[ImageCheck], dict[str, Any]]:
    """Filter the generators' folders into ``out`` (module docstring). Returns every image's
    :class:`ImageCheck` (input order) and the counts ``{"images", "kept", "dropped": {reason: n},
    "per_generator": {gen: kept}, "scenarios", "scenarios_kept", "settings"}``; writes
    ``out/filter.jsonl``. Raises DataError / ConfigError for a bad folder or setting before anything is
    written."""
    hasher = _hasher(s.hash)
    if s.unit not in UNITS:
        raise ConfigError(f"--unit must be one of {', '.join(UNITS)}, got {s.unit!r}")
    if not 0 < s.min_similarity <= 1:
        raise ConfigError(f"--min-similarity must be in (0, 1], got {s.min_similarity}")
    emb = None
    if s.embedder:
        from lensbench.tools.ivbench.synth import make_embedder  # the shared image/text embedders

        emb = make_embedder(s.embedder)
    todo = _scan(folders)
    out = Path(out)
    if (out / "filter.jsonl").exists():
        raise ConfigError(f"{out} already holds a filter result; choose a new --out")
    checks = [ImageCheck(image=key, generator=gen, scenario=f"{path.parent.name}/{path.stem}")
              for gen, path, key in todo]
    passed = [_quality(c, path, hasher, s) for c, (_gen, path, _key) in zip(checks, todo)]
    if s.unit == "scenario":
        _filter_scenarios(checks, [p for _g, p, _k in todo], passed, list(dict.fromkeys(g for g, _p, _k in todo)),
                          emb, s)
    else:
        _drop_near_duplicates([(c, t[1]) for c, t, ok in zip(checks, todo, passed) if ok], emb, s)
    out.mkdir(parents=True, exist_ok=True)
    for c, (_gen, path, _key) in zip(checks, todo):
        if c.kept:
            link_or_copy(path, out / c.image)
    with (out / "filter.jsonl").open("w", encoding="utf-8") as fh:
        for c in checks:
            fh.write(dumps_line(asdict(c)) + "\n")
    counts = {"images": len(checks), "kept": sum(c.kept for c in checks),
              "dropped": dict(sorted(Counter(c.reason for c in checks if not c.kept).items())),
              "per_generator": {g: sum(c.kept for c in checks if c.generator == g) for g in
                                dict.fromkeys(c.generator for c in checks)},
              "scenarios": len({c.scenario for c in checks}),
              "scenarios_kept": len({c.scenario for c in checks if c.kept}),
              "settings": asdict(s)}
    return checks, counts
