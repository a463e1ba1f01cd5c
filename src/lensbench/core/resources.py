"""Package data: prompt templates and paper tables shipped beside the code that uses them.

Each benchmark package keeps its protocol prompts in ``prompts/*.txt`` (verbatim from the
paper's appendix or the official code, cited in the package README) and the paper's published
tables in ``paper/*.json``. This is the one place that reads them.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

__all__ = ["read_text", "read_json"]


@lru_cache(maxsize=None)
def read_text(package: str, *parts: str) -> str:
    """UTF-8 text of the data file ``parts`` (e.g. ``"prompts", "parser.txt"``) inside ``package``.

    Bytes are returned exactly as shipped (no stripping): prompts are protocol.
    Raises FileNotFoundError naming the package and path.
    """
    node = resources.files(package)
    for p in parts:
        node = node.joinpath(p)
    try:
        return node.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"{package}: data file {'/'.join(parts)} not found") from None


def read_json(package: str, *parts: str) -> Any:
    """The JSON document ``parts`` inside ``package`` (a fresh object each call)."""
    return json.loads(read_text(package, *parts))
