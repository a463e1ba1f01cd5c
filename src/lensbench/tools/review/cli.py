"""``lensbench review export | agreement``: any review page's answers files, whatever pipeline wrote them."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Annotated, Optional

import typer

from lensbench.core.console import fail

__all__ = ["review_app"]

review_app = typer.Typer(help="Answers of the local review page (IF-Bench calibration, GOBench ratings, ...): "
                              "export them, agreement between reviewers.", no_args_is_help=True)


def _load(dbs: list[Path]):
    """``(answers of all files, the form, the items)``; fails cleanly for a missing or foreign file."""
    from lensbench.tools.review.store import ReviewDB, merged_answers

    form, items = None, {}
    for p in dbs:
        if not p.is_file():
            fail(f"{p}: not found")
        try:
            with ReviewDB(p) as db:
                form = form or db.stored_form()
                items.update(db.items())
        except sqlite3.DatabaseError as exc:
            fail(f"{p}: not a review answers file ({exc})")
    if form is None:
        fail(f"{dbs[0]}: no form stored (written before forms were stored, or not by a review page)")
    try:
        return merged_answers(dbs), form, items
    except ValueError as exc:
        fail(str(exc))


@review_app.command("export")
def export_cmd(
    db: Annotated[list[Path], typer.Option("--db", help="answers file (repeat: one per reviewer)")],
    out: Annotated[Path, typer.Option("--out", help="FILE.csv (formulas escaped) or FILE.jsonl")],
) -> None:
    """One row per reviewer and item: every field of the form, and the item's meta."""
    from lensbench.tools.review.export import export_answers

    answers, form, items = _load(db)
    if out.exists():
        fail(f"{out} exists; choose a new --out")
    try:
        n = export_answers(out, answers, form, items)
    except ValueError as exc:
        fail(str(exc))
    typer.echo(f"{n} rows -> {out}")


@review_app.command("agreement")
def agreement_cmd(
    db: Annotated[list[Path], typer.Option("--db", help="answers file (repeat: one per reviewer)")],
    field: Annotated[Optional[list[str]], typer.Option("--field", help="choice field (default: all)")] = None,
    format: Annotated[str, typer.Option("--format", help="md or json")] = "md",
) -> None:
    """Percent agreement, Cohen's kappa (2 reviewers), Fleiss' kappa, Krippendorff's alpha per choice field."""
    from lensbench.report.tables import render_table
    from lensbench.tools.review.agreement import agreement

    answers, form, _items = _load(db)
    try:
        figs = agreement(answers, form, field)
    except ValueError as exc:
        fail(str(exc))
    if format == "json":
        typer.echo(json.dumps(figs, indent=2))
        return
    cols = ["n_reviewers", "n_items", "percent", "cohen_kappa", "fleiss_kappa", "krippendorff_alpha"]
    rows = [[name] + ["-" if f[c] is None else (f"{f[c]:.3f}" if isinstance(f[c], float) else str(f[c])) for c in cols]
            for name, f in figs.items()]
    typer.echo(render_table(["field", *cols], rows, "md"))
