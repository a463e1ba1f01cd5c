"""Engine yardstick at the default settings (images passed through), against a bare client (issue 11).

Needs the yardstick's stdlib fixed-latency server (``--server``, default
``../shared/tools/engine-yardstick/fixed_latency_server.py``: 200 ms per request, writes the
busy window first -> last request on SIGTERM) and the RGB-Th-Bench ``Data`` folder.

1. ``throughput``: the 1,624 RGB-Th-Bench questions sent by a bare aiohttp client whose bodies
   (each image the released file's own bytes, base64, as lensbench sends them by default) are
   built before timing, then by ``lensbench run rgb-th-bench --concurrency 64`` with default
   settings. Prints both rates (busy window at the server), their ratio (goal >= 0.95) and the
   whole lensbench command's time beyond its busy window.
2. ``scale``: the engine in a fresh process sending N = 1,624 and N = 16,240 requests (the
   questions repeated with a numbered suffix, so each is a new request on the same 61 images);
   prints the process CPU per request beyond the first preparation of each image
   ((CPU(16k) - CPU(1.6k)) / 14,616; goal <= 0.5 ms) and the peak RSS growth (goal <= 30 MB); and
   the same CPU figure for the bare aiohttp client sending the same bodies (built before timing):
   the transport's own cost (HTTP client + socket writes of ~1.3 MB bodies), which lensbench cannot
   go below; the difference is what the harness adds.

    python benchmarks/yardstick_passthrough.py DATA_DIR [--repeats 3] [--only throughput|scale] [--image-max-side N]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_SERVER = HERE.parent.parent / "shared/tools/engine-yardstick/fixed_latency_server.py"
MIME = {b"\xff\xd8\xff": "image/jpeg", b"\x89PN": "image/png"}


def bodies(data: Path) -> list[bytes]:
    """One chat body per question of the 14 paper skills, images as their files' bytes (base64)."""
    extra = {"Numerical Text Reference Understanding", "Non-Numerical Text Reference Understanding"}
    enc: dict[Path, dict] = {}
    out = []
    for qf in sorted(data.glob("Source */*/questions.json")):
        src = qf.parent.parent
        for item in json.loads(qf.read_text())["data"]:
            if item["skill_type"] in extra:
                continue
            ids = item["data_id"] if isinstance(item["data_id"], list) else [item["data_id"]]
            parts = []
            for rel in ids:
                p = src / rel
                if p not in enc:
                    raw = p.read_bytes()
                    enc[p] = {"type": "image_url", "image_url": {
                        "url": f"data:{MIME.get(raw[:3], 'image/jpeg')};base64," + base64.b64encode(raw).decode()}}
                parts.append(enc[p])
            for qa in item["QAs"]:
                msg = {"role": "user", "content": parts + [{"type": "text", "text": qa["question"]}]}
                out.append(json.dumps({"model": "fixed", "messages": [msg], "temperature": 0}).encode())
    return out


async def send_all(url: str, items: list[bytes], conc: int) -> None:
    import aiohttp

    it = iter(items)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0),
                                     headers={"Content-Type": "application/json"}) as s:
        async def worker():
            for b in it:
                async with s.post(url + "/chat/completions", data=b) as r:
                    await r.read()
        await asyncio.gather(*(worker() for _ in range(conc)))


class Server:
    """The fixed-latency server in a subprocess; :meth:`stop` returns its stats (busy window)."""

    def __init__(self, script: Path, latency: float):
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.stats = Path(tempfile.mkstemp(suffix=".json")[1])
        self.proc = subprocess.Popen([sys.executable, str(script), str(self.port), str(latency), str(self.stats)])
        self.url = f"http://127.0.0.1:{self.port}/v1"
        time.sleep(1.0)

    def stop(self) -> dict:
        self.proc.send_signal(signal.SIGTERM)
        for _ in range(100):
            time.sleep(0.05)
            if self.stats.stat().st_size:
                break
        self.proc.kill()
        st = json.loads(self.stats.read_text())
        self.stats.unlink()
        return st


