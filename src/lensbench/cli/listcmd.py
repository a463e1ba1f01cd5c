"""``lensbench list``: the catalogue of benchmarks (what, size, headline metric, judge, data present) and
model backends (spec, model arguments), as tables or ``--json``.

Every benchmark fact comes from the benchmark class itself (``description``, ``n_samples``,
``sample_unit``, ``headline``, :meth:`~lensbench.benchmarks.base.Benchmark.judge_use`,
its ``demo`` piece, :attr:`~lensbench.benchmarks.base.Benchmark.pieces`); whether its data is present from the data
home (:func:`lensbench.core.datahome.data_status`).
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer

from lensbench.core.console import make_console
from lensbench.core.errors import LensbenchError

__all__ = ["register", "catalogue"]


def catalogue() -> dict[str, list[dict[str, Any]]]:
    """``{"benchmarks": [...], "backends": [...]}``: one dict per benchmark (``name``, ``title``,
    ``description``, ``n_samples``, ``sample_unit``, ``headline``, ``judge`` (what the default options
    send to a judge, or None), ``demo`` (``lensbench data demo`` has a data set), ``data``
    (downloaded / demo / present / empty / missing), ``data_dir``) and per backend (``prefix``,
    ``help``, ``model_args``: the ``-M`` keys). A plugin that cannot be loaded or described is
    ``{"name", "error"}`` (benchmark) / ``{"prefix", "error"}`` (backend): one broken plugin never
    hides the others (issue 30 item 5)."""
    from lensbench.backends.providers import providers
    from lensbench.benchmarks.registry import benchmark_names

    benches = [_benchmark_entry(name) for name in benchmark_names()]
    backends = [_backend_entry(p, prov) for p, prov in providers().items()]
    return {"benchmarks": benches, "backends": backends}


def _why(exc: Exception) -> str:
    return getattr(exc, "reason", None) or (str(exc) if isinstance(exc, LensbenchError) else f"{type(exc).__name__}: {exc}")


def _benchmark_entry(name: str) -> dict[str, Any]:
    from lensbench.benchmarks.registry import get_benchmark
    from lensbench.core.datahome import data_status, default_data_dir

    try:
        cls = get_benchmark(name)
        return {"name": name, "title": cls.title, "description": cls.description, "n_samples": cls.n_samples,
                "sample_unit": cls.sample_unit, "headline": cls.headline, "judge": cls(None).judge_use(),
                "demo": "demo" in cls.pieces,
                "data": data_status(name), "data_dir": str(default_data_dir(name))}
    except Exception as exc:  # noqa: BLE001 - a plugin's failure is its one line, the catalogue goes on
        return {"name": name, "error": _why(exc)}


def _backend_entry(prefix: str, prov) -> dict[str, Any]:
    from lensbench.backends.providers import model_args_of

    if prov.error is not None:
        return {"prefix": prefix, "error": prov.error}
    try:
        return {"prefix": prefix, "help": prov.help, "model_args": list(model_args_of(prefix, prov) or {})}
    except Exception as exc:  # noqa: BLE001 - a backend plugin's settings model that cannot be imported
        return {"prefix": prefix, "error": _why(exc)}


def register(app: typer.Typer) -> None:
    """Add the ``list`` command to ``app``."""

    @app.command("list")
    def list_cmd(as_json: Annotated[bool, typer.Option("--json", help="print the catalogue as JSON")] = False) -> None:
        """Benchmarks (what, size, headline metric, judge, whether the data is here) and model backends."""
        from rich.table import Table

        cat = catalogue()
        if as_json:
            sys.stdout.write(json.dumps(cat, indent=2, ensure_ascii=False) + "\n")
            return
        out = make_console(stderr=False)
        t = Table(title="benchmarks: lensbench run NAME (data: lensbench data download NAME, or data demo NAME DIR)",
                  show_lines=True)
        t.add_column("benchmark", ratio=3)
        t.add_column("size", no_wrap=True)
        t.add_column("headline", ratio=1)
        t.add_column("data", no_wrap=True)
        for b in cat["benchmarks"]:
            if "error" in b:
                continue
            size = f"{b['n_samples']:,}\n{b['sample_unit']}" if b["n_samples"] else "-"
            what = f"{b['name']}: {b['description']}" + (f"; judge: {b['judge']}" if b["judge"] else "")
            t.add_row(what, size, b["headline"], b["data"])
        out.print(t)
        t = Table(title="model backends: --model PREFIX[:ARG] (arguments: -M KEY=VALUE)", show_lines=True)
        t.add_column("backend", ratio=2)
        t.add_column("-M keys", ratio=1)
        for b in cat["backends"]:
            if "error" not in b:
                t.add_row(f"{b['prefix']}: {b['help']}", " ".join(b["model_args"]) or "-")
        out.print(t)
        for b in cat["benchmarks"] + cat["backends"]:
            if "error" in b:
                out.print(f"plugin {b.get('name') or b['prefix']}: cannot be loaded: {b['error']}", soft_wrap=True,
                          highlight=False, markup=False)
