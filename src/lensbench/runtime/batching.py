"""Batch planning for local backends that generate several requests in one call (``hf:``).

A backend that declares ``batch_size > 1`` is sent batches instead of single requests
(:meth:`lensbench.runtime.engine.Engine.run`). Requests that can share one ``generate`` call
are grouped first — same role, same generation parameters, same number of images and video
frames (so a processor never sees a batch mixing text-only and image prompts) — then sorted
by estimated input length inside each group and cut into batches of at most ``batch_size``,
so that padding (wasted compute) stays small. Groups are emitted largest first; a group's last
batch may be short.

Pure functions: no torch, no backend calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from lensbench.core.types import ImagePart, Request

__all__ = ["input_shape", "estimate_length", "group_key", "plan_batches"]

T = TypeVar("T")


def input_shape(request: Request) -> tuple[int, int]:
    """``(n_images, n_video_frames)`` of a request: still images and video frames (ImagePart with
    ``video`` set) counted apart, over all messages."""
    imgs = request.images
    frames = sum(1 for p in imgs if isinstance(p, ImagePart) and p.video is not None)
    return len(imgs) - frames, frames


def estimate_length(request: Request) -> int:
    """Estimated input length of ``request``: characters of text + number of image parts (frames
    included). Used only to order requests of one group (same image and frame count), where the
    image tokens are equal and the text length decides the padding."""
    return sum(len(p.text) for m in request.messages for p in m.parts if not isinstance(p, ImagePart)) \
        + len(request.images)


def group_key(request: Request) -> tuple:
    """Requests with equal keys may share one batch: role, generation parameters (as canonical
    JSON), image count and video-frame count."""
    return (request.role, request.params.model_dump_json(), *input_shape(request))


def plan_batches(items: Sequence[T], batch_size: int, request_of: Callable[[T], Request] = lambda x: x) -> list[list[T]]:
    """Cut ``items`` into batches of at most ``batch_size`` items of one :func:`group_key`, each
    batch holding requests of similar :func:`estimate_length` (sorted ascending in its group).

    ``request_of`` maps an item to its Request (items may be ``(key, request)`` pairs).
    Deterministic: ties keep the input order. Every item appears in exactly one batch.

    Raises:
        ValueError: ``batch_size`` < 1.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    groups: dict[tuple, list[T]] = {}
    for it in items:
        groups.setdefault(group_key(request_of(it)), []).append(it)
    batches: list[list[T]] = []
    for members in sorted(groups.values(), key=len, reverse=True):
        members = sorted(members, key=lambda it: estimate_length(request_of(it)))  # stable: ties keep order
        batches.extend(members[i:i + batch_size] for i in range(0, len(members), batch_size))
    return batches
