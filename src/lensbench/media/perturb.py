"""Input perturbations: named, seeded run options that change what a benchmark sends (issue 34, part 3).

A perturbation is given as ``--perturb KIND:NAME`` on the benchmarks that take it (``docs/perturbations.md``):

* ``palette:gray`` | ``palette:iron`` | ``palette:inverted`` -- a thermal image is re-coloured: converted to
  luminance (Pillow's ``convert("L")``: ITU-R 601-2 ``L = R*299/1000 + G*587/1000 + B*114/1000``, rounded; in
  Pillow's fixed point ``(R*19595 + G*38470 + B*7471 + 32768) >> 16``), then mapped
  through a 256-entry colour table (:data:`PALETTES`): ``gray`` = (L, L, L); ``inverted`` = (255-L, 255-L, 255-L);
  ``iron`` = the piecewise-linear "ironbow" table through :data:`IRON_ANCHORS` (black, indigo, magenta, red,
  amber, white), each channel ``round(np.interp(L, positions, channel))``. The result is a lossless PNG, cached
  by (source file's SHA-256, perturbation) so each image is made once (:func:`perturbed_image`).
* ``frames:shuffle`` -- the sampled video frames are sent in a seeded random order (each frame keeps its
  timestamp); ``frames:drop=F`` (0 < F < 1) -- ``floor(F*N + 0.5)`` of the N frames (at most N-1) are left out,
  chosen by a seeded draw; the rest keep time order (:func:`frame_order`).
* ``options:shuffle`` -- the answer options are re-ordered by a seeded permutation beyond the protocol's own
  (IF-Bench: one outside the circular set, :func:`non_circular_permutation`; IV-Bench: a second shuffle seed).

Every draw is seeded by :func:`item_seed` (the run seed, the perturbation and the item), so a perturbed run is
deterministic and its twin run under the same seed perturbs the same items the same way.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import os
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from lensbench.core.types import file_sha256

__all__ = ["KNOWN", "IRON_ANCHORS", "PALETTES", "Perturbation", "parse_perturbation", "check_perturbation",
           "item_seed", "cache_folder", "palette_lut", "apply_palette", "perturbed_image", "frame_order",
           "non_circular_permutation", "permuted"]

#: Every perturbation spelling accepted (``F`` a fraction, 0 < F < 1).
KNOWN = ("palette:gray", "palette:iron", "palette:inverted", "frames:shuffle", "frames:drop=F", "options:shuffle")

#: The "iron" (ironbow) colour table: ``(luminance 0-255, (R, G, B))`` anchors, linearly interpolated between.
IRON_ANCHORS: tuple[tuple[int, tuple[int, int, int]], ...] = (
    (0, (0, 0, 0)), (51, (64, 0, 160)), (102, (176, 0, 144)), (153, (240, 64, 16)), (204, (255, 176, 0)),
    (255, (255, 255, 255)))

PALETTES = ("gray", "iron", "inverted")


@dataclass(frozen=True)
class Perturbation:
    """One perturbation: ``kind`` (``palette`` | ``frames`` | ``options``), ``name`` (``gray`` | ``iron`` |
    ``inverted`` | ``shuffle`` | ``drop``) and, for ``drop``, ``fraction`` (0 < F < 1)."""

    kind: str
    name: str
    fraction: float | None = None

    @property
    def label(self) -> str:
        """The canonical spelling (``"frames:drop=0.25"``), as recorded in the run and shown on every surface."""
        return f"{self.kind}:{self.name}" + (f"={self.fraction:g}" if self.fraction is not None else "")


def parse_perturbation(text: str) -> Perturbation:
    """``"palette:iron"`` -> :class:`Perturbation`. Raises ValueError naming the known ones for anything else
    (an unknown name, a drop fraction outside (0, 1))."""
    known = f"known: {', '.join(KNOWN)}"
    s = str(text).strip().lower()
    kind, _, name = s.partition(":")
    if kind == "palette" and name in PALETTES:
        return Perturbation(kind, name)
    if s in ("frames:shuffle", "options:shuffle"):
        return Perturbation(kind, name)
    if kind == "frames" and name.startswith("drop="):
        try:
            f = float(name[5:])
        except ValueError:
            raise ValueError(f"frames:drop=F needs a fraction F, got {name[5:]!r}") from None
        if not 0 < f < 1:
            raise ValueError(f"frames:drop=F needs 0 < F < 1, got {f:g}")
        return Perturbation(kind, "drop", f)
    raise ValueError(f"unknown perturbation {text!r} ({known})")


def check_perturbation(text: str | None, allowed: dict[str, str], bench: str) -> str | None:
    """The canonical label of ``text`` (None stays None) when its kind is one ``bench`` takes.

    ``allowed``: ``{kind: ""}`` for kinds the benchmark applies, ``{kind: reason}`` for those it refuses (the
    reason is the message, e.g. "yes/no questions have no options to shuffle"); kinds not named are refused
    with a generic message. Raises ValueError (one line) for an unknown or refused perturbation."""
    if text is None or str(text).strip() == "":
        return None
    p = parse_perturbation(text)
    why = allowed.get(p.kind, f"{bench} has no {p.kind} to perturb")
    if why:
        takes = ", ".join(k for k in KNOWN if not allowed.get(k.split(":")[0], "x")) or "none"
        raise ValueError(f"{p.label} does not apply to {bench}: {why} (it takes: {takes})")
    return p.label


def item_seed(seed: int, perturbation: str, key: str) -> int:
    """The seed of one item's draw: first 8 bytes of SHA-256(``"{seed}|{perturbation}|{key}"``), big endian."""
    return int.from_bytes(hashlib.sha256(f"{seed}|{perturbation}|{key}".encode()).digest()[:8], "big")


