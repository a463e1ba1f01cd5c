"""GenViP training-data curation (IF-Bench paper Sec. 4.2), as a reproducible pipeline.

Steps, in the paper's order, each recording why a pair is dropped:

1. resolution: drop a pair whose infrared or RGB image has width or height < ``min_side`` (200 px);
2. brightness: drop a pair whose RGB image is too dark (mean grey level, 0-255, < ``min_brightness``);
3. edge agreement: Canny edges (OpenCV) of both images at a common size; keep pairs whose edge
   Dice coefficient 2|A∩B| / (|A| + |B|) >= ``min_dice`` (edges optionally dilated by
   ``edge_tolerance_px`` first, to allow for small misregistration). The paper does not publish
   its threshold: it is a required choice here, recorded in the manifest;
4. (optional) a VLM pair-quality check: a callable ``(ir_path, rgb_path) -> bool`` (e.g. built on
   the engine with the Sec. 4.2 Qwen2.5-VL-32B judge);
5. near-duplicates: infrared features compared with the benchmark's images; pairs closer than the
   embedder's threshold are dropped (data-leakage guard). Default embedder: a 64-bit DCT
   perceptual hash (Hamming distance <= ``dup_hamming``); a DINO-style embedder through
   transformers (cosine >= threshold) when its weights are available;
6. hierarchical k-means on RGB features (scikit-learn) and balanced sampling to ``target`` pairs
   (Vo et al. 2024, the paper's [26]): the budget is split evenly over top-level clusters, a
   cluster smaller than its share gives all it has and the rest is shared by the others,
   recursively down the hierarchy; sampling within a leaf is seeded.

Outputs: ``manifest.jsonl`` (one line per pair: paths, kept, reason, measurements, cluster) and
``summary.json`` (settings and counts per reason).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from lensbench.core.errors import ConfigError
from lensbench.tools.ifbench.genvip.editors import list_images
from lensbench.core.extras import require
from lensbench.core.jsonl import dumps_line

__all__ = ["find_pairs", "edge_dice", "mean_brightness", "phash", "hamming", "PHashEmbedder", "DinoEmbedder",
           "hierarchical_kmeans", "balanced_sample", "CurateSettings", "curate", "rgb_features"]

IR_NAMES = ("ir", "infrared", "thermal", "lwir")
RGB_NAMES = ("rgb", "visible", "vis")


def find_pairs(pairs_dir: Path) -> list[tuple[Path, Path]]:
    """(infrared, RGB) file pairs under ``pairs_dir``: subfolders ``ir|infrared|thermal|lwir`` and
    ``rgb|visible|vis``, matched by file stem, sorted. Raises ConfigError for a missing subfolder."""
    pairs_dir = Path(pairs_dir)
    ir = next((pairs_dir / n for n in IR_NAMES if (pairs_dir / n).is_dir()), None)
    rgb = next((pairs_dir / n for n in RGB_NAMES if (pairs_dir / n).is_dir()), None)
    if ir is None or rgb is None:
        raise ConfigError(f"{pairs_dir}: expected subfolders {'|'.join(IR_NAMES)} and {'|'.join(RGB_NAMES)}")
    rgb_by_stem = {p.stem: p for p in list_images(rgb)}
    return [(p, rgb_by_stem[p.stem]) for p in list_images(ir) if p.stem in rgb_by_stem]


def _gray(path: Path, max_side: int | None = None) -> np.ndarray:
    with Image.open(path) as im:
        g = im.convert("L")
        if max_side and max(g.size) > max_side:
            g.thumbnail((max_side, max_side), Image.Resampling.BILINEAR)
        return np.asarray(g, dtype=np.uint8)


def mean_brightness(path: Path) -> float:
    """Mean grey level (0-255) of an image (Pillow ``L`` conversion)."""
    return float(_gray(path, 512).mean())


def edge_dice(a: np.ndarray, b: np.ndarray, *, size: int = 256, low: int = 100, high: int = 200,
              tolerance_px: int = 0) -> float:
    """Dice coefficient (0-1) of the Canny edge maps of two grey images (uint8 HxW).

    Both are resized to ``size`` x ``size`` (area interpolation), Canny with thresholds
    ``low``/``high``; with ``tolerance_px`` > 0 each map is dilated by a square of that radius
    before the overlap. Two edge-free images give 0.0.
    """
    cv2 = require("cv2", "genvip", "GenViP curation")

    ea = cv2.Canny(cv2.resize(a, (size, size), interpolation=cv2.INTER_AREA), low, high) > 0
    eb = cv2.Canny(cv2.resize(b, (size, size), interpolation=cv2.INTER_AREA), low, high) > 0
    if tolerance_px > 0:
        k = np.ones((2 * tolerance_px + 1, 2 * tolerance_px + 1), np.uint8)
        ea = cv2.dilate(ea.astype(np.uint8), k) > 0
        eb = cv2.dilate(eb.astype(np.uint8), k) > 0
    s = int(ea.sum()) + int(eb.sum())
    return 0.0 if s == 0 else 2.0 * int((ea & eb).sum()) / s


def phash(path: Path) -> int:
    """64-bit DCT perceptual hash: grey 32x32, 2-D DCT (OpenCV), top-left 8x8 block vs its median."""
    cv2 = require("cv2", "genvip", "GenViP curation")

    g = np.asarray(Image.open(path).convert("L").resize((32, 32), Image.Resampling.LANCZOS), dtype=np.float32)
    d = cv2.dct(g)[:8, :8].flatten()
    bits = d > np.median(d[1:])
    return int("".join("1" if x else "0" for x in bits), 2)


def hamming(a: int, b: int) -> int:
    """Number of differing bits of two hashes."""
    return int(bin(a ^ b).count("1"))


class PHashEmbedder:
    """Near-duplicate test by perceptual hash: duplicate iff Hamming distance <= ``max_distance``."""

    name = "phash"

    def __init__(self, max_distance: int = 6):
        self.max_distance = max_distance
        self._ref: list[int] = []

    def fit(self, reference: Sequence[Path]) -> None:
        """Hash the reference (benchmark) images."""
        self._ref = [phash(p) for p in reference]

    def nearest(self, path: Path) -> tuple[float, bool]:
        """``(distance to the closest reference image, is_duplicate)``; (inf, False) without references."""
        if not self._ref:
            return float("inf"), False
        h = phash(path)
        d = min(hamming(h, r) for r in self._ref)
        return float(d), d <= self.max_distance


class DinoEmbedder:
    """DINO-style features via transformers (``AutoModel``, CLS token, L2-normalised); duplicate iff
    cosine >= ``min_cosine``. Needs torch + transformers and the weights locally (raises ConfigError)."""

    name = "dino"

    def __init__(self, model: str = "facebook/dinov2-small", min_cosine: float = 0.95):
        try:
            torch = require("torch", "hf", "--embedder dino")
            transformers = require("transformers", "hf", "--embedder dino")
            AutoImageProcessor, AutoModel = transformers.AutoImageProcessor, transformers.AutoModel
        except ImportError as exc:
            raise ConfigError(f"--embedder dino needs torch and transformers ({exc})") from None
        try:
            self.proc = AutoImageProcessor.from_pretrained(model)
            self.model = AutoModel.from_pretrained(model).eval()
        except Exception as exc:  # noqa: BLE001
            raise ConfigError(f"--embedder dino:{model}: weights not available ({type(exc).__name__}: {exc})") from None
        self.torch = torch
        self.min_cosine = min_cosine
        self._ref = None

    def _embed(self, paths: Sequence[Path]) -> np.ndarray:
        out = []
        with self.torch.no_grad():
            for p in paths:
                x = self.proc(images=Image.open(p).convert("RGB"), return_tensors="pt")
                v = self.model(**x).last_hidden_state[:, 0].numpy()[0]
                out.append(v / (np.linalg.norm(v) + 1e-12))
        return np.stack(out) if out else np.zeros((0, 1))

    def fit(self, reference: Sequence[Path]) -> None:
        """Embed the reference (benchmark) images."""
        self._ref = self._embed(reference)

    def nearest(self, path: Path) -> tuple[float, bool]:
        """``(highest cosine to a reference image, is_duplicate)``."""
        if self._ref is None or len(self._ref) == 0:
            return float("-inf"), False
        c = float((self._ref @ self._embed([path])[0]).max())
        return c, c >= self.min_cosine


def rgb_features(path: Path) -> np.ndarray:
    """Default clustering features of an RGB image (no weights needed): an 8x8 colour thumbnail
    (192 values) + a 16-bin-per-channel HSV histogram (48 values), each L2-normalised. Shape (240,)."""
    cv2 = require("cv2", "genvip", "GenViP curation")

    with Image.open(path) as im:
        rgb = np.asarray(im.convert("RGB").resize((8, 8), Image.Resampling.BOX), dtype=np.float32).flatten()
        hsv = cv2.cvtColor(np.asarray(im.convert("RGB").resize((64, 64))), cv2.COLOR_RGB2HSV)
    hist = np.concatenate([np.histogram(hsv[..., c], bins=16, range=(0, 256))[0] for c in range(3)]).astype(np.float32)
    return np.concatenate([rgb / (np.linalg.norm(rgb) + 1e-9), hist / (np.linalg.norm(hist) + 1e-9)])


def hierarchical_kmeans(x: np.ndarray, ks: Sequence[int], seed: int = 0) -> np.ndarray:
    """Labels (N x len(ks)) of hierarchical k-means: level 0 clusters all points into ``ks[0]``
    clusters, each later level splits every cluster of the previous level into up to ``ks[i]``
    (never more than its points). scikit-learn ``KMeans`` (n_init=10, seeded)."""
    KMeans = require("sklearn.cluster", "genvip", "GenViP clustering").KMeans

    n = len(x)
    labels = np.zeros((n, len(ks)), dtype=int)
    groups = [np.arange(n)]
    for lvl, k in enumerate(ks):
        new_groups = []
        for g in groups:
            kk = max(1, min(k, len(g)))
            lab = np.zeros(len(g), dtype=int) if kk == 1 else KMeans(n_clusters=kk, n_init=10, random_state=seed).fit_predict(x[g])
            for c in range(kk):
                idx = g[lab == c]
                if len(idx):
                    labels[idx, lvl] = len(new_groups)
                    new_groups.append(idx)
        groups = new_groups
    return labels


def balanced_sample(labels: np.ndarray, target: int, seed: int = 0) -> np.ndarray:
    """Indices of a balanced sample of ``min(target, N)`` points (sorted).

    ``labels``: N x L hierarchical labels (:func:`hierarchical_kmeans`). At each level the budget
    is split as evenly as possible over the child clusters; clusters smaller than their share
    give everything and the remainder is redistributed (water-filling); leaves are sampled
    uniformly with ``numpy.random.default_rng(seed)``.
    """
    rng = np.random.default_rng(seed)
    labels = np.asarray(labels).reshape(len(labels), -1)

    def rec(idx: np.ndarray, level: int, budget: int) -> list[int]:
        if budget >= len(idx):
            return list(idx)
        if level == labels.shape[1]:
            return list(rng.choice(idx, size=budget, replace=False))
        kids = [idx[labels[idx, level] == c] for c in np.unique(labels[idx, level])]
        kids.sort(key=len)
        out: list[int] = []
        left = budget
        for i, kid in enumerate(kids):
            share = left // (len(kids) - i)
            take = min(len(kid), share)
            out += rec(kid, level + 1, take)
            left -= take
        return out

    return np.array(sorted(rec(np.arange(len(labels)), 0, int(target))), dtype=int)


@dataclass
class CurateSettings:
    """Thresholds of the Sec. 4.2 pipeline (units: pixels, grey levels 0-255, Dice 0-1)."""

    target: int
    min_side: int = 200
    min_brightness: float = 30.0
    min_dice: float = 0.1
    edge_tolerance_px: int = 0
    edge_size: int = 256
    canny_low: int = 100
    canny_high: int = 200
    ks: tuple[int, ...] = (10, 5)
    seed: int = 0
    embedder: str = "phash"
    dup_hamming: int = 6
    extra: dict[str, Any] = field(default_factory=dict)


def _screen(row: dict[str, Any], ir: Path, rgb: Path, s: CurateSettings, embedder,
            vlm_check: Callable[[Path, Path], bool] | None) -> bool:
    """The per-pair filters of Sec. 4.2 in order (resolution, brightness, edge Dice, the optional VLM check, near
    duplicates of the benchmark's images), measurements written into ``row``; False with ``row["reason"]`` set
    for the first that fails (``unreadable`` for a file that cannot be read)."""
    try:
        with Image.open(ir) as a, Image.open(rgb) as b:
            row["ir_size"], row["rgb_size"] = list(a.size), list(b.size)
        if min(row["ir_size"] + row["rgb_size"]) < s.min_side:
            row["reason"] = "resolution"
            return False
        row["rgb_brightness"] = round(mean_brightness(rgb), 3)
        if row["rgb_brightness"] < s.min_brightness:
            row["reason"] = "too_dark"
            return False
        row["edge_dice"] = round(edge_dice(_gray(ir, 1024), _gray(rgb, 1024), size=s.edge_size, low=s.canny_low,
                                           high=s.canny_high, tolerance_px=s.edge_tolerance_px), 5)
        if row["edge_dice"] < s.min_dice:
            row["reason"] = "edge_dice"
            return False
        if vlm_check is not None and not vlm_check(ir, rgb):
            row["reason"] = "vlm_check"
            return False
        dist, dup = embedder.nearest(ir)
        row["dup_score"] = dist
        if dup:
            row["reason"] = "near_duplicate"
            return False
    except OSError as exc:
        row["reason"] = "unreadable"
        row["error"] = f"{type(exc).__name__}: {exc}"
        return False
    return True


def curate(pairs: Sequence[tuple[Path, Path]], benchmark_images: Sequence[Path], out: Path, s: CurateSettings, *,
           embedder=None, vlm_check: Callable[[Path, Path], bool] | None = None,
           features: Callable[[Path], np.ndarray] = rgb_features) -> dict[str, Any]:
    """Run the pipeline on ``pairs`` and write ``out/manifest.jsonl`` + ``out/summary.json``.

    Returns the summary: settings, ``counts`` per reason (``kept``, ``resolution``,
    ``too_dark``, ``edge_dice``, ``vlm_check``, ``near_duplicate``, ``not_sampled``,
    ``unreadable``) and ``kept`` (number of pairs kept, at most ``target``).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if embedder is None:
        embedder = PHashEmbedder(s.dup_hamming)
    embedder.fit(list(benchmark_images))
    rows: list[dict[str, Any]] = []
    survivors: list[int] = []
    for ir, rgb in pairs:
        row: dict[str, Any] = {"ir": str(ir), "rgb": str(rgb), "kept": False, "reason": None}
        rows.append(row)
        if _screen(row, ir, rgb, s, embedder, vlm_check):
            survivors.append(len(rows) - 1)
    if survivors:
        feats = np.stack([features(Path(rows[i]["rgb"])) for i in survivors])
        ks = tuple(k for k in s.ks if k > 0) or (1,)
        labels = hierarchical_kmeans(feats, ks, seed=s.seed)
        chosen = set(balanced_sample(labels, s.target, seed=s.seed).tolist())
        for j, i in enumerate(survivors):
            rows[i]["cluster"] = [int(x) for x in labels[j]]
            if j in chosen:
                rows[i]["kept"] = True
                rows[i]["reason"] = "kept"
            else:
                rows[i]["reason"] = "not_sampled"
    with (out / "manifest.jsonl").open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(dumps_line(r) + "\n")
    counts = Counter(r["reason"] for r in rows)
    summary = {"settings": {k: v for k, v in vars(s).items()}, "embedder": getattr(embedder, "name", "custom"),
               "pairs": len(rows), "kept": counts.get("kept", 0), "counts": dict(sorted(counts.items()))}
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=list), encoding="utf-8")
    return summary

