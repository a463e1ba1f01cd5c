"""The construction prompts of ``tools/groundingme/prompts/`` (each cites its source above a ``-----`` line)."""

from __future__ import annotations

from lensbench.benchmarks.groundingme.prompts import template_body
from lensbench.core.resources import read_text

__all__ = ["tool_prompt"]


def tool_prompt(name: str) -> str:
    """The template of ``prompts/<name>.txt`` after its header (``tags``, ``describe_redbox``,
    ``describe_crop``). Raises FileNotFoundError / ValueError for a missing file or header."""
    return template_body(read_text(__package__, "prompts", f"{name}.txt"), name)
