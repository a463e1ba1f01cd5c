"""Bounding boxes: reading them from model replies, IoU, and coordinate conventions.

Shared by grounding benchmarks (GroundingME today). A box is ``(x1, y1, x2, y2)`` in
continuous pixel coordinates of one image (no ``+1`` convention), floats.

Coordinate conventions (:data:`BBOX_FORMATS`, what a model writes):

* ``abs``: pixels of the image the model received;
* ``abs-resized``: pixels of that image after Qwen2.5-VL's ``smart_resize`` (:func:`smart_resize`);
* ``rel1000``: x, y in 0..1000 (Qwen3-VL); ``rel1``: x, y in 0..1;
* ``yxyx1000``: Gemini's ``[y1, x1, y2, x2]`` in 0..1000.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any, Literal, get_args

from lensbench.core.errors import ConfigError

__all__ = ["Box", "BboxFormat", "BBOX_FORMATS", "find_key_boxes", "box_from_value", "iou", "center_in_box", "smart_resize",
           "to_original_pixels", "from_original_pixels", "scale_box"]

Box = tuple[float, float, float, float]

#: Coordinate conventions understood by :func:`to_original_pixels` (see the module docstring).
#: a model's box convention (the type of a ``--bbox-format`` option)
BboxFormat = Literal["abs", "abs-resized", "rel1000", "rel1", "yxyx1000"]
BBOX_FORMATS: tuple[str, ...] = get_args(BboxFormat)

_NUM = r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_NUMERIC_LIST = re.compile(r"[\s\[\]\(\),\"']*(?:" + _NUM + r"[\s\[\]\(\),\"']*)*")


def _value_after_key(text: str, start: int) -> tuple[bool, Any]:
    """``(ok, value)`` of the value starting at ``text[start:]``: ``null``/``None`` (value None)
    or a bracketed (nested) list of numbers, read as JSON or, failing that, as a purely numeric
    list (quoted numbers, parentheses). Anything else: ``(False, None)``."""
    s = text[start:].lstrip()
    if re.match(r"(null|None|none|NULL)\b", s):
        return True, None
    if not s.startswith("["):
        return False, None
    depth = 0
    for i, c in enumerate(s):
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                chunk = s[: i + 1]
                try:
                    return True, json.loads(chunk)
                except json.JSONDecodeError:
                    if _NUMERIC_LIST.fullmatch(chunk):
                        return True, [float(x) for x in re.findall(_NUM, chunk)]
                    return False, None
    return False, None


def box_from_value(value: Any) -> tuple[bool, Box | None]:
    """``(ok, box)`` for a box value: None (``ok``, no box), 4 finite numbers (or numeric
    strings), or one nested list of 4. Anything else: ``(False, None)``."""
    if value is None:
        return True, None
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], list):
        value = value[0]
    if isinstance(value, list) and len(value) == 4:
        try:
            vals = [float(v) for v in value]
        except (TypeError, ValueError):
            return False, None
        if all(math.isfinite(v) for v in vals):
            return True, (vals[0], vals[1], vals[2], vals[3])
    return False, None


def find_key_boxes(text: str, key: str = "bbox_2d") -> list[Box | None]:
    """Every well-formed value of ``key`` in ``text``, in order: a box or None (for ``null``).

    The key may be double-, single- or un-quoted and followed by ``:`` or ``=``; values that are
    not null and not 4 numbers are skipped. Never evaluates the text.
    """
    found: list[Box | None] = []
    pattern = re.compile(r"""["']?""" + re.escape(key) + r"""["']?\s*[:=]\s*""")
    for m in pattern.finditer(text):
        ok, value = _value_after_key(text, m.end())
        if not ok:
            continue
        ok, box = box_from_value(value)
        if ok:
            found.append(box)
    return found


def iou(a: Sequence[float] | None, b: Sequence[float] | None) -> float:
    """Intersection over union of two (x1, y1, x2, y2) boxes in the same frame, in [0, 1].

    Continuous coordinates (no +1); a side with x2 < x1 has zero extent. A missing box or a
    zero-area union gives 0.
    """
    if a is None or b is None:
        return 0.0
    iw = min(a[2], b[2]) - max(a[0], b[0])
    ih = min(a[3], b[3]) - max(a[1], b[1])
    inter = max(0.0, iw) * max(0.0, ih)
    area_a = max(0.0, a[2] - a[0]) * max(0.0, a[3] - a[1])
    area_b = max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])
    union = area_a + area_b - inter
    return inter / union if union > 0 else 0.0


