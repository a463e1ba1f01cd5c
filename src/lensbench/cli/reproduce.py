"""``lensbench reproduce PAPER RUN...``: a paper's tables, figures and claims on run folders, verdict by verdict.

Mounted on the main app by :func:`register`. ``PAPER`` is a benchmark's CLI name; its paper's
declaration comes from the benchmark (:meth:`lensbench.benchmarks.base.Benchmark.reproduction`), the
computation from :mod:`lensbench.report.reproduce`. Nothing is sent to a model; no run folder is written.
"""

from __future__ import annotations

import json
import math
import sqlite3
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from lensbench.cli.view import RESAMPLES_HELP, SEED_HELP
from lensbench.core.console import err_console, fail, guard
from lensbench.core.errors import ConfigError
from lensbench.core.writes import write_atomically
from lensbench.scoring.defaults import MARGIN_POINTS
from lensbench.scoring.defaults import DEFAULT_RESAMPLES

__all__ = ["register", "reproduce_cmd", "parse_price", "check_run_inputs"]


def parse_price(item: str) -> tuple[str, tuple[float, float]]:
    """``"RUN=IN,OUT"`` (US dollars per million input / output tokens) -> ``(RUN, (IN, OUT))``. Raises ConfigError."""
    run, sep, rest = item.partition("=")
    parts = rest.split(",")
    try:
        if not sep or len(parts) != 2:
            raise ValueError
        pin, pout = float(parts[0]), float(parts[1])
        if not (math.isfinite(pin) and math.isfinite(pout)) or pin < 0 or pout < 0:
            raise ValueError
    except ValueError:
        raise ConfigError(f"--price {item!r}: expected RUN=IN,OUT (finite, non-negative US dollars per million input "
                          "and output tokens, e.g. runs/gpt=2.5,10)") from None
    return run, (pin, pout)


def check_run_inputs(run_dirs: list[Path]) -> None:
    """Refuse run folders that cannot give a verdict, before anything is computed: a folder that does not
    exist, a ``samples.jsonl`` that is missing or holds no record, a run store (``responses.sqlite``)
    SQLite cannot read (``PRAGMA quick_check`` through a read-only connection). Raises ConfigError
    naming the file and what to do."""
    for d in run_dirs:
        if not d.is_dir():
            raise ConfigError(f"{d}: no such run folder")
        samples = d / "samples.jsonl"
        if not samples.is_file():
            raise ConfigError(f"{samples}: missing: the run has no records (finish it with the same 'lensbench run' "
                              "command)")
        with samples.open("rb") as fh:
            if not any(line.strip() for line in fh):
                raise ConfigError(f"{samples}: empty: the run has no records (run the same 'lensbench run' "
                                  "command again: it rebuilds them from the store)")
        store = d / "responses.sqlite"
        if store.is_file():
            try:
                con = sqlite3.connect(f"{store.absolute().as_uri()}?mode=ro", uri=True)
                try:
                    ok = [r[0] for r in con.execute("PRAGMA quick_check(1)")]
                finally:
                    con.close()
            except sqlite3.Error as exc:
                ok = [str(exc)]
            if ok != ["ok"]:
                raise ConfigError(f"{store}: damaged ({ok[0]}); run 'lensbench repair {d}' to salvage its replies, "
                                  "then the same 'lensbench run' command to rebuild the records")


def _write(path: Path, text: str) -> None:
    write_atomically(path, lambda fh: fh.write(text))


