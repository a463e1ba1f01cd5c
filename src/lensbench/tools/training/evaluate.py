"""Evaluate a checkpoint the way any model is evaluated: ``hf:`` in-process, through
:func:`lensbench.api.run`, into an ordinary run folder (resumable; ``lensbench report`` / ``view``
read it). The recipes' train -> evaluate step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["hf_spec", "evaluate_checkpoint"]


def hf_spec(model_dir: str | Path, *, batch: int = 16, dtype: str = "auto", device: str = "auto") -> str:
    """``hf:MODEL_DIR?batch=N&dtype=D&device=DEV`` (:mod:`lensbench.backends.hf_spec` keys)."""
    return f"hf:{model_dir}?batch={batch}&dtype={dtype}&device={device}"


def evaluate_checkpoint(benchmark: str, model_dir: str | Path, out: str | Path, *, data_dir: str | Path,
                        model_name: str | None = None, batch: int = 16, dtype: str = "auto", device: str = "auto",
                        progress: bool = False, **settings: Any):
    """Run ``benchmark`` on the checkpoint folder (or Hub id) ``model_dir`` into ``out``; returns
    the :class:`~lensbench.core.results.RunResult`. ``settings``: :func:`lensbench.api.run`'s
    keywords (``limit``, ``max_tokens``, benchmark options such as ``bbox_format``). A finished
    run folder is only re-read (nothing is generated twice). ``progress``: show the run's progress
    (a bar on a terminal, a line every 30 s otherwise) on stderr. Raises what ``lensbench.api.run``
    raises (ConfigError / DataError before anything is sent)."""
    from lensbench.api import run

    return run(benchmark, model=hf_spec(model_dir, batch=batch, dtype=dtype, device=device), out=Path(out),
               data_dir=Path(data_dir), model_name=model_name, progress=progress, **settings)
