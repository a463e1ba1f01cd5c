"""What a paper declares for ``lensbench reproduce``: its computed tables and figures, its claims, its
modality baselines. Plain data, written once per paper in the benchmark's own folder
(``benchmarks/<name>/reproduce.py``) and read by the shared machinery of this package, which never
names a benchmark.

* :class:`Grid`: a table or figure whose cells are categories of one metric table of a run
  (:mod:`lensbench.scoring.units`), one published :class:`Row` per model (and setting) of the paper.
* :class:`Custom`: any other computed artifact; its ``build`` function gets the
  :class:`~lensbench.report.reproduce.context.Context` and returns a
  :class:`~lensbench.report.reproduce.model.Section`.
* :class:`Claim`: one finding of the paper, stated as the paper states it with its section, and the
  test (:mod:`lensbench.report.reproduce.claims`) that checks it on the runs.
* :class:`Baseline`: a modality-necessity baseline (a run without the image, the video, the thermal
  image, or blind) whose per-item results flag what is "answerable without X".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Row", "Col", "Grid", "Custom", "Baseline", "Claim", "Paper", "ANY"]


class _Any:
    """A setting value that any value of the run satisfies (e.g. Tab. 4's average row: any best-of-N judge)."""

    def __repr__(self) -> str:
        return "ANY"


#: the setting value "any" (:class:`_Any`)
ANY = _Any()


@dataclass(frozen=True)
class Row:
    """One published row: ``label`` as printed, ``model`` the paper's model name a run is matched to
    (``--match RUN=NAME``, or the run's model name when it is exactly this), ``values`` {column name:
    published value (the paper's units) or None when not printed}, ``settings`` the protocol settings of
    this row beyond its artifact's (e.g. ``{"input": "if+rgb+text"}``). ``by_label``: the row differs from
    another row of the same model by something a run does not record (an editor, a thinking variant),
    so only ``--match RUN=LABEL`` binds a run to it."""

    label: str
    model: str
    values: Mapping[str, float | None]
    settings: Mapping[str, Any] = field(default_factory=dict)
    by_label: bool = False
    note: str = ""


@dataclass(frozen=True)
class Col:
    """One column: ``name`` as printed, the ``category`` of the metric table that computes it, and that
    table's key (None: the artifact's ``table``)."""

    name: str
    category: str
    table: str | None = None


@dataclass(frozen=True)
class Grid:
    """A computed table or figure of the paper (``id`` as the paper cites it, e.g. ``"Tab. 3"``).

    Every run of ``benchmark`` gives one row of cells (value, 95% CI, verdict against the row it is
    matched to). ``table``: the metric table's key (``"QAcc"``); ``settings``: the protocol settings all
    rows share (compared with the run's, :func:`lensbench.report.runinfo.protocol_settings`);
    ``unpublished``: why the paper prints no values (a figure drawn without numbers), else ``""``;
    ``run``: the command that makes a run this artifact can use; ``describe``: extra text columns per
    run (e.g. the image editor a GenViP run used), ``run -> {column: text}``; ``decimals``: digits the
    paper prints (a published value is consistent within half a unit of the last one).
    """

    id: str
    title: str
    benchmark: str
    table: str
    columns: Sequence[Col]
    rows: Sequence[Row] = ()
    settings: Mapping[str, Any] = field(default_factory=dict)
    unpublished: str = ""
    run: str = ""
    describe: Callable[[Any], dict[str, str]] | None = None
    decimals: int = 1


@dataclass(frozen=True)
class Custom:
    """A computed artifact built by ``build(ctx) -> Section`` (a box plot, a per-question view ...)."""

    id: str
    title: str
    build: Callable[[Any], Any]


@dataclass(frozen=True)
class Baseline:
    """A modality-necessity baseline: a run of ``benchmark`` with ``settings`` (e.g. ``{"input":
    "rgb-only"}``) sees everything but ``without`` (``"thermal image"``). Its items answered right are
    flagged "answerable without ``without``"; ``where``: label values of the items it concerns (e.g.
    ``{"group": "RGB-Th-Txt"}``; empty = all); ``table`` / ``category``: the score shown beside the
    model's; ``run``: how to make such a run; ``hit``: whether a record counts as answered (default: outcome
    ``correct``; e.g. a GOBench critique within SPS range)."""

    name: str
    without: str
    benchmark: str
    settings: Mapping[str, Any]
    table: str
    category: str
    where: Mapping[str, Any] = field(default_factory=dict)
    run: str = ""
    hit: Callable[[Any], bool] | None = None


@dataclass(frozen=True)
class Claim:
    """A finding of the paper: ``statement`` quoted or closely paraphrased, ``cite`` its place (``"Sec.
    4.3"``), ``test`` one of :mod:`lensbench.report.reproduce.claims`' tests, or a list of them."""

    id: str
    statement: str
    cite: str
    test: Any


@dataclass(frozen=True)
class Paper:
    """One paper: its ``title``, ``cite`` and the benchmark CLI names whose runs it reads.

    ``defaults``: {benchmark: its default options (JSON)} (a run whose options differ from these and
    from an artifact's ``settings`` ran another setting); ``free``: {benchmark: options that never make
    a run another setting (the model's own conventions, e.g. a box format)}; ``headline``: {benchmark:
    (table key, category)} of the score used for accuracy vs tokens; ``tables``: extra metric tables
    beyond :meth:`lensbench.benchmarks.base.Benchmark.unit_tables` (``(benchmark, records, unit tables) -> {key:
    UnitTable}``, e.g. IF-Bench's strict score); ``models``: paper model names a run may be
    matched to besides the rows' (named in claims); ``notes``: lines printed under the title;
    ``blockers``: ``run view -> [reasons]`` the paper's own reasons a run is not its measurement beyond
    options (e.g. no answer parser where the paper used one); ``clusters``: {benchmark: what one resampled
    cluster is, in words (``"scene"``)}, named beside every CI and test.
    """

    title: str
    cite: str
    benchmarks: Sequence[str]
    defaults: Mapping[str, Mapping[str, Any]]
    headline: Mapping[str, tuple[str, str]]
    artifacts: Sequence[Grid | Custom] = ()
    claims: Sequence[Claim] = ()
    baselines: Sequence[Baseline] = ()
    free: Mapping[str, frozenset[str]] = field(default_factory=dict)
    tables: Callable[[str, list, dict], dict[str, Any]] | None = None
    models: Sequence[str] = ()
    notes: Sequence[str] = ()
    blockers: Callable[[Any], list[str]] | None = None
    clusters: Mapping[str, str] = field(default_factory=dict)

    def model_names(self) -> list[str]:
        """Every name ``--match`` accepts: the rows' models and labels and :attr:`models`, in order."""
        out: list[str] = []
        for a in self.artifacts:
            for r in getattr(a, "rows", ()):
                for n in ((r.label,) if r.by_label else (r.model, r.label)):
                    if n not in out:
                        out.append(n)
        out += [m for m in self.models if m not in out]
        return out
