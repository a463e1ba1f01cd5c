"""The reference of every ``lensbench eval`` config key, generated from the config models themselves.

:func:`config_reference` walks :class:`~lensbench.runtime.matrix.MatrixConfig` and its entries,
the run flags of :class:`~lensbench.runtime.settings.RunSettings` (allowed in every ``settings``
table and directly as benchmark keys) and each benchmark's ``Options`` (its ``options`` tables), and
writes each key with its type, default and description. ``lensbench eval --keys`` prints it and
``docs/eval-config.md`` is the same text (a test compares them), so the documentation cannot drift
from what the loader accepts.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from lensbench.benchmarks.registry import BENCHMARKS, get_benchmark
from lensbench.core.configcheck import type_text
from lensbench.runtime.matrix import BenchmarkEntry, MatrixConfig, ModelEntry, Variant
from lensbench.runtime.settings import RunSettings

__all__ = ["config_reference", "MATRIX_SET"]

#: run flags the matrix sets itself (from the model entry, the run root and data_dir): not allowed in settings
MATRIX_SET = ("model", "out", "data_dir", "base_url", "api_key_env", "model_arg", "progress")


def _default(f: Any) -> str:
    if f.is_required():
        return "required"
    v = f.default_factory() if f.default_factory is not None else f.default
    if v is None or v == [] or v == {}:
        return "-"
    return f"`{v!r}`" if not isinstance(v, str) else f'`"{v}"`'


def _rows(model: type[BaseModel], skip: tuple[str, ...] = ()) -> list[str]:
    out = ["| key | type | default | what |", "|---|---|---|---|"]
    for name, f in model.model_fields.items():
        if name in skip:
            continue
        what = " ".join((f.description or "").split()).replace("|", "/")
        out.append(f"| `{name}` | {type_text(f.annotation).replace('|', '/')} | {_default(f)} | {what} |")
    return out


def config_reference() -> str:
    """Markdown: every key of a ``lensbench eval`` config (top level, ``[[model]]``, ``[[benchmark]]``,
    ``[[benchmark.variant]]``, run flags, and each benchmark's ``options``)."""
    lines = [
        "# `lensbench eval` config keys",
        "",
        "Generated from the config models (`lensbench eval --keys` prints this; "
        "`tests/runtime/test_user_path_runtime.py` keeps this file equal to it). A config is TOML (`.toml`) or YAML (`.yaml`, `lensbench[yaml]`). Every "
        "unknown key is refused with the nearest valid one; a key naming a secret is refused anywhere; paths are "
        "relative to the config file.",
        "",
        "## Top level", "", *_rows(MatrixConfig), "",
        "## `[[model]]`", "", *_rows(ModelEntry), "",
        "## `[[benchmark]]`", "",
        "Run flags (below) may also be given directly as keys of a benchmark table.", "", *_rows(BenchmarkEntry), "",
        "## `[[benchmark.variant]]`", "", *_rows(Variant), "",
        "## Run flags (`settings` tables, top level / model / benchmark / variant; later ones win)", "",
        "The flags of `lensbench run` with underscores. Set by the matrix, so refused here: "
        + ", ".join(f"`{k}`" for k in MATRIX_SET) + " (use the model entry, `out` and `data_dir`).", "",
        *_rows(RunSettings, skip=MATRIX_SET), "",
        "## Benchmark `options`", "",
    ]
    for name in BENCHMARKS:
        cls = get_benchmark(name)
        lines += [f"### `{name}`", ""]
        if cls.Options.model_fields:
            lines += _rows(cls.Options)
        else:
            lines.append("No options.")
        lines.append("")
    return "\n".join(lines)
