"""The benchmark contract: what a benchmark module implements, and the context it runs in.

A benchmark module holds only what is specific to it (loader, prompt builder, expansion,
parser choice, per-sample scoring, aggregation, table layout). Everything shared (engine,
store, backends, CLI plumbing, report writers) lives once, elsewhere.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterable, Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel

from lensbench.benchmarks.crafting import Crafter
from lensbench.core.errors import ConfigError
from lensbench.core.extras import Requirement
from lensbench.core.records import SampleRecord
from lensbench.core.results import RunResult
from lensbench.core.types import GenParams, Request, StoredResponse
from lensbench.scoring.bootstrap import UnitTable
from lensbench.scoring.units import Headline

__all__ = ["Benchmark", "RunContext", "RunResult"]


class RunContext:
    """What a benchmark's :meth:`Benchmark.evaluate` may use.

    Attributes:
        run_dir: the run folder (created); ``media_dir`` under it caches derived media
            (downscaled images, ...). ``data_dir``: the benchmark's data folder.
        seed: the run seed (int).
        has_judge: whether a judge backend was configured (``--judge-model``).
        model_name: the evaluated model's display name.
        image_max_side / image_format: how the model backend will re-encode images
            (``--image-max-side`` px, ``--image-format``); benchmarks whose answers are in
            pixels of the sent image must account for it.
    """

    def __init__(self, *, run_dir: Path, data_dir: Path, seed: int, generate, has_judge: bool,
                 model_name: str, param_overrides: dict[str, Any] | None = None, console=None,
                 image_max_side: int | None = None, image_format: str = "jpeg", generate_stream=None):
        self.run_dir = run_dir
        self._generate_stream = generate_stream
        self._overrides = dict(param_overrides or {})
        self.image_max_side = image_max_side
        self.image_format = image_format
        self.data_dir = data_dir
        self.media_dir = run_dir / "media"
        self.media_dir.mkdir(parents=True, exist_ok=True)
        self.seed = seed
        self._generate = generate
        self.has_judge = has_judge
        self.model_name = model_name
        self.console = console

    def params(self, **defaults: Any) -> GenParams:
        """Generation parameters: the benchmark's protocol ``defaults`` overridden by the user's flags.

        ``extra_body`` dicts are merged (user keys win). Raises pydantic.ValidationError for
        out-of-range values.
        """
        merged = dict(defaults)
        for k, v in self._overrides.items():
            if k == "extra_body":
                merged["extra_body"] = {**merged.get("extra_body", {}), **v}
            elif v is not None:
                merged[k] = v
        return GenParams(**merged)

    async def generate(self, requests: Sequence[Request], *, label: str = "requests") -> dict[str, StoredResponse]:
        """Send ``requests`` through the engine (cached, deduplicated, concurrent, retried).

        Each request goes to the backend named by its ``role`` (``"model"`` or ``"judge"``).
        Returns ``{request.id: StoredResponse}`` for every request; transport failures come
        back as ``status == "error"`` rows (never as text). Request ids must be unique.
        Raises ValueError for duplicate ids, RuntimeError for a judge request without a judge.
        """
        return await self._generate(list(requests), label)

    async def generate_stream(self, batches: AsyncIterable[Sequence[Request]], *, label: str = "requests",
                              total: int | None = None) -> dict[str, StoredResponse]:
        """:meth:`generate` for request batches that become ready over time (an async iterator of
        request lists, e.g. one per decoded video): each batch is sent while later ones are still
        being prepared (the engine's one worker pool serves them all). ``total``: expected number
        of requests (progress only). Same return value and errors as :meth:`generate`, over all
        batches. Without a streaming engine (tests' plain ``generate`` functions) the batches are
        collected, then sent in one :meth:`generate` call.
        """
        if self._generate_stream is not None:
            return await self._generate_stream(batches, label, total)
        every: list[Request] = []
        async for batch in batches:
            every.extend(batch)
        return await self._generate(every, label)


class Benchmark(ABC):
    """Base class of a benchmark: load -> expand -> score -> aggregate -> tables.

    Subclasses set ``name`` (CLI name, e.g. ``"rgb-th-bench"``), ``title``, ``Options`` (a
    pydantic model whose fields become ``lensbench run NAME`` flags) and implement
    :meth:`load`, :meth:`expand`, :meth:`score`, :meth:`aggregate` and :meth:`tables`. The
    default :meth:`evaluate` sends the expanded requests through the engine and scores the
    replies; a benchmark with a judge/parser round overrides :meth:`evaluate` and uses
    :mod:`lensbench.scoring.judges`.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    answer_space: ClassVar[list[str] | None] = None
    #: one line on what the benchmark asks (``lensbench list``)
    description: ClassVar[str] = ""
    #: size of the official release, in ``sample_unit`` (``lensbench list``); None when not fixed
    n_samples: ClassVar[int | None] = None
    sample_unit: ClassVar[str] = "samples"
    #: the headline metric(s) as the paper names them, with the table they come from (``lensbench list``)
    headline: ClassVar[str] = ""
    #: the leaderboard's cells: (metric, column, table category), each with its CI (:meth:`unit_tables`)
    headlines: ClassVar[tuple[Headline, ...]] = ()
    #: what one resampled cluster of a CI is, in words (SPEC General rules: the largest independent cluster)
    cluster: ClassVar[str] = "sample"
    #: what one sample returned by :meth:`load` is, plural (coverage: ``"22/1,686 queries"``)
    load_unit: ClassVar[str] = "samples"
    #: the ``counts`` key of the samples :meth:`load` left out for missing media (coverage)
    skipped_key: ClassVar[str] = "n_skipped_missing"
    #: options that do not change what is measured (paths, workers, metadata): not protocol settings
    not_settings: ClassVar[frozenset[str]] = frozenset({"skip_missing"})
    #: the labels the viewer groups this benchmark's samples by by default (the first one a sample has)
    viewer_group: ClassVar[tuple[str, ...]] = ()

    class Options(BaseModel):
        """Benchmark-specific options (none by default)."""

    def __init__(self, options: BaseModel | None = None):
        self.options = options if options is not None else self.Options()

    @abstractmethod
    def load(self, data_dir: Path) -> list[Any]:
        """Read the official release layout under ``data_dir`` into samples (never mutated later).

        Raises:
            lensbench.core.errors.DataError: naming the file and field that is wrong or missing.
        """

    def expand(self, samples: list[Any], ctx: RunContext) -> list[Request]:
        """The model requests for ``samples`` (ids unique, order = protocol order)."""
        raise NotImplementedError(f"{type(self).__name__} overrides evaluate() instead of expand()")

    def score(self, samples: list[Any], requests: list[Request], replies: dict[str, StoredResponse],
              ctx: RunContext) -> list[SampleRecord]:
        """One :class:`SampleRecord` per scored unit from the replies (``{request.id: reply}``).

        A missing or ``error`` reply gives an ``error`` record (never scored).
        """
        raise NotImplementedError(f"{type(self).__name__} overrides evaluate() instead of score()")

    async def evaluate(self, samples: list[Any], ctx: RunContext) -> list[SampleRecord]:
        """expand -> engine -> score. Override for judge rounds (parser calls, pairwise knockout)."""
        requests = self.expand(samples, ctx)
        replies = await ctx.generate(requests, label=self.name)
        return self.score(samples, requests, replies, ctx)

    @abstractmethod
    def aggregate(self, records: list[SampleRecord]) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(metrics, counts)`` from the records (the paper's metrics, in percent).

        ``counts`` has at least ``n`` (scored units), ``n_unparseable`` and ``n_error``.
        """

    @classmethod
    def unit_tables(cls, records: Sequence[SampleRecord]) -> dict[str, UnitTable]:
        """``{metric: UnitTable}`` of the records: the one place each headline metric is computed
        (:meth:`aggregate` reads its values there, the CIs resample it). Default: none (no CIs).
        Tables without units are left out."""
        return {}

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
        :class:`lensbench.report.datastats.DatasetStats` from ``dataset_stats(data_dir)`` of the
        ``stats`` module in this benchmark's own package (its statistics live with it).

        Raises ConfigError when the package has no ``stats`` module; DataError for unreadable data.
        """
        return self._own_module("stats", "'lensbench data stats' has no statistics").dataset_stats(Path(data_dir))

    @classmethod
    def craft_records(cls, crafter: Crafter) -> list[SampleRecord]:
        """Crafted records in this benchmark's record shape, for tests of the report side
        (:func:`lensbench.testing.runs.craft_run`): ``craft_records(crafter)`` of the ``crafted`` module in
        this benchmark's own package (:mod:`lensbench.benchmarks.crafting`). Raises ConfigError when there
        is none."""
        return cls._own_module("crafted", "no crafted records").craft_records(crafter)

    @classmethod
    def figures(cls, runs: Sequence[Any]) -> list[tuple[str, str, bytes]]:
        """Plots of ``runs`` (runs of this benchmark, :class:`lensbench.report.runs.LoadedRun`) as ``(kind, title,
        PNG bytes)``, kind one of :data:`lensbench.report.figures.KINDS`: ``figures(runs)`` of the ``figures``
        module in this benchmark's own package; none when it has no such module."""
        try:
            mod = cls._own_module("figures", "no figures")
        except ConfigError:
            return []
        return mod.figures(runs)

    @classmethod
    def _own_module(cls, name: str, missing: str) -> Any:
        """The module ``name`` of this benchmark's package. Raises ConfigError ``"<missing> for <benchmark>"``
        when the package has none (a module that exists but fails to import raises its own error)."""
        import importlib

        target = f"{cls.__module__.rpartition('.')[0]}.{name}"
        try:
            return importlib.import_module(target)
        except ModuleNotFoundError as exc:
            if not exc.name or not target.startswith(exc.name):
                raise  # the module exists but imports something missing
            raise ConfigError(f"{missing} for {cls.name}") from None

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

        Raises ConfigError when the benchmark has no demo data.
        """
        raise ConfigError(f"{cls.name} has no demo data set")

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
