"""Engine throughput against a local OpenAI-compatible server with fixed latency L.

For concurrency C in {1, 8, 64, 256}: requests/s, its ratio to the ideal C/L, and the
harness's CPU time per request (this process only; the server runs in its own process). Then
memory as the run grows: peak traced Python memory while sending N and 4N requests at C = 64.
Goal (issue 2): >= 0.95 of ideal at C = 64 with L = 200 ms; memory flat as the run grows.

    python benchmarks/throughput.py [--latency 0.2] [--rounds 8]

``--clients``: the two HTTP clients of ``openai:`` on one workload (issue 32.10: the lean client stays
only if it is >= 10% faster than aiohttp): C = 64, N = 64 x rounds requests, medians of ``--repeats``
alternating runs of each (``LENSBENCH_HTTP_CLIENT=lean`` / ``aiohttp``), CPU ms per request (this
process: the harness, client and engine) and requests/s.

    python benchmarks/throughput.py --clients [--latency 0.02] [--rounds 8] [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path

from lensbench.backends.base import BackendConfig
from lensbench.backends.providers import make_backend
from lensbench.runtime.engine import Engine
from lensbench.runtime.store import RunStore
from lensbench.core.types import Message, Request
from lensbench.testing.server import serve_in_subprocess




def requests(n: int, tag: str) -> list[Request]:
    return [Request(id=f"{tag}-{i}", messages=(Message.user(f"question {tag} {i}: answer yes or no"),)) for i in range(n)]


async def run_once(url: str, c: int, n: int, tag: str, store_dir: Path, mem: dict | None = None) -> tuple[float, float]:
    backend = make_backend("openai:bench", BackendConfig(base_urls=[url], timeout_s=60))
    reqs = requests(n, tag)  # the benchmark's input, built before timing
    if mem is not None:
        tracemalloc.start()
    with RunStore(store_dir) as store:
        engine = Engine({"model": backend}, store, concurrency=c, progress=False)
        cpu0, t0 = time.process_time(), time.perf_counter()
        got = await engine.run(reqs)
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        if mem is not None:
            mem["results"], mem["peak"] = tracemalloc.get_traced_memory()
            tracemalloc.stop()
    await backend.aclose()
    assert sum(r.ok for r in got.values()) == n, "some requests failed"
    return wall, cpu


async def run_raw(url: str, c: int, n: int) -> float:
    """The same load with a bare aiohttp client and no engine: what the server + machine allow."""
    import aiohttp

    body = {"model": "bench", "messages": [{"role": "user", "content": [{"type": "text", "text": "q"}]}]}
    it = iter(range(n))
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as s:
        async def worker():
            for _ in it:
                async with s.post(url + "/chat/completions", json=body) as r:
                    await r.json()

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(c)))
        return time.perf_counter() - t0


def compare_clients(url: str, rounds: int, repeats: int, c: int = 64) -> None:
    """Lean vs aiohttp on the same workload, alternating, medians (see the module docstring)."""
    n = c * rounds
    got: dict[str, list[tuple[float, float]]] = {"lean": [], "aiohttp": []}
    with tempfile.TemporaryDirectory() as td:
        for client in ("lean", "aiohttp"):  # warm both (imports, connections, the server)
            os.environ["LENSBENCH_HTTP_CLIENT"] = client
            asyncio.run(run_once(url, 8, 16, f"warm-{client}", Path(td) / f"warm-{client}"))
        for i in range(repeats):
            for client in (("lean", "aiohttp") if i % 2 == 0 else ("aiohttp", "lean")):
                os.environ["LENSBENCH_HTTP_CLIENT"] = client
                wall, cpu = asyncio.run(run_once(url, c, n, f"{client}{i}", Path(td) / f"{client}{i}"))
                got[client].append((1000 * cpu / n, n / wall))
                print(f"  run {i + 1} {client:>8}: {1000 * cpu / n:7.3f} CPU ms/req {n / wall:8.1f} req/s", flush=True)
    os.environ.pop("LENSBENCH_HTTP_CLIENT", None)
    med = {k: (statistics.median(x for x, _ in v), statistics.median(y for _, y in v)) for k, v in got.items()}
    print(f"C = {c}, N = {n}, medians of {repeats}:")
    for k, (cpu, rate) in med.items():
        print(f"  {k:>8}: {cpu:7.3f} CPU ms/req {rate:8.1f} req/s")
    (lc, lr), (ac, ar) = med["lean"], med["aiohttp"]
    print(f"  lean vs aiohttp: CPU/req {100 * (ac - lc) / ac:+.1f}% less, throughput {100 * (lr - ar) / ar:+.1f}%")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--rounds", type=int, default=8, help="requests per worker per measurement")
    ap.add_argument("--clients", action="store_true", help="compare the lean and aiohttp HTTP clients")
    ap.add_argument("--repeats", type=int, default=3, help="--clients: alternating runs of each client")
    a = ap.parse_args()
    proc, url = serve_in_subprocess(a.latency)
    if a.clients:
        try:
            print(f"server latency L = {a.latency * 1000:.0f} ms")
            compare_clients(url, a.rounds, a.repeats)
        finally:
            proc.terminate()
            proc.wait(5)
        return
    try:
        print(f"server latency L = {a.latency * 1000:.0f} ms; {a.rounds} rounds per worker")
        print(f"{'C':>5} {'N':>6} {'wall s':>8} {'req/s':>9} {'ideal C/L':>10} {'ratio':>7} {'CPU ms/req':>11} "
              f"{'bare-client ratio':>18}")
        with tempfile.TemporaryDirectory() as td:
            asyncio.run(run_once(url, 8, 16, "warm", Path(td) / "warm"))
            for c in (1, 8, 64, 256):
                n = c * a.rounds
                wall, cpu = asyncio.run(run_once(url, c, n, f"c{c}", Path(td) / f"c{c}"))
                ideal = c / a.latency
                raw = asyncio.run(run_raw(url, c, n))
                print(f"{c:>5} {n:>6} {wall:>8.2f} {n / wall:>9.1f} {ideal:>10.1f} {n / wall / ideal:>7.3f} "
                      f"{1000 * cpu / n:>11.3f} {n / raw / ideal:>18.3f}")
            print("\nmemory as the run grows (C = 64; tracemalloc, requests built before):")
            print(f"{'N':>7} {'returned replies MiB':>21} {'engine working set MiB':>23} {'peak MiB':>9}")
            for n in (1000, 4000, 16000):
                mem: dict = {}
                asyncio.run(run_once(url, 64, n, f"mem{n}", Path(td) / f"mem{n}", mem))
                print(f"{n:>7} {mem['results'] / 2**20:>21.2f} {(mem['peak'] - mem['results']) / 2**20:>23.2f} "
                      f"{mem['peak'] / 2**20:>9.2f}")
    finally:
        proc.terminate()
        proc.wait(5)


if __name__ == "__main__":
    main()
