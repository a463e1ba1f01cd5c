"""``lensbench groundingme review | export | verify | verify-score`` (typer): the human steps of
GroundingME's construction (Sec. 3.2.3, App. C) on the shared review page, and the release export."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from lensbench.core.console import err_console, guard
from lensbench.core.errors import ConfigError
from lensbench.core.flags import old_option, renamed

__all__ = ["register_review", "image_roots"]

REVIEW_DB = "review.sqlite"
VERIFY_FILE = "verify.json"


def _say(msg: str) -> None:
    err_console.print(msg, highlight=False, markup=False)


def _answers(paths: list[Path] | None, default: Path):
    """Answers of the given review files, or of ``default`` when none are given (ConfigError if absent)."""
    from lensbench.tools.review import merged_answers

    files = paths or ([default] if default.is_file() else [])
    if not files:
        raise ConfigError(f"no review answers: {default} not found (run the review page first or give --reviews)")
    try:
        return merged_answers(files)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def review_cmd(
    work: Annotated[Path, typer.Option("--work", help="the build's work folder")],
    db: Annotated[Optional[Path], typer.Option("--db", help=f"answers file (default WORK/{REVIEW_DB}; one per "
                                                            "reviewer is fine)")] = None,
    reviewer: Annotated[Optional[str], typer.Option("--reviewer", help="reviewer name filled in on the page")] = None,
    host: Annotated[str, typer.Option("--host", help="address to listen on (keep 127.0.0.1)")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="port")] = 8765,
) -> None:
    """Selection and refinement page (Sec. 3.2.3): accept / edit the description / fix the box / reject each candidate."""
    from lensbench.tools.groundingme.build import CANDIDATES, read_candidates
    from lensbench.tools.groundingme.review import selection_form, selection_items
    from lensbench.tools.review import ReviewDB, serve_review
    from lensbench.tools.review.server import check_media

    cands = read_candidates(work)
    roots = image_roots(work)
    for n, c in enumerate(cands, 1):  # media paths named by a data file resolve inside its folder
        check_media(str(c.get("image")), roots, work / CANDIDATES, f"line {n}.image")
    items = selection_items(cands)
    with ReviewDB(db or work / REVIEW_DB, selection_form()) as store:
        serve_review(items, store, roots=roots, host=host, port=port, reviewer=reviewer, log=_say)


def image_roots(work: Path) -> list[Path]:
    """The image folders the build at ``work`` read (its ``build.json`` options: ``--images``, and
    ``--small-images`` or the folder of ``--small-boxes``): the only folders the selection page serves
    files from. Raises ConfigError when ``build.json`` is missing or names none."""
    f = Path(work) / "build.json"
    try:
        opts = json.loads(f.read_text(encoding="utf-8")).get("options") or {}
    except FileNotFoundError:
        raise ConfigError(f"{f} not found: run 'lensbench groundingme build --work {work}' first") from None
    except (ValueError, AttributeError) as exc:
        raise ConfigError(f"{f}: not a build record ({exc})") from None
    roots = [Path(v) for v in (opts.get("images"), opts.get("small_images")) if isinstance(v, str) and v]
    if not opts.get("small_images") and isinstance(opts.get("small_boxes"), str):
        roots.append(Path(opts["small_boxes"]).parent)
    if not roots:
        raise ConfigError(f"{f}: names no image folder (options.images / small_images / small_boxes)")
    return roots


def export_cmd(
    work: Annotated[Path, typer.Option("--work", help="the build's work folder")],
    out: Annotated[Path, typer.Option("--out", help="release folder to write (must not exist or be empty)")],
    reviews: Annotated[Optional[list[Path]], typer.Option("--reviews", help=f"answers file(s) (default WORK/"
                                                                             f"{REVIEW_DB})")] = None,
    rule: Annotated[str, typer.Option("--rule", help="keep an item by majority | unanimous | any")] = "majority",
    unreviewed: Annotated[bool, typer.Option("--unreviewed", help="export every candidate as generated (no review)")]
    = False,
    tsv: Annotated[bool, typer.Option("--tsv/--no-tsv", help="also write VLMEvalKit's groundingme.tsv")] = True,
) -> None:
    """Write the reviewed items as the release parquet (and TSV), ready for 'lensbench run groundingme --data-dir OUT'."""
    from lensbench.tools.groundingme.build import read_candidates
    from lensbench.tools.groundingme.release import TSV_NAME, write_parquet, write_tsv
    from lensbench.tools.groundingme.review import apply_review

    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError(f"{out} exists and is not empty: export writes a new folder")
    items = read_candidates(work)
    if unreviewed:
        counts = {"n_kept": len(items)}
    else:
        if rule not in ("majority", "unanimous", "any"):
            raise ConfigError(f"--rule must be majority, unanimous or any, got {rule!r}")
        items, counts = apply_review(items, _answers(reviews, work / REVIEW_DB), rule)
    if not items:
        raise ConfigError(f"{work}: no items to export ({json.dumps(counts)})")
    pq = write_parquet(items, out)
    if tsv:
        write_tsv(items, out / TSV_NAME)
    _say(json.dumps(counts))
    typer.echo(f"{len(items)} items -> {pq}")


def verify_cmd(
    work: Annotated[Path, typer.Option("--work", help="folder for the sample, its images and the answers")],
    data_dir: Annotated[Optional[Path], typer.Option("--data-dir", help="GroundingME data (release folder, parquet "
                                                     "or TSV)")] = None,
    n: Annotated[int, typer.Option("--n", help="items to judge (paper: 100)")] = 100,
    seed: Annotated[int, typer.Option("--seed", help="sampling seed")] = 0,
    db: Annotated[Optional[Path], typer.Option("--db", help=f"answers file (default WORK/{REVIEW_DB})")] = None,
    reviewer: Annotated[Optional[str], typer.Option("--reviewer", help="reviewer name filled in on the page")] = None,
    host: Annotated[str, typer.Option("--host", help="address to listen on (keep 127.0.0.1)")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="port")] = 8765,
    data_old: Annotated[Optional[Path], old_option("--data", "--data-dir")] = None,
) -> None:
    """App. C human rejection verification: judge sampled Discriminative / Rejection items groundable or not."""
    from lensbench.tools.review import ReviewDB, serve_review

    data = renamed(data_dir, data_old, "--data", "--data-dir", required=True)
    items = prepare_verification(data, work, n, seed)
    from lensbench.tools.groundingme.review import verification_form

    with ReviewDB(db or work / REVIEW_DB, verification_form()) as store:
        serve_review(items, store, roots=[work / "images"], host=host, port=port, reviewer=reviewer, log=_say)


def prepare_verification(data: Path, work: Path, n: int, seed: int):
    """The App. C review items: sampled once into ``work/verify.json`` (a rerun with other
    settings is refused), images written under ``work/images``. Raises ConfigError / DataError."""
    from lensbench.benchmarks.groundingme.data import load_groundingme
    from lensbench.tools.groundingme.review import sample_for_verification, verification_items

    samples = load_groundingme(data)
    work.mkdir(parents=True, exist_ok=True)
    f = work / VERIFY_FILE
    want = {"data": str(Path(data).resolve()), "n": n, "seed": seed}
    if f.is_file():
        doc = json.loads(f.read_text(encoding="utf-8"))
        if {k: doc.get(k) for k in want} != want:
            raise ConfigError(f"{f} holds a sample of other settings {({k: doc.get(k) for k in want})}; use another "
                              "--work folder")
        by_id = {s.id: s for s in samples}
        missing = [i for i in doc["ids"] if i not in by_id]
        if missing:
            raise ConfigError(f"{f}: sampled ids no longer in {data}: {missing[:3]}")
        chosen = [by_id[i] for i in doc["ids"]]
    else:
        try:
            chosen = sample_for_verification(samples, n, seed)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        f.write_text(json.dumps({**want, "ids": [s.id for s in chosen],
                                 "rejection": {s.id: s.subtask_l1 == "Rejection" for s in chosen}}, indent=1) + "\n",
                     encoding="utf-8")
    return verification_items(chosen, work / "images")


def verify_score_cmd(
    work: Annotated[Path, typer.Option("--work", help="the verify folder")],
    reviews: Annotated[Optional[list[Path]], typer.Option("--reviews", help=f"answers file(s) (default WORK/"
                                                                             f"{REVIEW_DB})")] = None,
    fmt: Annotated[str, typer.Option("--format", help="md | csv | json")] = "md",
) -> None:
    """App. C figures: accuracy / precision / recall / F1 per reviewer (Rejection = positive), beside the paper's."""
    from lensbench.tools.groundingme.review import verification_form, verification_scores
    from lensbench.tools.groundingme.verify_report import render_verification
    from lensbench.tools.review import agreement

    f = work / VERIFY_FILE
    if not f.is_file():
        raise ConfigError(f"{f} not found: run 'lensbench groundingme verify --work {work}' first")
    truth = json.loads(f.read_text(encoding="utf-8"))["rejection"]
    answers = _answers(reviews, work / REVIEW_DB)
    scores = verification_scores(answers, truth)
    agree = agreement(answers, verification_form()) if len(answers) > 1 else {}
    typer.echo(render_verification(scores, agree, fmt), nl=False)


def register_review(app: typer.Typer) -> None:
    """Add ``review``, ``export``, ``verify`` and ``verify-score`` to the ``groundingme`` group."""
    app.command("review")(guard(review_cmd))
    app.command("export")(guard(export_cmd))
    app.command("verify")(guard(verify_cmd))
    app.command("verify-score")(guard(verify_score_cmd))
