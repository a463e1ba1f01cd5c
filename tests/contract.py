"""The benchmarks the contract tests run on, taken from the registry (issue 35, part 1): every built-in one,
every installed plugin, and the toy plugin of ``tests/toybench`` (installed only while its test runs, by
the ``contract_bench`` fixture of ``tests/conftest.py``). A new benchmark is checked with no test file
edited; docs/adding-a-benchmark.md lists what the checks ask of it.

Parametrize with ``@pytest.mark.parametrize("contract_bench", contract_names(), indirect=True)``; the
fixture gives ``(name, class)``. :func:`data_for` gives a data folder for a benchmark (its demo data, the
toy's generated questions), :func:`scored_records` records from its own load / expand / score steps.
"""

from __future__ import annotations

import json
import random
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

__all__ = ["TOY", "KNOWN_GAPS", "contract_names", "toy_installed", "toy_data", "has_demo", "data_for", "scored_records"]

#: the CLI name of the toy plugin (tests/toybench/toy_count)
TOY = "toy-count"
TOY_DIR = Path(__file__).resolve().parent / "toybench"


#: known failures of a check by a registered benchmark, each an expected failure (strict: fixing it shows up)
KNOWN_GAPS: dict[str, dict[str, str]] = {}


def contract_names(check: str | None = None) -> list:
    """Every registered benchmark name (built-in table order, then installed plugins), then the toy plugin; those
    :data:`KNOWN_GAPS` lists for ``check`` marked as strict expected failures."""
    from lensbench.benchmarks.registry import benchmark_names

    gaps = KNOWN_GAPS.get(check or "", {})
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=gaps[n])) if n in gaps else n
            for n in dict.fromkeys([*benchmark_names(), TOY])]


@contextmanager
def toy_installed(site: Path) -> Iterator[None]:
    """The toy plugin installed as a package is: a ``toy_count-0.1.dist-info`` in ``site`` naming its entry point
    (``lensbench.benchmarks``: ``toy-count = toy_count.benchmark:ToyCount``), ``site`` and ``tests/toybench`` on
    ``sys.path``; all of it (and the imported ``toy_count`` modules) gone on leaving."""
    dist = site / "toy_count-0.1.dist-info"
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-count\nVersion: 0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text("[lensbench.benchmarks]\ntoy-count = toy_count.benchmark:ToyCount\n",
                                           encoding="utf-8")
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.syspath_prepend(str(TOY_DIR))
            mp.syspath_prepend(str(site))
            yield
    finally:
        for name in [m for m in sys.modules if m == "toy_count" or m.startswith("toy_count.")]:
            del sys.modules[name]


def toy_data(root: Path) -> Path:
    """A ToyCount data folder at ``root``: six images with 1-3 dots, two questions each (the count, and the count
    plus one), in the layout of docs/adding-a-benchmark.md."""
    from PIL import Image, ImageDraw

    rng = random.Random(5)
    items = []
    (root / "images").mkdir(parents=True)
    for i in range(6):
        n = rng.randint(1, 3)
        im = Image.new("RGB", (48, 32), "white")
        im.putpixel((i, 0), (200, 200, 200))  # every image its own file (identical requests are sent once)
        for k in range(n):
            ImageDraw.Draw(im).ellipse([4 + 14 * k, 12, 12 + 14 * k, 20], fill="black")
        im.save(root / "images" / f"img{i}.png")
        items += [{"id": f"img{i}/count", "image": f"images/img{i}.png", "question": "How many dots?",
                   "answer": str(n), "kind": "count"},
                  {"id": f"img{i}/plus1", "image": f"images/img{i}.png", "question": "How many dots, plus one?",
                   "answer": str(n + 1), "kind": "plus-one"}]
    (root / "questions.json").write_text(json.dumps(items), encoding="utf-8")
    return root


def has_demo(cls) -> bool:
    """True when the benchmark class writes demo data (a ``demo`` piece, :attr:`Benchmark.pieces`)."""
    return "demo" in cls.pieces


def data_for(name: str, cls, root: Path) -> Path:
    """A data folder for ``name`` under ``root``: the toy's questions, or the benchmark's demo data. Skips the test
    when it has no demo data, or when writing it needs a module that is not installed."""
    from lensbench.core.extras import MissingExtraError

    if name == TOY:
        return toy_data(root / "toy")
    if not has_demo(cls):
        pytest.skip(f"{name} has no demo data (no demo piece)")
    try:
        return cls.write_demo(root / "demo")
    except (ImportError, MissingExtraError) as exc:
        pytest.skip(f"{name}: its demo data needs what is not installed: {exc}")


def scored_records(cls, data: Path, seed: int):
    """Records of ``cls`` on ``data`` through its own steps: load, expand, a reply per request drawn from its
    ``answer_space`` (or Yes / No / A / B) with seed ``seed``, score."""
    from lensbench.core.types import StoredResponse

    bench = cls()
    samples = bench.load(data)
    requests = list(bench.expand(samples, None))
    rng = random.Random(seed)
    space = list(cls.answer_space or ["Yes", "No", "A", "B"])
    replies = {r.id: StoredResponse(key=r.id, request_id=r.id, status="ok", text=rng.choice(space)) for r in requests}
    return bench.score(samples, requests, replies)
