"""A local OpenAI-compatible chat-completions server for tests and benchmarks (real HTTP).

It answers ``POST /v1/chat/completions`` on 127.0.0.1 with a reply chosen by a ``responder``
callable, after an optional fixed ``latency``, and can inject faults per request: HTTP 500,
HTTP 429 with Retry-After, a stall longer than the client's timeout, a dropped connection, or
a malformed body. It counts what it received and answered per request content, so tests can
check that nothing was answered twice.

Run standalone (for benchmarks, in its own process)::

    python -m lensbench.testing.server --port 8123 --latency 0.2
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable

from aiohttp import web

__all__ = ["FakeOpenAIServer", "FAULTS", "serve_in_subprocess", "rule_responder"]

#: Fault kinds :class:`FakeOpenAIServer` can inject.
FAULTS = ("500", "401", "403", "404", "429", "timeout", "drop", "malformed", "null_content", "no_choices", "error_object")


def _default_responder(body: dict) -> str:
    return "Yes"


def content_key(body: dict) -> str:
    """Hash of a request body's messages and sampling fields (what identifies a request)."""
    blob = json.dumps({k: body.get(k) for k in ("model", "messages", "temperature", "seed")}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


class FakeOpenAIServer:
    """Background-thread HTTP server; use as a context manager; ``url`` ends in ``/v1``.

    Args:
        responder: ``fn(body: dict) -> str`` — the reply text for a request body.
        latency: seconds to wait before answering (>= 0).
        fault_plan: ``fn(key: str, attempt: int) -> str | None`` — the fault (one of
            :data:`FAULTS`) to inject on the ``attempt``-th (1-based) arrival of the request
            with content ``key``, or None to answer normally.
        stall_s: how long a ``"timeout"`` fault stalls (longer than the client's timeout).
        retry_after: the Retry-After header (seconds) sent with 429.
        hold_after: once this many requests were answered, hold every further request
            unanswered until :meth:`release` (lets a test kill a client while nothing is in
            delivery).
        port: 0 = any free port.
    """

    def __init__(self, responder: Callable[[dict], str] | None = None, *, latency: float = 0.0,
                 fault_plan: Callable[[str, int], str | None] | None = None, stall_s: float = 5.0,
                 retry_after: float = 0.05, hold_after: int | None = None, port: int = 0,
                 host: str = "127.0.0.1"):
        self.responder = responder or _default_responder
        self.latency = latency
        self.fault_plan = fault_plan
        self.stall_s = stall_s
        self.retry_after = retry_after
        self.host = host
        self.port = port
        self.received: Counter[str] = Counter()
        self.answered: Counter[str] = Counter()
        self.faults: Counter[str] = Counter()
        self.bodies: list[dict] = []
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._ready = threading.Event()
        self.keep_bodies = True
        self.inflight = 0
        self.peak_inflight = 0  # most requests in progress at once
        self.hold_after = hold_after
        self._released: asyncio.Event | None = None

    def wait_answered(self, n: int, proc=None, timeout_s: float = 120.0) -> int:
        """Wait until ``n`` requests have been answered in all, or ``proc`` (a ``subprocess.Popen``) ended, or
        ``timeout_s`` passed; returns the number answered."""
        deadline = time.monotonic() + timeout_s
        while sum(self.answered.values()) < n and (proc is None or proc.poll() is None) and time.monotonic() < deadline:
            time.sleep(0.001)
        return sum(self.answered.values())

    def release(self) -> None:
        """Answer held requests and stop holding."""
        self.hold_after = None
        if self._loop is not None and self._released is not None:
            self._loop.call_soon_threadsafe(self._released.set)

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:PORT/v1``."""
        return f"http://{self.host}:{self.port}/v1"

    def app(self) -> web.Application:
        """The aiohttp application (for running it in another loop)."""
        a = web.Application(client_max_size=256 * 1024 * 1024)
        a.router.add_post("/v1/chat/completions", self._chat)
        a.router.add_get("/v1/models", self._models)
        return a

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "fake", "object": "model"}]})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        self.inflight += 1
        self.peak_inflight = max(self.peak_inflight, self.inflight)
        try:
            return await self._chat_inner(request)
        finally:
            self.inflight -= 1

    async def _chat_inner(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        key = content_key(body)
        with self._lock:
            self.received[key] += 1
            attempt = self.received[key]
            if self.keep_bodies:
                self.bodies.append(body)
        fault = self.fault_plan(key, attempt) if self.fault_plan else None
        if fault:
            with self._lock:
                self.faults[fault] += 1
        if fault == "500":
            return web.json_response({"error": {"message": "injected 500"}}, status=500)
        if fault in ("401", "403", "404"):
            return web.json_response({"error": {"message": f"injected {fault}"}}, status=int(fault))
        if fault == "429":
            return web.json_response({"error": {"message": "injected 429"}}, status=429,
                                     headers={"Retry-After": f"{self.retry_after:g}"})
        if fault == "timeout":
            await asyncio.sleep(self.stall_s)
            return web.json_response({"error": {"message": "stalled"}}, status=504)
        if fault == "drop":
            if request.transport is not None:
                request.transport.abort()
            raise asyncio.CancelledError()
        if fault == "malformed":
            return web.Response(text='{"choices": [{"message": ', content_type="application/json")
        if fault == "null_content":  # a 200 with no answer: a server failure (docs/protocol.md, general rules)
            return web.json_response({"id": "x", "object": "chat.completion", "model": body.get("model", "fake"),
                                      "choices": [{"index": 0, "message": {"role": "assistant", "content": None},
                                                   "finish_reason": "stop"}]})
        if fault == "no_choices":
            return web.json_response({"id": "x", "object": "chat.completion", "choices": []})
        if fault == "error_object":
            return web.json_response({"error": {"message": "injected error object", "code": 500}})
        if self.latency:
            await asyncio.sleep(self.latency)
        if self.hold_after is not None and sum(self.answered.values()) >= self.hold_after:
            await self._released.wait()
        if request.transport is None or request.transport.is_closing():
            raise asyncio.CancelledError()  # the client went away: nothing is delivered, nothing counted
        text = self.responder(body)
        with self._lock:
            self.answered[key] += 1
        return web.json_response({
            "id": f"chatcmpl-{key[:12]}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        })

    # -------------------------------------------------------------- thread
    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)

        async def start():
            self._released = asyncio.Event()
            self._runner = web.AppRunner(self.app(), access_log=None, handle_signals=False)
            await self._runner.setup()
            site = web.TCPSite(self._runner, self.host, self.port, backlog=1024)
            await site.start()
            self.port = site._server.sockets[0].getsockname()[1]

        loop.run_until_complete(start())
        self._ready.set()
        loop.run_forever()
        loop.run_until_complete(self._runner.cleanup())
        loop.close()

    def start(self) -> "FakeOpenAIServer":
        """Start serving in a daemon thread; returns self once the port is bound."""
        self._thread = threading.Thread(target=self._serve, daemon=True, name="fake-openai")
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("fake OpenAI server did not start within 10 s")
        return self

    def stop(self) -> None:
        """Stop the server and join its thread."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> "FakeOpenAIServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def serve_in_subprocess(latency: float = 0.0, timeout_s: float = 10.0):
    """Start :func:`main` in its own process on a free 127.0.0.1 port (for benchmark scripts, so the
    server's CPU is not the harness's); returns ``(Popen, base URL ending in /v1)`` once it answers.

    Raises RuntimeError when it does not answer within ``timeout_s`` seconds (the process is killed).
    """
    import socket
    import subprocess
    import sys
    import urllib.error
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "lensbench.testing.server", "--port", str(port), "--latency",
                             str(latency)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url + "/models", timeout=0.5).close()
            return proc, url
        except (urllib.error.URLError, OSError):
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"fake server did not answer within {timeout_s:g} s")


