"""A stand-in for ``vllm serve`` / ``python -m sglang.launch_server`` in tests (no GPU, no vLLM).

Takes the engines' command lines (``MODEL`` or ``--model-path MODEL``, ``--host``, ``--port``;
other flags are accepted and ignored), serves :class:`~lensbench.testing.server.FakeOpenAIServer`'s
OpenAI API plus ``/health``, and exits on SIGTERM/SIGINT. Test hooks:

* ``$LENSBENCH_STANDIN_RECORD``: a file this process writes ``{"pid", "argv"}`` to at start, and
  ``<file>.answered`` (the number of requests it answered) when it stops;
* ``--standin-fail``: print an error and exit with code 3 before serving (a model that fails to load);
* ``--standin-delay S``: wait S seconds before listening (a slow model load);
* ``--standin-reply TEXT``: the reply to every request (default "Yes");
* ``--standin-latency S``: seconds before each reply;
* ``--standin-workers N``: fork N idle worker processes first (in the engine's process group, as vLLM's
  workers are); their PIDs are recorded as ``"workers"``.

Run as ``python -m lensbench.testing.standin_engine serve MODEL --port N`` (the optional leading
``serve`` mimics ``vllm serve``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from aiohttp import web

from lensbench.testing.server import FakeOpenAIServer


def main(argv: list[str] | None = None) -> int:
    """Parse an engine-like command line and serve until SIGTERM. Returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["serve"]:
        argv = argv[1:]
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("model", nargs="?")
    ap.add_argument("--model-path")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--standin-fail", action="store_true")
    ap.add_argument("--standin-delay", type=float, default=0.0)
    ap.add_argument("--standin-reply", default="Yes")
    ap.add_argument("--standin-latency", type=float, default=0.0)
    ap.add_argument("--standin-workers", type=int, default=0)
    a, _unknown = ap.parse_known_args(argv)
    workers = [_fork_worker() for _ in range(a.standin_workers)]
    record = os.environ.get("LENSBENCH_STANDIN_RECORD")
    if record:
        with open(record + ".tmp", "w", encoding="utf-8") as fh:
            json.dump({"pid": os.getpid(), "pgid": os.getpgid(0), "argv": argv, "workers": workers}, fh)
        os.replace(record + ".tmp", record)
    print(f"stand-in engine: model {a.model or a.model_path}", flush=True)
    if a.standin_fail:
        print("RuntimeError: CUDA out of memory (stand-in failure)", file=sys.stderr, flush=True)
        return 3
    if a.standin_delay:
        time.sleep(a.standin_delay)
    srv = FakeOpenAIServer(lambda body: a.standin_reply, latency=a.standin_latency)
    srv.keep_bodies = False
    app = srv.app()

    async def health(request: web.Request) -> web.Response:
        return web.Response(text="")

    app.router.add_get("/health", health)
    web.run_app(app, host=a.host, port=a.port, access_log=None, shutdown_timeout=1.0, print=lambda *x: print(*x, flush=True))
    if record:
        with open(record + ".answered", "w", encoding="utf-8") as fh:
            fh.write(str(sum(srv.answered.values())))
    return 0


def _fork_worker() -> int:
    """Fork a child that idles until it is killed (it outlives this process unless its group is stopped;
    it gives up by itself after 10 minutes, so a failed test leaves no process for long)."""
    pid = os.fork()
    if pid == 0:  # the worker: no Python cleanup, just wait
        try:
            time.sleep(600)
        finally:
            os._exit(0)
    return pid


if __name__ == "__main__":
    sys.exit(main())
