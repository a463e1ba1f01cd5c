"""IF-Bench prompt templates, option rendering and circular rotation.

Sources: paper Appendix B (Fig. 10 unified prompt, Fig. 11 parser prompt, Fig. 12 dual-image
prompt, Fig. 13 textual prior) and the official code ``github.com/casiatao/IF-Bench``
``evaluate/bench_evaluate.py`` (commit 8c49d8b), whose strings the ``prompts/*.txt`` files hold
verbatim (the Chinese twins are not printed in the paper).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from lensbench.core.resources import read_text

__all__ = ["LETTERS", "LANG_FIELDS", "INPUTS", "INPUT_LABELS", "load_prompt", "template_for",
           "render_options", "rotate", "build_prompt", "parser_prompt"]

LETTERS: tuple[str, ...] = ("A", "B", "C", "D")
#: language code -> (question field, options field) in the data.
LANG_FIELDS: dict[str, tuple[str, str]] = {"en": ("en_question", "en_options"), "zh": ("cn_question", "cn_options")}
#: input configuration (Tab. 6) -> (prompt template stem, images sent in order). Official switches:
#: ``use_prior`` (+text), ``rgbt_pair`` (if+rgb), ``rgbt_transed_img_path`` alone (rgb).
INPUTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "if": ("unified", ("if",)),
    "if+text": ("prior", ("if",)),
    "rgb": ("translated", ("rgb",)),
    "if+rgb": ("pair", ("if", "rgb")),
    "if+rgb+text": ("prior_pair", ("if", "rgb")),
}
INPUT_LABELS = {"if": "IF", "if+text": "IF + Text", "rgb": "RGB", "if+rgb": "IF + RGB", "if+rgb+text": "IF + RGB + Text"}


@lru_cache(maxsize=None)
def load_prompt(name: str) -> str:
    """The template stored in ``prompts/<name>.txt`` (text after the header's ``-----`` line,
    byte for byte to the end of the file).

    Names: ``unified_{en,zh}`` (Fig. 10), ``prior_{en,zh}`` (Fig. 10 + Fig. 13),
    ``translated_{en,zh}`` (RGB only), ``pair_{en,zh}`` (Fig. 12), ``prior_pair_{en,zh}``
    (Fig. 12 + Fig. 13), ``parser`` (Fig. 11). Raises FileNotFoundError for another name,
    ValueError for a file without the separator line.
    """
    text = read_text(__package__, "prompts", f"{name}.txt")
    _head, sep, body = text.partition("\n-----\n")
    if not sep:
        raise ValueError(f"prompt file {name}.txt has no '-----' separator line")
    return body


def template_for(input_config: str, lang: str) -> str:
    """The evaluation template for an input configuration (key of :data:`INPUTS`) and language
    (``en``/``zh``), as the official ``bench_evaluate`` picks it. Raises KeyError for unknown values."""
    stem, _ = INPUTS[input_config]
    if lang not in LANG_FIELDS:
        raise KeyError(f"unknown language {lang!r} (en or zh)")
    return load_prompt(f"{stem}_{lang}")


def render_options(options: Sequence[str]) -> str:
    """Options in slots A-D rendered as the official code does: ``str({'A': ..., 'B': ..., ...})``
    (Python dict repr; quotes chosen by ``repr`` per string). ``options`` has 4 strings."""
    return str(dict(zip(LETTERS, options)))


def rotate(options: Sequence[str], answer: str, i: int) -> tuple[tuple[str, ...], str]:
    """Rotation ``i`` (0..3) of circular evaluation (paper Sec. 3.3; official code).

    Slot ``j`` gets original option ``(j - i) mod 4`` (the list shifted right by ``i``), and the
    answer letter moves from index ``k`` to ``(k + i) mod 4``. Returns ``(slots A-D, letter)``.
    Raises ValueError for an answer outside A-D or not 4 options.
    """
    if len(options) != 4:
        raise ValueError(f"expected 4 options, got {len(options)}")
    k = LETTERS.index(answer)
    slots = tuple(options[(j - i) % 4] for j in range(4))
    return slots, LETTERS[(k + i) % 4]


def build_prompt(template: str, question: str, options: Sequence[str]) -> str:
    """Fill a template: ``<input_question>`` first, then ``<input_options>`` (official order)."""
    return template.replace("<input_question>", str(question)).replace("<input_options>", render_options(options))


def parser_prompt(response: str) -> str:
    """The Fig. 11 parser prompt with ``<input_response>`` replaced by ``response``."""
    return load_prompt("parser").replace("<input_response>", response)
