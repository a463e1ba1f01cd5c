"""Serve the viewer from a local aiohttp server (``lensbench view --serve``) for runs too big to embed.

The page is the same; images are not embedded but fetched from ``/thumb/<sha>`` (a JPEG
thumbnail made on first request) and ``/media/<sha>`` (the file as is). What is served is
bounded, because a run folder may come from anyone (a crafted ``samples.jsonl`` can name any
path):

* only files registered by the page's own records, and only those inside an allowed root (each
  run's folder and its data folder from ``run.json``; a ``..`` in a path never climbs out);
* only when the file's sha256 equals the hash its record gives (checked on every request, on the
  bytes that are sent: a file swapped afterwards is not served);
* only to requests whose ``Host`` header names the address it listens on (a DNS-rebinding page
  on another origin gets 403).

The server listens on 127.0.0.1 by default; a busy port is a one-line :class:`ConfigError`.
"""

from __future__ import annotations

import base64
import errno
import hashlib
import io
import ipaddress
import mimetypes
import os
import socket
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from lensbench.core.errors import ConfigError

__all__ = ["make_app", "serve", "serve_roots", "allowed_hosts", "inside"]

_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


def serve_roots(runs: Sequence) -> list[Path]:
    """The folders whose files may be served for ``runs`` (loaded runs): each run folder and the
    data folder its ``run.json`` names."""
    roots: list[Path] = []
    for r in runs:
        roots.append(Path(r.path))
        data_dir = (r.manifest or {}).get("data_dir")
        if isinstance(data_dir, str) and data_dir:
            roots.append(Path(data_dir))
    return roots


def inside(path: Path, roots: Iterable[Path]) -> bool:
    """True when ``path`` lies under one of ``roots``, both as written (``..`` collapsed, so it never
    climbs out) and with symbolic links resolved against the resolved roots (either suffices: a
    data folder may hold links to its own blobs)."""
    lexical = os.path.normpath(os.path.abspath(path))
    real = os.path.realpath(path)
    for root in roots:
        for p, r in ((lexical, os.path.normpath(os.path.abspath(root))), (real, os.path.realpath(root))):
            if p == r or p.startswith(r.rstrip(os.sep) + os.sep):
                return True
    return False


def allowed_hosts(host: str, port: int) -> Callable[[str], bool]:
    """A predicate on a request's ``Host`` header for a server bound to ``host``:``port``.

    Loopback binds accept ``localhost``/``127.0.0.1``/``[::1]``; a wildcard bind (``0.0.0.0``,
    ``::``) also accepts any IP literal and this machine's host names; any other bind accepts its
    own name. The port must match (an absent port means 80). Names of other sites — what a
    DNS-rebinding page sends — are refused.
    """
    wildcard = host in ("", "0.0.0.0", "::")
    names = {n.lower() for n in _LOOPBACK_NAMES}
    if wildcard:
        names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
    elif host.lower() not in names:
        names.add(f"[{host.lower()}]" if ":" in host else host.lower())

    def ok(header: str) -> bool:
        h = (header or "").strip().lower()
        if h.startswith("["):
            name, _, rest = h.partition("]")
            name += "]"
            port_s = rest[1:] if rest.startswith(":") else ("" if not rest else "x")
        else:
            name, _, port_s = h.partition(":")
        if (int(port_s) if port_s.isdigit() else (80 if port_s == "" else -1)) != port:
            return False
        if name in names:
            return True
        if wildcard:
            try:
                ipaddress.ip_address(name.strip("[]"))
                return True
            except ValueError:
                return False
        return False

    return ok


def make_app(html: str, paths: dict[str, Path], roots: Sequence[Path], host_ok: Callable[[str], bool] | None = None):
    """The aiohttp application: ``/`` the page, ``/thumb/<sha>``, ``/media/<sha>``.

    ``paths``: sha256 -> file, as registered by the page. ``roots``: the folders files may come
    from (:func:`serve_roots`). ``host_ok``: Host header check (:func:`allowed_hosts`; None: any,
    for a test client). Unknown hash or missing file: 404; a file outside the roots
    or whose content does not hash to its sha: 403; a wrong Host: 403.
    """
    from aiohttp import web

    from lensbench.views.viewer.media import thumbnail_data_url

    allowed = list(roots)
    thumbs: dict[str, bytes] = {}

    @web.middleware
    async def check_host(request, handler):
        if host_ok is not None and not host_ok(request.headers.get("Host", "")):
            raise web.HTTPForbidden(text="lensbench view: unexpected Host header\n")
        return await handler(request)

    def verified(sha: str) -> tuple[Path, bytes]:
        p = paths.get(sha)
        if p is None or not p.is_file():
            raise web.HTTPNotFound()
        if not inside(p, allowed):
            raise web.HTTPForbidden(text="lensbench view: file outside the run and data folders\n")
        body = p.read_bytes()
        if hashlib.sha256(body).hexdigest() != sha:
            raise web.HTTPForbidden(text="lensbench view: file content does not match its recorded sha256\n")
        return p, body

    async def index(_request):
        return web.Response(text=html, content_type="text/html", charset="utf-8")

    async def media(request):
        p, body = verified(request.match_info["sha"])
        ctype = mimetypes.guess_type(p.name)[0] or "application/octet-stream"
        return web.Response(body=body, content_type=ctype, headers={"X-Content-Type-Options": "nosniff"})

    async def thumb(request):
        sha = request.match_info["sha"]
        if sha not in thumbs:
            _p, body = verified(sha)
            url = thumbnail_data_url(io.BytesIO(body))[0]
            if url is None:
                raise web.HTTPNotFound()
            thumbs[sha] = base64.b64decode(url.split(",", 1)[1])
        return web.Response(body=thumbs[sha], content_type="image/jpeg", headers={"X-Content-Type-Options": "nosniff"})

    app = web.Application(middlewares=[check_host])
    app.router.add_get("/", index)
    app.router.add_get("/media/{sha}", media)
    app.router.add_get("/thumb/{sha}", thumb)
    return app


def serve(html: str, paths: dict[str, Path], host: str = "127.0.0.1", port: int = 8765, *,
          roots: Sequence[Path], announce: Callable[[str], None] = lambda url: None) -> None:
    """Serve until interrupted (Ctrl-C); ``announce(url)`` is called once the port is bound
    (``port=0`` picks a free one).

    Raises ConfigError (one line) when ``host``:``port`` cannot be bound (in use, no permission).
    """
    from aiohttp import web

    try:
        sock = socket.create_server((host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET)
    except OSError as exc:
        why = "the port is in use (another server?)" if exc.errno == errno.EADDRINUSE else exc.strerror or str(exc)
        raise ConfigError(f"cannot serve on {host}:{port}: {why}; choose another with --port") from None
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    announce(f"http://{shown}:{bound}/")
    app = make_app(html, paths, roots, allowed_hosts(host, bound))
    web.run_app(app, sock=sock, print=lambda *a: None)