def reproduce_cmd(
    paper: Annotated[str, typer.Argument(help="the paper, by its benchmark's name (lensbench list)", metavar="PAPER")],
    run_dirs: Annotated[Optional[list[Path]], typer.Argument(help="run folders (any of the paper's benchmarks)",
                                                             metavar="RUN_DIR...")] = None,
    match: Annotated[Optional[list[str]], typer.Option("--match", metavar="RUN=ROW", help="this run is the paper's "
                     "row ROW (exact name; repeatable). Without it a run is matched only when its model name is "
                     "exactly a paper model name")] = None,
    out: Annotated[Optional[Path], typer.Option("--out", metavar="HTML", help="write the HTML appendix")] = None,
    md: Annotated[Optional[Path], typer.Option("--md", metavar="FILE", help="write the markdown here instead of "
                                                                             "printing it")] = None,
    json_out: Annotated[Optional[Path], typer.Option("--json", metavar="FILE", help="write everything as JSON, the "
                                                     "per-item 'answerable without X' flags included")] = None,
    price: Annotated[Optional[list[str]], typer.Option("--price", metavar="RUN=IN,OUT", help="US dollars per "
                     "million input and output tokens of a run, for its cost (repeatable)")] = None,
    rows: Annotated[bool, typer.Option("--rows", help="list every name --match accepts and stop")] = False,
    resamples: Annotated[int, typer.Option("--resamples", min=1, help=RESAMPLES_HELP)] = DEFAULT_RESAMPLES,
    seed: Annotated[int, typer.Option("--seed", help=SEED_HELP)] = 0,
    claim_resamples: Annotated[Optional[int], typer.Option("--claim-resamples", min=1, metavar="N", help="resamples "
                               "of the claim tests (default 10 x --resamples: Holm multiplies the smallest p, at "
                               "least 2/(N+1), by the number of tests)")] = None,
    margin: Annotated[float, typer.Option("--margin", metavar="POINTS", help="equivalence "
                      "margin of 'consistent', in points of a percentage (a count: the same share of its units); "
                      f"default {MARGIN_POINTS:g}: a model further off passes several neighbouring rows of the "
                      "papers' tables (docs/reproduce.md)")] = MARGIN_POINTS,
) -> None:
    """Does a set of runs reproduce a paper? Every table and figure cell with a verdict, and the paper's claims.

    Every computed table and figure cell beside the published value with its 95% CI and a verdict: consistent
    (equivalent within --margin, two one-sided tests), differs (run = paper rejected, both estimates' noise
    counted, Holm within the table or figure), inconclusive, or not comparable with the reason; the paper's
    claims tested with paired tests and Holm's correction, token/latency/cost accounting, modality baselines,
    and what the runs cannot support (and which run would)."""
    from lensbench.benchmarks.registry import BENCHMARKS, get_benchmark
    from lensbench.views.reproduce import reproduce
    from lensbench.views.reproduce_html import render_html
    from lensbench.report.reproduce.render_md import render_markdown

    if paper not in BENCHMARKS:
        fail(f"unknown paper {paper!r}; give a benchmark name: {', '.join(sorted(BENCHMARKS))}")
    spec = get_benchmark(paper)(None).reproduction()
    if rows:
        sys.stdout.write("\n".join(spec.model_names()) + "\n")
        return
    if not margin > 0:
        fail(f"--margin {margin:g}: the equivalence margin must be > 0 points")
    if not run_dirs:
        fail("give at least one run folder (or --rows to list the paper's rows)")
    from lensbench.runtime.folder import check_out_file

    for path, flag in ((out, "--out"), (md, "--md"), (json_out, "--json")):
        if path is not None:
            check_out_file(path, flag)
    prices = dict(parse_price(p) for p in price or [])
    check_run_inputs(run_dirs)
    from lensbench.runtime.progress import Activity

    with Activity(err_console, f"reproduce {paper}: {len(run_dirs)} run folder(s), {resamples} resamples per CI"):
        rep = reproduce(spec, run_dirs, match or [], n_resamples=resamples, seed=seed, prices=prices,
                        claim_resamples=claim_resamples, margin=margin)
    text = render_markdown(rep)
    if md is not None:
        _write(md, text)
    else:
        sys.stdout.write(text)
    if out is not None:
        _write(out, render_html(rep))
    if json_out is not None:
        _write(json_out, json.dumps(rep.to_json(), indent=1, ensure_ascii=False, default=str) + "\n")
    for p in rep.problems:
        err_console.print(f"not read: {p}", highlight=False, markup=False)
    if rep.problems:
        raise typer.Exit(3)


def register(app: typer.Typer) -> None:
    """Mount ``reproduce`` on ``app``."""
    app.command("reproduce")(guard(reproduce_cmd))
