"""One local review page for every human step of the papers' pipelines (shared; names no benchmark).

People rate, accept / edit / reject, or judge items (images, read-only texts, editable texts and
boxes) in a browser; every answer is stored the moment it is given in a SQLite file, one
transaction per action; the answers are exported (CSV / JSONL), summarised as agreement
figures, and resolved into the items to keep.

Public API (import from ``lensbench.tools.review``)::

    from lensbench.tools.review import (Field, Form, Section, ReviewItem, ReviewDB, ReviewServer,
        serve_review, export_answers, resolve, agreement, binary_scores, merged_answers)

    form = Form(fields=(Field.decision(), Field.text("question", "Question"), Field.box("box")),
                title="Calibration", info=("source",), done_word="reviewed")
    items = [ReviewItem(key="q1", images=("img/1.png",), info={"source": "..."},
                        texts={"question": "How many ...?"}, boxes={"box": [10, 20, 110, 90]},
                        meta={"anything": "exported, never shown"})]
    with ReviewDB("review.sqlite", form) as db:
        serve_review(items, db, roots=["img"], port=8765)   # CLI: prints http://127.0.0.1:8765/t/<token>/
        # or, in tests / notebooks: with ReviewServer(items, db, roots=["img"]) as srv: srv.url
        answers = db.all_answers()                  # {reviewer: {item: {field: value}}}
    export_answers("answers.csv", answers, form, {it.key: it for it in items})   # or .jsonl
    outcome = resolve(answers, form, {it.key: it for it in items}, rule="majority")
    #   {key: Outcome(keep, votes, texts, boxes, edited, conflicts)}
    figures = agreement(answers, form)              # per choice field: percent, Cohen / Fleiss
                                                    # kappa, Krippendorff's alpha
    scores = binary_scores(truth={"q1": True}, judged={"q1": False})   # accuracy/precision/recall/F1

Rules across fields: ``Form(check=fn)`` (``fn(values)`` raises ValueError; the page shows the
message, nothing is stored). The file keeps the items and the form, so ``lensbench review export
--db A.sqlite --db B.sqlite --out all.csv`` and ``lensbench review agreement --db ...`` work on any
pipeline's answers files (:meth:`ReviewDB.stored_form`).

Modes are field kinds (:mod:`.form`): ``rate`` = :meth:`Field.choice` / :meth:`Field.scale`;
``judge`` = :meth:`Field.judge` (binary, e.g. groundable or not); ``accept / edit / reject`` =
:meth:`Field.decision` plus :meth:`Field.text` / :meth:`Field.box` fields the reviewer may edit
(the page stores the decision ``edit`` and the edited values in one action).

Stored values are strings: a choice as its option's spelling, a text as given, a box as a JSON
list ``[x1, y1, x2, y2]`` (pixels of the item's first image). Reviewer names: 1-64 characters,
no control characters, not starting with ``= + - @`` (:func:`validate_reviewer`).

Files: an item's image is served only when it resolves inside one of the page's ``roots`` (the
data folders it was built from; the loaders' rule, :func:`lensbench.benchmarks.fields.inside`): a
``..``, an absolute path elsewhere or a symlink out is answered 404 (:func:`.server.media_path`), and
the pipelines' pages refuse such a path at start, naming the file and field (:func:`.server.check_media`).
Values must be JSON strings (a box may be a list of numbers): ``true`` is never stored as "Yes".

Security (:mod:`.guard`): the page and its API live under ``/t/<token>/`` with a fresh random
token per start (the printed URL); Host is checked (DNS rebinding), a POST must be
``application/json`` from the page's own Origin (a cross-origin ``no-cors`` fetch or a
``text/plain`` form stores nothing); binding beyond loopback prints a warning. Exported CSV
cells that a spreadsheet would evaluate are prefixed with ``'``; :func:`read_csv` undoes it and
keeps U+2028 / U+2029 / U+0085 inside cells.

The answer tables and the name rule live in :mod:`lensbench.core.answers`, the CSV rules in
:mod:`lensbench.core.csvsafe` (re-exported here), so a benchmark's reader of such files can use them.

Modules: :mod:`.form` (items, fields, names), :mod:`.store` (SQLite), :mod:`.guard` (request
checks), :mod:`.server` (the app, threaded server, CLI serve), :mod:`.export` (CSV / JSONL,
resolve), :mod:`.agreement` (agreement figures), :mod:`.cli` (``lensbench review``); the page is
``web/review.html``; HTTP routes in :mod:`.server`.
"""

from lensbench.tools.review.agreement import (agreement, binary_scores, cohen_kappa, fleiss_kappa,
                                              krippendorff_alpha, percent_agreement)
from lensbench.core.csvsafe import csv_cell, read_csv, uncsv_cell, write_csv
from lensbench.tools.review.export import Outcome, answer_rows, export_answers, resolve
from lensbench.tools.review.form import DECISIONS, Field, Form, ReviewItem, Section, validate_reviewer
from lensbench.tools.review.server import ReviewServer, make_review_app, review_url, serve_review
from lensbench.tools.review.store import Answers, ReviewDB, merged_answers

__all__ = ["Field", "Form", "Section", "ReviewItem", "DECISIONS", "validate_reviewer", "ReviewDB", "Answers",
           "merged_answers", "ReviewServer", "make_review_app", "serve_review", "review_url", "export_answers",
           "answer_rows", "csv_cell", "uncsv_cell", "write_csv", "read_csv", "resolve", "Outcome", "agreement",
           "binary_scores", "cohen_kappa", "fleiss_kappa", "krippendorff_alpha", "percent_agreement"]