def throughput(a) -> None:
    items = bodies(a.data)
    rows = []
    for _ in range(a.repeats):
        srv = Server(a.server, a.latency)
        t0 = time.perf_counter()
        asyncio.run(send_all(srv.url, items, a.concurrency))
        bare_rps = len(items) / (time.perf_counter() - t0)
        srv.stop()
        srv = Server(a.server, a.latency)
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            r = subprocess.run([sys.executable, "-m", "lensbench", "run", "rgb-th-bench", "--data-dir", str(a.data),
                                "--model", "openai:fixed", "--base-url", srv.url, "--concurrency", str(a.concurrency),
                                "--out", f"{tmp}/run", "--no-progress"], capture_output=True, text=True,
                               env={**os.environ, "OPENAI_API_KEY": "dummy"})
            wall = time.perf_counter() - t0
        st = srv.stop()
        assert r.returncode == 0, r.stderr[-2000:]
        win = st["last"] - st["first"]
        lb_rps = st["requests"] / win
        rows.append((bare_rps, lb_rps, lb_rps / bare_rps, wall - win))
        print(f"  bare {bare_rps:.0f} req/s; lensbench {lb_rps:.0f} req/s = {lb_rps / bare_rps:.2f} x bare; "
              f"whole command = window + {wall - win:.1f} s", flush=True)
    med = [statistics.median(x) for x in zip(*rows)]
    print(f"pass-through, C={a.concurrency}, L={a.latency * 1000:.0f} ms, medians of {a.repeats}: bare {med[0]:.0f} "
          f"req/s ({med[0] * a.latency / a.concurrency:.2f} of ideal); lensbench {med[1]:.0f} req/s = {med[2]:.2f} x bare; "
          f"whole command = busy window + {med[3]:.1f} s")


SCALE_CHILD = r"""
import asyncio, json, sys, tempfile, time  # peak RSS: VmHWM (ru_maxrss keeps the parent's across fork+exec)
from pathlib import Path
from lensbench.backends.base import BackendConfig
from lensbench.backends.providers import make_backend
from lensbench.benchmarks.base import RunContext
from lensbench.benchmarks.rgbth.benchmark import RGBThBench
from lensbench.core.types import Message, Request, TextPart
from lensbench.runtime.engine import Engine
from lensbench.runtime.store import RunStore

data, url, n, conc = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
max_side = int(sys.argv[5]) or None
tmp = Path(tempfile.mkdtemp())
bench = RGBThBench()
base = bench.expand(bench.load(data), RunContext(run_dir=tmp, data_dir=data, seed=0, generate=None,
                                                 has_judge=False, model_name="m"))
reqs = []
for k in range(-(-n // len(base))):
    for r in base:
        if len(reqs) == n:
            break
        m = r.messages[0]
        parts = m.parts[:-1] + (TextPart(text=m.parts[-1].text + f" #{k}"),)
        reqs.append(Request(id=f"{r.id}#{k}", messages=(Message(role="user", parts=parts),), params=r.params))

async def main():
    backend = make_backend("openai:fixed", BackendConfig(base_urls=[url], timeout_s=60, image_max_side=max_side))
    with RunStore(tmp / "run") as store:
        engine = Engine({"model": backend}, store, concurrency=conc, progress=False)
        cpu0, t0 = time.process_time(), time.perf_counter()
        got = await engine.run(reqs)
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - t0
    await backend.aclose()
    assert sum(r.ok for r in got.values()) == n
    return cpu, wall

cpu, wall = asyncio.run(main())
print(json.dumps({"n": n, "cpu_s": cpu, "wall_s": wall,
                  "maxrss_mb": int(next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1]) / 1024}))
"""


