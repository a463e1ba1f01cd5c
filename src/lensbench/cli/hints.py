"""Hints for the other tools' habits (issue 32.2): an option or command name that lmms-eval, VLMEvalKit,
inspect or a mistyped benchmark name would use gets the lensbench spelling instead of click's closest
string ("--output-path" used to suggest "--top-p").

* :data:`FOREIGN_OPTIONS`: option -> what lensbench says instead;
* :func:`command_hint`: an unknown subcommand name -> the command it most likely means (benchmark names
  compared without case, ``-``/``_`` and a ``bench`` suffix: ``rgbth`` -> ``rgb-th-bench``, ``ifbench`` ->
  ``if-bench``), else the closest name by :func:`difflib.get_close_matches`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

__all__ = ["FOREIGN_OPTIONS", "option_hint", "command_hint", "squash"]

#: options of other harnesses (lmms-eval, VLMEvalKit, inspect) -> the lensbench way
FOREIGN_OPTIONS: dict[str, str] = {
    **dict.fromkeys(("--output-path", "--output_path", "--output-dir", "--output_dir", "--log-dir", "--log_dir",
                     "--work-dir", "--work_dir"), "lensbench writes a run folder: --out RUN_DIR"),
    **dict.fromkeys(("--tasks", "--task", "--data-name"),
                    "a benchmark is a command: lensbench run BENCHMARK ... ('lensbench list' shows them)"),
    **dict.fromkeys(("--model_args", "--model-args"), "-M KEY=VALUE (--model-arg), once per argument"),
    **dict.fromkeys(("--max-samples", "--max_samples", "--limit-samples"), "--limit N"),
    "--batch_size": "-M batch=N (hf: backend) or --concurrency N (API models)",
    "--batch-size": "-M batch=N (hf: backend) or --concurrency N (API models)",
    "--log_samples": "every sample is always logged: samples.jsonl in the run folder",
    "--log-samples": "every sample is always logged: samples.jsonl in the run folder",
    "--to": "the tracker flag is --log-to wandb|mlflow (as in 'lensbench run')",
    # lensbench's own old names (issue 32.9), where a command never had them
    "--data": "a data folder is --data-dir DIR",
    "--llm": "a model spec is --model SPEC (a judge's: --judge-model SPEC)",
}


def option_hint(option: str) -> str | None:
    """What lensbench says instead of another tool's ``option`` (``--output-path``), or None."""
    return FOREIGN_OPTIONS.get(option.split("=", 1)[0])


def squash(name: str) -> str:
    """``name`` compared loosely: lower case, no ``-``/``_``/spaces, no trailing ``bench``
    (``RGB-Th-Bench`` -> ``rgbth``, ``ifbench`` -> ``if``)."""
    s = re.sub(r"[-_\s]", "", name.lower())
    return s[:-5] if s.endswith("bench") and len(s) > 5 else s


def command_hint(name: str, names: Iterable[str]) -> str | None:
    """The command in ``names`` that an unknown ``name`` most likely means, or None."""
    names = list(names)
    loose = [n for n in names if squash(n) == squash(name)]
    if loose:
        return loose[0]
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return close[0] if close else None