def center_in_box(gt: Sequence[float], pred: Sequence[float]) -> bool:
    """Whether the centre of ``pred`` lies in ``gt`` (borders included), the ``Center_ACC``
    criterion of lmms-eval's grounding tasks (``compute_center_accuracy``)."""
    cx = (pred[0] + pred[2]) / 2
    cy = (pred[1] + pred[3]) / 2
    return gt[0] <= cx <= gt[2] and gt[1] <= cy <= gt[3]


def smart_resize(height: int, width: int, factor: int = 28, min_pixels: int = 4 * 28 * 28,
                 max_pixels: int = 16384 * 28 * 28) -> tuple[int, int]:
    """Qwen2.5-VL's ``smart_resize`` (qwen-vl-utils ``vision_process.py``; HF Qwen2VLImageProcessor).

    Both sides rounded to multiples of ``factor`` (Python ``round``, half to even, at least
    ``factor``), then scaled down (floor) / up (ceil) so that ``min_pixels <= h*w <= max_pixels``.
    Defaults = Qwen2.5-VL's released preprocessor config (3,136 .. 12,845,056 px).
    Returns ``(h, w)`` in pixels. Raises ValueError for an aspect ratio above 200.
    """
    if max(height, width) / min(height, width) > 200:
        raise ValueError(f"aspect ratio must be <= 200, got {max(height, width) / min(height, width):.1f}")
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def scale_box(box: Sequence[float], sx: float, sy: float) -> Box:
    """``(x1*sx, y1*sy, x2*sx, y2*sy)``."""
    return (box[0] * sx, box[1] * sy, box[2] * sx, box[3] * sy)


def to_original_pixels(box: Sequence[float], fmt: str, *, sent_size: tuple[int, int], orig_size: tuple[int, int],
                       resize: dict[str, int] | None = None) -> Box:
    """Map a box written in convention ``fmt`` (:data:`BBOX_FORMATS`) to (x1, y1, x2, y2) in
    original pixels.

    ``sent_size`` / ``orig_size``: (w, h) in pixels of the image sent / of the original (the
    frame of the ground truth). ``resize``: ``factor``, ``min_pixels``, ``max_pixels`` of
    :func:`smart_resize` for ``abs-resized``. Raises ConfigError for an unknown format.
    """
    x1, y1, x2, y2 = (float(v) for v in box)
    ow, oh = orig_size
    if fmt == "abs":
        sx, sy = ow / sent_size[0], oh / sent_size[1]
    elif fmt == "abs-resized":
        rh, rw = smart_resize(sent_size[1], sent_size[0], **(resize or {}))
        sx, sy = ow / rw, oh / rh
    elif fmt == "rel1000":
        sx, sy = ow / 1000.0, oh / 1000.0
    elif fmt == "rel1":
        sx, sy = float(ow), float(oh)
    elif fmt == "yxyx1000":
        x1, y1, x2, y2 = y1, x1, y2, x2
        sx, sy = ow / 1000.0, oh / 1000.0
    else:
        raise ConfigError(f"unknown bbox format {fmt!r}; known: {', '.join(BBOX_FORMATS)}")
    return (x1 * sx, y1 * sy, x2 * sx, y2 * sy)


def from_original_pixels(box: Sequence[float], fmt: str, *, sent_size: tuple[int, int], orig_size: tuple[int, int],
                         resize: dict[str, int] | None = None) -> Box:
    """The inverse of :func:`to_original_pixels`: an (x1, y1, x2, y2) box in original pixels written
    in convention ``fmt`` (what a model trained on that convention should answer; GroundingME
    Sec. 5.3 training targets). Same arguments; for ``yxyx1000`` the result is ``[y1, x1, y2, x2]``.
    Values are not rounded. Raises ConfigError for an unknown format."""
    x1, y1, x2, y2 = (float(v) for v in box)
    ow, oh = orig_size
    if fmt == "abs":
        sx, sy = sent_size[0] / ow, sent_size[1] / oh
    elif fmt == "abs-resized":
        rh, rw = smart_resize(sent_size[1], sent_size[0], **(resize or {}))
        sx, sy = rw / ow, rh / oh
    elif fmt in ("rel1000", "yxyx1000"):
        sx, sy = 1000.0 / ow, 1000.0 / oh
    elif fmt == "rel1":
        sx, sy = 1.0 / ow, 1.0 / oh
    else:
        raise ConfigError(f"unknown bbox format {fmt!r}; known: {', '.join(BBOX_FORMATS)}")
    out = (x1 * sx, y1 * sy, x2 * sx, y2 * sy)
    return (out[1], out[0], out[3], out[2]) if fmt == "yxyx1000" else out
