"""The benchmark contract: what a benchmark module implements (its steps, its statistics, its reports).

The context it runs in is :class:`~lensbench.benchmarks.context.RunContext`; the typed pieces the steps
pass on are in :mod:`lensbench.benchmarks.steps`.

A benchmark module holds only what is specific to it (loader, prompt builder, expansion,
parser choice, per-sample scoring, aggregation, table layout). Everything shared (engine,
store, backends, CLI plumbing, report writers) lives once, elsewhere.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel

from lensbench.benchmarks.context import RunContext
from lensbench.benchmarks.crafting import Crafter
from lensbench.benchmarks.layout import Layout
from lensbench.benchmarks.steps import Batches, Loaded, Planned, Unsent
from lensbench.core.errors import ConfigError
from lensbench.core.extras import Requirement
from lensbench.core.records import SampleRecord
from lensbench.core.interop import InteropMap
from lensbench.core.replay import ReplayFormat
from lensbench.core.results import RunResult
from lensbench.core.types import Request, StoredResponse
from lensbench.scoring.bootstrap import UnitTable
from lensbench.scoring.units import Headline

__all__ = ["Benchmark", "RunContext", "RunResult", "Loaded"]


class Benchmark(ABC):
    """Base class of a benchmark: load -> expand -> (engine) -> score -> aggregate -> tables.

    Subclasses set ``name`` (CLI name, e.g. ``"rgb-th-bench"``), ``title``, ``Options`` (a pydantic model
    whose fields become ``lensbench run NAME`` flags), the statistics facts (``headlines``, ``cluster``,
    :meth:`unit_tables`) and implement the steps, one shape for all:

    * :meth:`load` returns the samples and what loading counted (:class:`~lensbench.benchmarks.steps.Loaded`);
    * :meth:`expand` returns the requests (or :class:`~lensbench.benchmarks.steps.Batches` of them), each
      carrying its sample's id and its record's facts in ``meta`` (:class:`~lensbench.benchmarks.steps.Meta`);
    * :meth:`score` groups the replies by sample and hands each sample's (request, reply) pairs to
      :meth:`score_sample`; a request without a usable reply gets :meth:`failed` (an ``error`` record, never
      scored), one that got one :meth:`scored`;
    * :meth:`aggregate` reads the records (and the counts noted on the way) into the paper's metrics, the
      headline ones from :meth:`unit_tables`;
    * :meth:`tables` lays the results out as the paper does.

    :meth:`evaluate` runs expand -> engine -> score; a benchmark overrides it only for a judge round
    (parser calls, a pairwise knockout: :mod:`lensbench.scoring.judges`).
    """

    name: ClassVar[str]
    title: ClassVar[str]
    answer_space: ClassVar[list[str] | None] = None
    #: why the seeded random baseline (``--model random``) cannot answer this benchmark, and what to use
    #: instead (None: it can, from ``answer_space`` or each request's own); refused before anything is written
    no_random_baseline: ClassVar[str | None] = None
    #: the (option, value) that shows this benchmark's judge its choices in another order (``lensbench analyze
    #: judge --permute``), None where its judge sees no order that could change
    judge_permutation: ClassVar[tuple[str, str] | None] = None
    #: one line on what the benchmark asks (``lensbench list``)
    description: ClassVar[str] = ""
    #: size of the official release, in ``sample_unit`` (``lensbench list``); None when not fixed
    n_samples: ClassVar[int | None] = None
    sample_unit: ClassVar[str] = "samples"
    #: the headline metric(s) as the paper names them, with the table they come from (``lensbench list``)
    headline: ClassVar[str] = ""
    #: the leaderboard's cells: (metric, column, table category), each with its CI (:meth:`unit_tables`)
    headlines: ClassVar[tuple[Headline, ...]] = ()
    #: what one resampled cluster of a CI is, in words (docs/protocol.md: the largest independent cluster)
    cluster: ClassVar[str] = "sample"
    #: what one sample returned by :meth:`load` is, plural (coverage: ``"22/1,686 queries"``)
    load_unit: ClassVar[str] = "samples"
    #: the ``counts`` key of the samples :meth:`load` left out for missing media (coverage)
    skipped_key: ClassVar[str] = "n_skipped_missing"
    #: options that do not change what is measured (paths, workers, metadata): not protocol settings
    not_settings: ClassVar[frozenset[str]] = frozenset({"skip_missing"})
    #: the labels the viewer groups this benchmark's samples by by default (the first one a sample has)
    viewer_group: ClassVar[tuple[str, ...]] = ()
    #: recorded-reply formats of this benchmark that ``--model replay:FILE`` reads besides lensbench's export
    replay_formats: ClassVar[tuple[ReplayFormat, ...]] = ()
    #: how this benchmark's items map to VLMEvalKit rows and lmms-eval documents (import and export), or None
    interop: ClassVar[InteropMap | None] = None
    #: the official release: its source, the files its loader reads, its counts (``lensbench data download |
    #: check``); None when there is none to fetch
    layout: ClassVar[Layout | None] = None
    #: the optional pieces, one rule for all: piece -> ``"module:attr"`` (imported on first use, by :meth:`piece`;
    #: a literal, so the import-rule check of tests/core/test_layers.py sees it). Pieces: ``demo``
    #: (``write_demo(root) -> data folder``), ``stats`` (``dataset_stats(data_dir)``), ``reproduce``
    #: (``paper() -> Paper``), ``crafted`` (``craft_records(crafter)``), ``figures`` (``figures(runs)``); see
    #: docs/adding-a-benchmark.md. A subclass inherits its parent's.
    pieces: ClassVar[Mapping[str, str]] = {}

    class Options(BaseModel):
        """Benchmark-specific options (none by default)."""

    def __init__(self, options: BaseModel | None = None):
        self.options = options if options is not None else self.Options()

    @abstractmethod
    def load(self, data_dir: Path) -> Loaded:
        """Read the official release layout under ``data_dir`` into samples (never mutated later), with what
        loading counted (e.g. samples left out for missing media).

        Raises:
            lensbench.core.errors.DataError: naming the file and field that is wrong or missing.
        """

    def sample_id(self, sample: Any) -> str:
        """The id of ``sample`` that its requests carry in ``meta["sample_id"]`` (default: ``sample.id``)."""
        return str(sample.id)

    def expand(self, samples: Sequence[Any], ctx: RunContext) -> Planned:
        """The requests for ``samples`` (ids unique, protocol order; :class:`~lensbench.benchmarks.steps.Meta` in
        each ``meta``), with :class:`~lensbench.benchmarks.steps.Unsent` units where one cannot be sent; or
        :class:`~lensbench.benchmarks.steps.Batches` of them that become ready over time."""
        raise NotImplementedError(f"{type(self).__name__} overrides evaluate() instead of expand()")

    async def evaluate(self, samples: Sequence[Any], ctx: RunContext) -> list[SampleRecord]:
        """expand -> engine -> score -> :meth:`finish`. Overridden only for a judge round."""
        units, replies = await self.send(self.expand(samples, ctx), ctx)
        records = self.score(samples, units, replies, ctx)
        self.finish(records, ctx)
        return records

    async def send(self, planned: Planned, ctx: RunContext) -> tuple[list[Request | Unsent], dict[str, StoredResponse]]:
        """Send the requests of ``planned`` through the engine (batches as they become ready):
        ``(every unit, in the order planned, {request id: reply})``; unsent units are not sent."""
        if not isinstance(planned, Batches):
            units = list(planned)
            return units, await ctx.generate([u for u in units if isinstance(u, Request)], label=self.name)
        units = []

        async def requests():
            async for batch in planned.batches:
                units.extend(batch)
                yield [u for u in batch if isinstance(u, Request)]

        return units, await ctx.generate_stream(requests(), label=self.name, total=planned.total)

    def score(self, samples: Sequence[Any], requests: Sequence[Request | Unsent], replies: dict[str, StoredResponse],
              ctx: RunContext | None = None) -> list[SampleRecord]:
        """The records of ``samples`` in their order: each sample's units (grouped by ``meta["sample_id"]``, in
        request order) with their replies (``{request.id: reply}``) go to :meth:`score_sample`."""
        by_sample = self.pairs_by_sample(requests, replies)
        return [rec for s in samples for rec in self.score_sample(s, by_sample.get(self.sample_id(s), []), ctx)]

    @staticmethod
    def pairs_by_sample(requests: Sequence[Request | Unsent], replies: dict[str, StoredResponse]
                        ) -> dict[str, list[tuple[Request | Unsent, StoredResponse | None]]]:
        """``{meta["sample_id"]: [(unit, its reply or None), ...]}`` in request order (unsent units: None)."""
        by_sample: dict[str, list[tuple[Request | Unsent, StoredResponse | None]]] = defaultdict(list)
        for u in requests:
            by_sample[u.meta["sample_id"]].append((u, replies.get(u.id) if isinstance(u, Request) else None))
        return dict(by_sample)

    def score_sample(self, sample: Any, pairs: list[tuple[Request | Unsent, StoredResponse | None]],
                     ctx: RunContext | None) -> list[SampleRecord]:
        """The records of one sample from its (unit, reply) pairs; default one per unit: :meth:`failed` for an
        unsent unit or a missing / failed reply, else :meth:`scored`. Override when one record sums several
        replies (best-of-N)."""
        return [self.scored(sample, u, reply, ctx) if isinstance(u, Request) and reply is not None and reply.ok
                else self.failed(u, reply) for u, reply in pairs]

    def failed(self, unit: Request | Unsent, reply: StoredResponse | None) -> SampleRecord:
        """The ``error`` record of a unit without a usable reply (never scored): what was sent, the reason
        (the transport failure, ``no reply``, or the unsent unit's ``error``), and the target, labels and
        extra of its ``meta``."""
        m = unit.meta
        fields = {"target": m.get("target"), "labels": dict(m.get("labels") or {}), "extra": dict(m.get("extra") or {})}
        if isinstance(unit, Unsent):
            return SampleRecord(benchmark=self.name, sample_id=unit.id, outcome="error", error=unit.error, **fields)
        return SampleRecord.from_reply(self.name, unit.id, unit, reply, outcome="error", **fields)

    def scored(self, sample: Any, request: Request, reply: StoredResponse, ctx: RunContext | None) -> SampleRecord:
        """The record of a request that got a reply (``reply.ok``): the answer read from ``reply.text`` and
        its outcome, with the target, labels and extra of ``request.meta``."""
        raise NotImplementedError(f"{type(self).__name__} scores in score_sample() or evaluate()")

    def finish(self, records: list[SampleRecord], ctx: RunContext) -> None:
        """After scoring: files a benchmark writes into the run folder besides the run's own (IV-Bench: the
        sweep plot). Default: none."""

    @abstractmethod
    def aggregate(self, records: list[SampleRecord], noted: Mapping[str, Any] | None = None
                  ) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(metrics, counts)`` from the records (the paper's metrics, in percent) and ``noted``, the counts
        noted outside the records (:attr:`RunContext.counts`: loading's, then evaluating's), which ``counts``
        gains after its own.

        ``counts`` has at least ``n`` (scored units), ``n_unparseable`` and ``n_error``.
        """

    @classmethod
    def unit_tables(cls, records: Sequence[SampleRecord]) -> dict[str, UnitTable]:
        """``{metric: UnitTable}`` of the records: the one place each headline metric is computed
        (:meth:`aggregate` reads its values there, the CIs resample it). Default: none (no CIs).
        Tables without units are left out."""
        return {}

    @classmethod
    def release_key(cls, record: SampleRecord) -> tuple[str, str] | None:
        """``(cluster, sample)``: the cluster and the scored sample of the release (``layout.release``,
        :class:`~lensbench.benchmarks.layout.Release`) that ``record`` belongs to, as a run's coverage counts
        them (:mod:`lensbench.report.coverage`); None for a record outside the release (RGB-Th-Bench's extra
        skills). Default: the record's label named :attr:`cluster` (else its sample id) and its sample id;
        a benchmark with several records per sample (rotations, languages, sweep settings) overrides it."""
        return str(record.labels.get(cls.cluster, record.sample_id)), record.sample_id

    @classmethod
    def headline_cells(cls, metrics: dict[str, Any], tables: Callable[[], dict[str, tuple[str, Any]]]
                       ) -> list[tuple[Headline, str, dict[str, Any], str]]:
        """The leaderboard cells of a result: ``(headline, table key, metrics block, setting name)`` for each
        of :attr:`headlines`; ``tables()``: ``{table key: (metric, setting)}`` of the run's unit tables. A
        benchmark whose one run holds several settings of a headline (a sweep) gives one cell per setting."""
        return [(h, h.metric, metrics, "") for h in cls.headlines]

    @classmethod
    def headline_value(cls, block: dict[str, Any], column: str) -> Any:
        """The value shown for ``column`` of a metrics block (a headline's or another column of it)."""
        return block.get(column)

    def judge_spec(self) -> str | None:
        """A judge backend spec given through a benchmark option (used when ``--judge-model`` is absent)."""
        return None

    def dataset_stats(self, data_dir: Path) -> Any:
        """The dataset statistics of ``data_dir`` beside the paper's (``lensbench data stats``): a
        :class:`lensbench.report.datastats.DatasetStats` from its ``stats`` piece
        (:attr:`pieces`; its statistics live with it).

        Raises ConfigError when it has no ``stats`` piece; DataError for unreadable data.
        """
        return self.piece("stats", "'lensbench data stats' has no statistics")(Path(data_dir))

    def reproduction(self) -> Any:
        """The paper's declaration for ``lensbench reproduce`` (a :class:`lensbench.report.reproduce.spec.Paper`):
        its ``reproduce`` piece called (:attr:`pieces`; its tables, figures, claims and baselines live with it).
        Raises ConfigError when it has none."""
        return self.piece("reproduce", "'lensbench reproduce' has no paper declaration")()

    @classmethod
    def craft_records(cls, crafter: Crafter) -> list[SampleRecord]:
        """Crafted records in this benchmark's record shape, for tests of the report side
        (:func:`lensbench.testing.runs.craft_run`): its ``crafted`` piece (:attr:`pieces`,
        :mod:`lensbench.benchmarks.crafting`). Raises ConfigError when there is none."""
        return cls.piece("crafted", "no crafted records")(crafter)

    @classmethod
    def figures(cls, runs: Sequence[Any]) -> list[tuple[str, str, bytes]]:
        """Plots of ``runs`` (runs of this benchmark, :class:`lensbench.report.runs.LoadedRun`) as ``(kind, title,
        PNG bytes)``, kind one of :data:`lensbench.report.figures.KINDS`: its ``figures`` piece
        (:attr:`pieces`); none when it has none."""
        return cls.piece("figures", "no figures")(runs) if "figures" in cls.pieces else []

    @classmethod
    def piece(cls, name: str, missing: str = "no such piece") -> Any:
        """The optional piece ``name`` (:attr:`pieces`): its ``"module:attr"`` target, imported. Raises
        ConfigError ``"<missing> for <benchmark>"`` when the benchmark declares none (a module that fails to
        import, or lacks the attribute, raises its own error: a broken piece is a bug, not an absence)."""
        import importlib

        target = cls.pieces.get(name)
        if target is None:
            raise ConfigError(f"{missing} for {cls.name}")
        mod, _, attr = target.partition(":")
        return getattr(importlib.import_module(mod), attr)

    def count_release(self, data_dir: Path) -> int:
        """How many samples the loader reads from ``data_dir`` with the default options (``lensbench data check``
        compares it with the release's). Raises DataError (OSError, ValueError) for data it cannot read."""
        return len(self.load(data_dir))

    def absent_media(self, data_dir: Path) -> list[str]:
        """Lines naming the media the data files refer to but ``data_dir`` lacks (``lensbench data check``).
        Default: none. Raises DataError for data it cannot read."""
        return []

    def judge_use(self) -> str | None:
        """Why these options send judge / answer-parser requests (a short phrase), or None when the protocol
        has no judge round with them: then a judge flag (``--judge-model``, ``--judge-base-url``) is refused
        (:meth:`check_judge_flags`)."""
        return None

    def no_judge_reason(self) -> str:
        """The end of the refusal of a judge flag (see :meth:`judge_use`)."""
        return "its protocol scores the model's replies directly"

    def check_judge_flags(self, given: list[str]) -> None:
        """Raise ConfigError when judge flags ``given`` (flag names) are set but these options have no judge round."""
        if given and self.judge_use() is None:
            raise ConfigError(f"{', '.join(given)}: {self.name} has no judge or answer-parser round "
                              f"({self.no_judge_reason()}); leave {'it' if len(given) == 1 else 'them'} out")

    def requirements(self, data_dir: Path | None = None) -> list[Requirement]:
        """The optional modules a run with these options (on ``data_dir``) will import, checked before the
        first request (:func:`lensbench.core.extras.check_requirements`). Default: none."""
        return []

    @classmethod
    def write_demo(cls, root: Path) -> Path:
        """Write a small generated data set in the release layout under ``root`` (NOT the benchmark: for
        trying the commands offline) and return the folder to pass to ``--data-dir``.

        Its ``demo`` piece (:attr:`pieces`). Raises ConfigError when the benchmark has no demo data.
        """
        if "demo" not in cls.pieces:
            raise ConfigError(f"{cls.name} has no demo data set")
        return cls.piece("demo")(root)

    @property
    def can_draw(self) -> bool:
        """True when :meth:`draw` is implemented (``lensbench show`` has something to draw)."""
        return type(self).draw is not Benchmark.draw

    def draw(self, record: SampleRecord, out_png: Path) -> Path:
        """Draw one scored sample as a PNG (``lensbench show``); returns its path.

        Raises ConfigError when the benchmark has nothing to draw.
        """
        raise ConfigError(f"'lensbench show' has nothing to draw for {self.name}")

    @abstractmethod
    def tables(self, results: Sequence[RunResult], fmt: str = "md", with_paper: bool = False) -> str:
        """The paper's table layout for one or more runs, as ``md`` or ``csv``."""
