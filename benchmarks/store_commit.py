"""The store's share of the engine's cost: an in-process backend that answers at once (no HTTP),
so what is left is the engine and its store (issue 20: every reply committed before its worker
sends again, by group commit; it must not cost the throughput the 50 ms batch commit had).

For concurrency C in {8, 64, 256} and a reply delay D in {0, 2 ms}: N requests through the engine
into a fresh store; prints requests/s, CPU microseconds per request (this process: engine + store +
SQLite), and commits per 1,000 replies (how many replies share a commit). Repeats each cell and
keeps the fastest (the machine is shared).

    python benchmarks/store_commit.py [--n 20000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from lensbench.backends.base import Backend
from lensbench.core.types import Completion, Message, Request
from lensbench.runtime.engine import Engine
from lensbench.runtime.store import RunStore


class InstantBackend(Backend):
    """Answers every request after ``delay`` seconds with a short reply and a usage dict."""

    fingerprint = "instant"

    def __init__(self, delay: float):
        self.delay = delay

    async def generate(self, request: Request) -> Completion:
        if self.delay:
            await asyncio.sleep(self.delay)
        return Completion(text="Yes, it is.", finish_reason="stop", usage={"prompt_tokens": 900, "completion_tokens": 4})


class CountingStore(RunStore):
    """A RunStore that counts its transactions (SQLite trace callback on BEGIN)."""

    def __init__(self, run_dir):
        super().__init__(run_dir)
        self.commits = 0
        self._db.set_trace_callback(self._trace)

    def _trace(self, sql: str) -> None:
        if sql == "BEGIN" or sql.startswith("INSERT OR REPLACE INTO responses") and not self._db.in_transaction:
            self.commits += 1


def one(n: int, c: int, delay: float, folder: Path) -> tuple[float, float, float]:
    reqs = [Request(id=f"q{i}", messages=(Message.user(f"question {i}: is there a person? Answer yes or no."),))
            for i in range(n)]
    with CountingStore(folder) as store:
        engine = Engine({"model": InstantBackend(delay)}, store, concurrency=c, progress=False)
        cpu0, t0 = time.process_time(), time.perf_counter()
        got = asyncio.run(engine.run(reqs))
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        assert sum(r.ok for r in got.values()) == n
        commits = store.commits
    return n / wall, 1e6 * cpu / n, 1000 * commits / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    print(f"N = {a.n} requests per cell, best of {a.repeats}")
    print(f"{'C':>5} {'delay ms':>9} {'req/s':>9} {'CPU us/req':>11} {'commits/1k replies':>19}")
    with tempfile.TemporaryDirectory() as td:
        for c in (8, 64, 256):
            for delay in (0.0, 0.002):
                best = None
                for k in range(a.repeats):
                    r = one(a.n, c, delay, Path(td) / f"c{c}-{delay}-{k}")
                    best = r if best is None or r[1] < best[1] else best
                print(f"{c:>5} {delay * 1000:>9.0f} {best[0]:>9.0f} {best[1]:>11.1f} {best[2]:>19.1f}")


if __name__ == "__main__":
    main()