BARE_CHILD = r"""
import asyncio, json, sys, time
sys.path.insert(0, sys.argv[4])
from pathlib import Path
from yardstick_passthrough import bodies, send_all

items = bodies(Path(sys.argv[1]))
n = int(sys.argv[3])
items = (items * (n // len(items) + 1))[:n]
cpu0 = time.process_time()
asyncio.run(send_all(sys.argv[2], items, int(sys.argv[5])))
print(json.dumps({"n": n, "cpu_s": time.process_time() - cpu0}))
"""


def _child(a, code: str, n: int, *extra: str) -> dict:
    srv = Server(a.server, a.latency)
    r = subprocess.run([sys.executable, "-c", code, str(a.data), srv.url, str(n), *extra],
                       capture_output=True, text=True, env={**os.environ, "OPENAI_API_KEY": "dummy"})
    srv.stop()
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def scale(a) -> None:
    """Engine CPU per request and peak RSS at 1.6k vs 16k requests; the bare client's CPU per request for
    the same bodies (built before timing) is the transport's own cost (aiohttp + socket writes), so
    ``lensbench - bare`` is what the harness adds."""
    ns = (1624, 16240)
    rows: dict[int, list[dict]] = {n: [] for n in ns}
    bare: dict[int, list[dict]] = {n: [] for n in ns}
    for _ in range(a.repeats):
        for n in ns:
            rows[n].append(_child(a, SCALE_CHILD, n, str(a.concurrency), str(a.image_max_side or 0)))
            if not a.image_max_side:  # the bare client sends the files' own bytes only
                bare[n].append(_child(a, BARE_CHILD, n, str(HERE), str(a.concurrency)))
        small, big = rows[ns[0]][-1], rows[ns[1]][-1]
        bare_s = (f"; bare client 1.6k {bare[ns[0]][-1]['cpu_s']:.2f} s, 16k {bare[ns[1]][-1]['cpu_s']:.2f} s CPU"
                  if bare[ns[0]] else "")
        print(f"  1.6k: {small['cpu_s']:.2f} s CPU, {small['maxrss_mb']:.0f} MB; 16k: {big['cpu_s']:.2f} s CPU, "
              f"{big['maxrss_mb']:.0f} MB{bare_s}", flush=True)
    per = [(b["cpu_s"] - s["cpu_s"]) / (ns[1] - ns[0]) * 1000 for s, b in zip(rows[ns[0]], rows[ns[1]])]
    grow = [b["maxrss_mb"] - s["maxrss_mb"] for s, b in zip(rows[ns[0]], rows[ns[1]])]
    lb = statistics.median(per)
    mode = f"images at max side {a.image_max_side}" if a.image_max_side else "pass-through"
    if bare[ns[0]]:
        per_bare = [(b["cpu_s"] - s["cpu_s"]) / (ns[1] - ns[0]) * 1000 for s, b in zip(bare[ns[0]], bare[ns[1]])]
        bc = statistics.median(per_bare)
        vs = f" (bare aiohttp client, same bodies: {bc:.3f} ms; lensbench adds {lb - bc:.3f} ms)"
    else:
        vs = ""
    print(f"scale, {mode}, C={a.concurrency}, medians of {a.repeats}: CPU per request beyond the first "
          f"preparation of each image {lb:.3f} ms{vs}; peak RSS grows {statistics.median(grow):.1f} MB "
          f"from 1.6k to 16k requests")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", type=Path, help="RGB-Th-Bench Data folder")
    ap.add_argument("--server", type=Path, default=DEFAULT_SERVER)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", choices=["throughput", "scale"])
    ap.add_argument("--image-max-side", type=int, default=None,
                    help="scale: re-encode images to this max side (smaller bodies; no bare-client figure)")
    a = ap.parse_args()
    if a.only in (None, "throughput"):
        throughput(a)
    if a.only in (None, "scale"):
        scale(a)


if __name__ == "__main__":
    main()
