"""The context a benchmark's evaluation runs in: the engine, the generation parameters, the run's noted counts."""

from __future__ import annotations

from collections.abc import AsyncIterable, Sequence
from pathlib import Path
from typing import Any

from lensbench.core.types import GenParams, Request, StoredResponse

__all__ = ["RunContext"]


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
        counts: what the run noted outside the records: the counts :meth:`Benchmark.load` returned
            (:class:`~lensbench.benchmarks.steps.Loaded`), then what evaluating adds (e.g. videos decoded);
            :meth:`Benchmark.aggregate` folds them into the result's counts.
        judged: what a judge round decided, by request or sample id (IF-Bench: the parser's readings;
            GroundingME: best-of-N knockouts), read when scoring.
    """

    def __init__(self, *, run_dir: Path, data_dir: Path, seed: int, generate, has_judge: bool,
                 model_name: str, param_overrides: dict[str, Any] | None = None, console=None,
                 image_max_side: int | None = None, image_format: str = "jpeg", generate_stream=None,
                 counts: dict[str, Any] | None = None):
        self.run_dir = run_dir
        self.counts: dict[str, Any] = dict(counts or {})
        self.judged: dict[str, Any] = {}
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
