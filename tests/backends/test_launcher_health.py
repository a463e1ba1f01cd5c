"""The launcher's health probe: 200 on one of the paths, never through $http_proxy, False when down."""

from __future__ import annotations

import asyncio
import socket
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

from lensbench.backends.launcher import LaunchedServerBackend


class _Health(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        self.send_response(200 if self.path == "/health" else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *a):
        pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_probe_finds_the_healthy_path_and_ignores_proxies(monkeypatch):
    srv = HTTPServer(("127.0.0.1", 0), _Health)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    dead = f"http://127.0.0.1:{_free_port()}"
    for var in ("http_proxy", "HTTP_PROXY"):
        monkeypatch.setenv(var, dead)  # a proxy that refuses: the probe must not go through it
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    addr = f"http://127.0.0.1:{srv.server_address[1]}"
    probe = LaunchedServerBackend._healthy
    try:
        assert asyncio.run(probe(None, addr, ("/v1/models", "/health"))) is True
        assert asyncio.run(probe(None, addr, ("/v1/models",))) is False
    finally:
        srv.shutdown()
    assert asyncio.run(probe(None, dead, ("/health",))) is False
