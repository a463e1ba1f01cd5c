"""IV-Bench request text: Appendix C prefix + question + options + instruction (IV-Bench README, Protocol).

Templates are data files beside this module (``prompts/video_first.txt``, ``image_first.txt``,
``mcq.txt``), verbatim from the official ``inference.py`` (``IV_PROMPT_VIDEO_FIRST``,
``IV_PROMPT_IMAGE_FIRST``, ``format_question`` + ``MULTI_CHOICE_PROMPT``).
"""

from __future__ import annotations

from typing import Literal, get_args

from lensbench.benchmarks.ivbench.data import Query
from lensbench.benchmarks.ivbench.options import Choices
from lensbench.core.resources import read_text

__all__ = ["Pattern", "PATTERNS", "NO_FRAMES", "NO_IMAGE", "TextStyle", "TEXT_STYLES", "format_duration", "build_text"]

#: Image orders of Sec. 4.3.1: frames+image+text, image+frames+text, frames+text (no image); and the
#: round-2 quality check's baselines (Sec. 2.3: "any query that can be resolved without the reference image
#: or video is ... removed"): image+text (no video) and text alone (blind). Ours: the paper runs no such pattern.
#: the inference pattern (the type of ``--pattern``)
Pattern = Literal["video-first", "image-first", "text-only", "no-video", "blind"]
PATTERNS: tuple[str, ...] = get_args(Pattern)
#: patterns that send no frames (the video is still decoded: the same items as a video run) / no query image
NO_FRAMES = ("no-video", "blind")
NO_IMAGE = ("text-only", "blind")
#: the question text style (the type of ``--text-style``)
TextStyle = Literal["official", "clean"]
TEXT_STYLES: tuple[str, ...] = get_args(TextStyle)


def _template(name: str) -> str:
    raw = read_text(__package__, "prompts", f"{name}.txt")
    return raw.split("-----\n", 1)[1].rstrip("\n")


def format_duration(seconds: float) -> str:
    """Duration as the official prompt shows it: Python ``str`` of ffprobe's float (6 decimals max)."""
    return str(float(round(seconds, 6)))


def build_text(q: Query, choices: Choices, *, pattern: str, frame_num: int, duration: float,
               style: str = "official") -> str:
    """The text part of a request (Appendix C prefix + question + options + instruction).

    ``pattern``: ``video-first`` | ``image-first`` | ``text-only`` (text-only uses the
    video-first prefix, as the official script does) | ``no-video`` | ``blind`` (no frames sent: no
    prefix, the question, options and instruction alone). ``frame_num``: frames sent; ``duration``:
    container duration in seconds. ``style``: ``official`` (prefix directly followed by
    ``question + "？"``, option texts as released, as the official code) or ``clean`` (newline
    after the prefix, question as is, option texts stripped).
    """
    prefix = _template("image_first" if pattern == "image-first" else "video_first")
    prefix = "" if pattern in NO_FRAMES else prefix.format(frame_num=int(frame_num), duration=format_duration(duration))
    official = style == "official"
    question = q.question + "？" if official else q.question.strip()
    options = "\n".join(f"{k}. {v if official else v.strip()}" for k, v in choices.options)
    body = _template("mcq").format(question=question, options=options)
    return prefix + ("" if official or not prefix else "\n") + body