def rule_responder(rules: list[dict], default: str) -> Callable[[dict], str]:
    """A responder from substring rules ``[{"contains": TEXT, "reply": REPLY}, ...]``: the first
    rule whose TEXT occurs in the request's message texts answers; ``default`` otherwise.
    Raises ValueError for a rule without both string fields."""
    for i, r in enumerate(rules):
        if not (isinstance(r, dict) and isinstance(r.get("contains"), str) and isinstance(r.get("reply"), str)):
            raise ValueError(f"rule {i} needs string fields 'contains' and 'reply', got {r!r}")

    def respond(body: dict) -> str:
        texts = []
        for m in body.get("messages", []):
            c = m.get("content")
            texts += [c] if isinstance(c, str) else [p.get("text", "") for p in c or [] if isinstance(p, dict)]
        text = "\n".join(texts)
        return next((r["reply"] for r in rules if r["contains"] in text), default)

    return respond


def main(argv: list[str] | None = None) -> None:
    """Serve in the foreground (``--port``, ``--latency``, ``--reply``, ``--replies``)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8123)
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--reply", default="Yes", help="the reply to every request (or when no --replies rule matches)")
    ap.add_argument("--replies", default=None, help='JSON file of rules [{"contains": TEXT, "reply": REPLY}]: the '
                                                    "first rule whose TEXT is in a request's text answers it")
    a = ap.parse_args(argv)
    rules = json.loads(open(a.replies, encoding="utf-8").read()) if a.replies else []
    srv = FakeOpenAIServer(rule_responder(rules, a.reply), latency=a.latency, port=a.port)
    srv.keep_bodies = False
    web.run_app(srv.app(), host="127.0.0.1", port=a.port, access_log=None, print=lambda *x: print(*x, flush=True))


if __name__ == "__main__":
    main()
