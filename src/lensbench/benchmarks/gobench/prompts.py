"""GOBench prompts: the official critic prompt, VLMEvalKit's instruction, and the random baseline's answer space.

* Critic prompt: the official evaluation script (``code/Gemini2.5.py`` of github.com/Amber0614/GOBench),
  shipped verbatim as ``prompts/critic.txt``; questions have their ``"N. "`` prefix removed as that
  script does; temperature 0.1, max 1500 output tokens (paper Sec. 2.3).
* ``prompts/vlmevalkit_sys.txt``: VLMEvalKit's ``GOBenchDataset.SYS`` (``vlmeval/dataset/gobench.py``),
  sent after the image, followed by the TSV's ``question`` cell.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache

from lensbench.core.resources import read_text

__all__ = ["load_prompt", "reality_block", "critic_prompt", "CriticAnswerSpace"]


@lru_cache(maxsize=None)
def load_prompt(name: str) -> str:
    """Template ``prompts/<name>.txt`` of this package after its header's ``-----`` line.

    Names: ``critic`` (official script), ``vlmevalkit_sys`` (VLMEvalKit's SYS). Raises
    FileNotFoundError for another name, ValueError when the separator is missing.
    """
    text = read_text(__package__, "prompts", f"{name}.txt")
    _head, sep, body = text.partition("\n-----\n")
    if not sep:
        raise ValueError(f"prompt file prompts/{name}.txt has no '-----' separator line")
    return body


def reality_block(questions: Sequence[str]) -> str:
    """The official script's question block: a header line, then ``  i. Q_EN: "q"`` per question
    (each line ends in a newline; the official Chinese column is always N/A and not shown)."""
    s = "Reality Questions to Answer (provide only 'Yes', 'No', or 'Cannot Determine' for each):\n"
    if not questions:
        return s + "  (No specific reality questions provided for this case.)\n"
    for i, q in enumerate(questions, 1):
        s += f"  {i}. Q_EN: \"{q}\"\n"
    return s


def critic_prompt(prompt: str, questions: Sequence[str], model_name: str) -> str:
    """The full critic text for one image (``prompts/critic.txt`` filled in)."""
    t = load_prompt("critic")
    return (t.replace("<ENGLISH_PROMPT>", prompt).replace("<REALITY_QUESTIONS>", reality_block(questions))
            .replace("<MODEL_NAME>", model_name))


class CriticAnswerSpace(Sequence):
    """Every well-formed critic reply (3^5 answer lists x 5 x 5 ratings = 6,075 JSON strings), made
    on demand: the answer space of the seeded random baseline (``--model random``)."""

    _ANS = ("Yes", "No", "Cannot Determine")

    def __len__(self) -> int:
        return 3 ** 5 * 25

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        i %= len(self)
        fid, i = i % 5 + 1, i // 5
        aes, i = i % 5 + 1, i // 5
        ans = []
        for _ in range(5):
            ans.append(self._ANS[i % 3])
            i //= 3
        return json.dumps({"realityAnswers_Eval": ans, "aestheticsRating_Eval": aes, "consistencyRating_Eval": fid})