def palette_lut(name: str) -> np.ndarray:
    """The ``(256, 3)`` uint8 colour table of palette ``name`` (module docstring). Raises ValueError for another."""
    x = np.arange(256, dtype=float)
    if name == "gray":
        g = x
    elif name == "inverted":
        g = 255.0 - x
    elif name == "iron":
        pos = [a for a, _ in IRON_ANCHORS]
        return np.stack([np.rint(np.interp(x, pos, [c[ch] for _, c in IRON_ANCHORS])) for ch in range(3)],
                        axis=1).astype(np.uint8)
    else:
        raise ValueError(f"unknown palette {name!r} (known: {', '.join(PALETTES)})")
    return np.repeat(g[:, None], 3, axis=1).astype(np.uint8)


def apply_palette(image: Image.Image, name: str) -> Image.Image:
    """``image`` (any Pillow mode) as luminance mapped through :func:`palette_lut` (an RGB image, same size)."""
    lum = np.asarray(image.convert("L"))
    return Image.fromarray(palette_lut(name)[lum], mode="RGB")


def perturbed_image(path: str | Path, perturbation: Perturbation | str, cache_dir: str | Path) -> Path:
    """The palette-mapped copy of image ``path``: ``cache_dir/<source sha256[:20]>-<palette>.png``, made once
    (written to a temporary name, then renamed: concurrent runs never see half a file).

    Raises ValueError for a perturbation that is not a palette, OSError for an unreadable image."""
    p = parse_perturbation(perturbation) if isinstance(perturbation, str) else perturbation
    if p.kind != "palette":
        raise ValueError(f"{p.label} does not change images")
    out = Path(cache_dir) / f"{file_sha256(path)[:20]}-{p.name}.png"
    if out.is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with Image.open(path) as im:
        mapped = apply_palette(im, p.name)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    mapped.save(tmp, format="PNG")
    os.replace(tmp, out)
    return out


def cache_folder(media_dir: str | Path | None) -> Path:
    """Where perturbed images are cached: ``media_dir/perturbed`` (a run's ``RUN/media``), or
    ``<tmp>/lensbench-media/perturbed`` when a benchmark expands requests outside a run."""
    import tempfile

    base = Path(media_dir) if media_dir is not None else Path(tempfile.gettempdir()) / "lensbench-media"
    return base / "perturbed"


def frame_order(n: int, perturbation: Perturbation | str, seed: int) -> list[int]:
    """The indices (into N frames in time order) of the frames sent, in sending order.

    ``frames:shuffle``: a ``random.Random(seed).shuffle`` permutation of ``range(n)``; ``frames:drop=F``:
    ``range(n)`` less ``min(n - 1, floor(F*n + 0.5))`` indices drawn by ``random.Random(seed).sample`` (kept in
    time order). Raises ValueError for a perturbation that is not a frames one."""
    p = parse_perturbation(perturbation) if isinstance(perturbation, str) else perturbation
    rng = random.Random(seed)
    if p.kind == "frames" and p.name == "shuffle":
        order = list(range(n))
        rng.shuffle(order)
        return order
    if p.kind == "frames" and p.name == "drop" and p.fraction is not None:
        k = min(max(n - 1, 0), math.floor(p.fraction * n + 0.5))
        dropped = set(rng.sample(range(n), k))
        return [i for i in range(n) if i not in dropped]
    raise ValueError(f"{p.label} does not change frames")


def non_circular_permutation(n: int, seed: int) -> tuple[int, ...]:
    """A seeded permutation of ``range(n)`` that is no cyclic shift (none of circular evaluation's rotations):
    position j of the new list holds old option ``perm[j]``. Chosen by ``random.Random(seed).choice`` among
    the ``n! - n`` such permutations in lexicographic order. Raises ValueError for ``n < 3`` (every
    permutation of two options is a rotation)."""
    if n < 3:
        raise ValueError(f"every order of {n} options is a rotation")
    rotations = {tuple((j - i) % n for j in range(n)) for i in range(n)}
    return random.Random(seed).choice([p for p in itertools.permutations(range(n)) if p not in rotations])


def permuted(items: Sequence, perm: Sequence[int]) -> list:
    """``[items[perm[0]], items[perm[1]], ...]``."""
    return [items[j] for j in perm]
