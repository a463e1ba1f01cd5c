"""``lensbench list``: the catalogue of benchmarks (what, size, headline metric, judge, data present) and
model backends (spec, model arguments), as tables or ``--json``.

Every benchmark fact comes from the benchmark class itself (``description``, ``n_samples``,
``sample_unit``, ``headline``, :meth:`~lensbench.benchmarks.base.Benchmark.judge_use`,
:meth:`~lensbench.benchmarks.base.Benchmark.write_demo`); whether its data is present from the data
home (:func:`lensbench.core.datahome.data_status`).
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer

from lensbench.core.console import make_console

__all__ = ["register", "catalogue"]


def catalogue() -> dict[str, list[dict[str, Any]]]:
    """``{"benchmarks": [...], "backends": [...]}``: one dict per benchmark (``name``, ``title``,
    ``description``, ``n_samples``, ``sample_unit``, ``headline``, ``judge`` (what the default options
    send to a judge, or None), ``demo`` (``lensbench data demo`` has a data set), ``data``
    (downloaded / demo / present / empty / missing), ``data_dir``) and per backend (``prefix``,
    ``help``, ``model_args``: the ``-M`` keys)."""
    from lensbench.backends.providers import model_args_of, providers
    from lensbench.benchmarks.base import Benchmark
    from lensbench.benchmarks.registry import all_benchmarks
    from lensbench.core.datahome import data_status, default_data_dir

    benches = []
    for name, cls in all_benchmarks().items():
        benches.append({"name": name, "title": cls.title, "description": cls.description, "n_samples": cls.n_samples,
                        "sample_unit": cls.sample_unit, "headline": cls.headline, "judge": cls(None).judge_use(),
                        "demo": cls.write_demo.__func__ is not Benchmark.write_demo.__func__,
                        "data": data_status(name), "data_dir": str(default_data_dir(name))})
    backends = [{"prefix": p, "help": prov.help, "model_args": list(model_args_of(p, prov) or {})}
                for p, prov in providers().items()]
    return {"benchmarks": benches, "backends": backends}


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
            size = f"{b['n_samples']:,}\n{b['sample_unit']}" if b["n_samples"] else "-"
            what = f"{b['name']}: {b['description']}" + (f"; judge: {b['judge']}" if b["judge"] else "")
            t.add_row(what, size, b["headline"], b["data"])
        out.print(t)
        t = Table(title="model backends: --model PREFIX[:ARG] (arguments: -M KEY=VALUE)", show_lines=True)
        t.add_column("backend", ratio=2)
        t.add_column("-M keys", ratio=1)
        for b in cat["backends"]:
            t.add_row(f"{b['prefix']}: {b['help']}", " ".join(b["model_args"]) or "-")
        out.print(t)
