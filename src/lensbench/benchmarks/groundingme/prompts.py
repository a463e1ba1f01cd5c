"""GroundingME prompt templates (``prompts/*.txt``, verbatim; each file cites its source above a
``-----`` line): the Table 9 grounding prompt and the Table 10/11 judge prompts."""

from __future__ import annotations

from lensbench.core.resources import read_text

__all__ = ["DEFAULT_MAX_TOKENS", "template_body", "load_prompt", "build_prompt"]

#: Protocol default for new tokens: the official scorer's ``max_completion_tokens`` (20480);
#: ``--max-tokens`` overrides it.
DEFAULT_MAX_TOKENS = 20480


def template_body(raw: str, name: str) -> str:
    """The part of a prompt file after its ``-----`` header line, without the final newline.

    Raises ValueError when the separator is missing (``name`` is named in the message).
    """
    _, sep, body = raw.partition("\n-----\n")
    if not sep:
        raise ValueError(f"prompt file {name}.txt lacks its '-----' header separator")
    return body[:-1] if body.endswith("\n") else body


def load_prompt(name: str) -> str:
    """Template text of ``prompts/<name>.txt`` (``prompt``, ``judge_text``, ``judge_mm``).

    Raises FileNotFoundError / ValueError (see :func:`template_body`).
    """
    return template_body(read_text(__package__, "prompts", f"{name}.txt"), name)


def build_prompt(description: str, bbox_format: str = "abs") -> str:
    """Table 9 prompt for ``description`` (sent after the image); for ``yxyx1000`` the format is
    written ``[y1, x1, y2, x2]`` (Appendix D's Gemini adjustment)."""
    text = load_prompt("prompt").replace("{description}", description)
    if bbox_format == "yxyx1000":
        text = text.replace("[x1, y1, x2, y2]", "[y1, x1, y2, x2]")
    return text
