"""Requests paid twice because the client's timeout gave up on a server that was merely slow (issue 30, part 9).

A loaded server (the local fake OpenAI server, with ``--slots`` requests processed at once and
``--latency`` seconds each; the rest wait in its queue) receives 1 MB images at ``--concurrency``,
in a fault storm (``--faults``: that share of first arrivals get an HTTP 500). A request the client
times out on is sent again, while the server still finishes the first one (a provider bills it):
paid twice. Per client timeout it prints: the extra calls paid (goal 0), the calls the server
worked on, the wall time, and the errors left. Each ``--timeouts`` value is measured as a fixed
timeout (``+0``: the allowance switched off, as before issue 30) and with the allowance of
:func:`lensbench.backends.base.request_timeout` (10 s per MB of request body); 120 s is the default.

    python benchmarks/timeout_rebuy.py [--n 48] [--concurrency 16] [--slots 2] [--latency 0.8] [--faults 0.3]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import random
import tempfile
import time
from collections import Counter
from pathlib import Path

from lensbench.backends.base import TIMEOUT_S_PER_MB, BackendConfig
from lensbench.backends.providers import make_backend
from lensbench.core.types import ImagePart, Message, Request, TextPart
from lensbench.runtime.engine import Engine, RetryPolicy
from lensbench.runtime.store import RunStore
from lensbench.testing.server import FakeOpenAIServer
import lensbench.backends.openai_compat as openai_compat


class LoadedServer(FakeOpenAIServer):
    """The fake server with ``slots`` requests processed at once (a GPU batch); the others queue."""

    def __init__(self, slots: int, **kw):
        super().__init__(**kw)
        self.slots = slots
        self._sem: asyncio.Semaphore | None = None

    async def _chat(self, request):
        if self._sem is None:
            self._sem = asyncio.Semaphore(self.slots)
        async with self._sem:
            return await super()._chat(request)


def one_mb_jpeg(path: Path, seed: int) -> None:
    from PIL import Image

    rnd = random.Random(seed)
    img = Image.frombytes("RGB", (920, 920), rnd.randbytes(920 * 920 * 3))
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=95)
    path.write_bytes(buf.getvalue())


async def measure(url: str, images: list[Path], timeout_s: float, c: int, work: Path) -> tuple[float, int]:
    backend = make_backend("openai:fake", BackendConfig(base_urls=[url], timeout_s=timeout_s))
    reqs = [Request(id=f"q{i}", messages=(Message(role="user", parts=(ImagePart(path=str(p)),
                                                                     TextPart(text=f"Is it warm? ({i})"))),))
            for i, p in enumerate(images)]
    with RunStore(work) as store:
        engine = Engine({"model": backend}, store, concurrency=c, progress=False,
                        retry=RetryPolicy(max_retries=6, base_delay_s=0.2, max_delay_s=2.0))
        t0 = time.perf_counter()
        got = await engine.run(reqs)
        wall = time.perf_counter() - t0
    await backend.aclose()
    return wall, sum(not r.ok for r in got.values())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=48)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--slots", type=int, default=2)
    ap.add_argument("--latency", type=float, default=0.8)
    ap.add_argument("--faults", type=float, default=0.3)
    ap.add_argument("--timeouts", default="5,30,120")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as td:
        work = Path(td)
        images = [work / f"img{i}.jpg" for i in range(a.n)]
        for i, p in enumerate(images):
            one_mb_jpeg(p, i)
        mb = sum(p.stat().st_size for p in images) / len(images) / 1e6
        print(f"{a.n} requests, one {mb:.2f} MB JPEG each (sent as base64: ~{mb * 4 / 3:.2f} MB body); server: "
              f"{a.slots} at once, {a.latency:g} s each, {a.faults:.0%} of first arrivals HTTP 500; concurrency "
              f"{a.concurrency}; allowance {TIMEOUT_S_PER_MB:g} s per MB of body")
        print(f"{'timeout_s':>10} {'allowance':>10} {'extra paid':>11} {'server calls':>13} {'wall s':>8} {'errors':>7}")
        fixed = openai_compat.request_timeout
        for t, allow in [(float(x), al) for x in a.timeouts.split(",") for al in (False, True)]:
            openai_compat.request_timeout = fixed if allow else (lambda s, _n: s)
            rnd = random.Random(0)
            faulted: Counter[str] = Counter()

            def plan(key: str, attempt: int) -> str | None:
                if attempt == 1 and rnd.random() < a.faults:
                    faulted[key] += 1
                    return "500"
                return None

            with LoadedServer(a.slots, latency=a.latency, fault_plan=plan) as srv:
                srv.keep_bodies = False
                wall, errors = asyncio.run(measure(srv.url, images, t, a.concurrency, work / f"run-{t:g}-{allow}"))
                time.sleep(a.latency * a.n / a.slots * 0.1 + 0.5)  # let abandoned calls finish on the server
                worked = {k: n - faulted[k] for k, n in srv.received.items()}
            paid_twice = sum(max(0, n - 1) for n in worked.values())
            body_mb = mb * 4 / 3
            shown = f"+{fixed(t, int(body_mb * 1e6)) - t:.1f}" if allow else "+0"
            print(f"{t:>10g} {shown:>10} {paid_twice:>11} {sum(worked.values()):>13} {wall:>8.1f} {errors:>7}",
                  flush=True)
        openai_compat.request_timeout = fixed


if __name__ == "__main__":
    main()
