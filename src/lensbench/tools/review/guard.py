"""Who may talk to a local review server: the access token, Host, Origin and Content-Type checks.

A page on any other web site can make the reviewer's browser send requests to a server on
127.0.0.1 (a ``fetch`` with ``mode: "no-cors"``, an HTML form posting ``text/plain``), and DNS
rebinding can give such a page a same-origin view of it. The defences, all applied by
:func:`guard_middleware`:

* a per-start random token in the URL path (``/t/<token>/``, a capability URL: only who was
  shown the printed URL knows it); every other path is 404;
* the ``Host`` header must name the server itself (loopback names, or the bound address), which
  defeats DNS rebinding; skipped only when bound to every interface (``0.0.0.0``/``::``);
* a state-changing request (POST) must be ``Content-Type: application/json`` (a form or a
  ``no-cors`` fetch cannot send it) and, when an ``Origin`` (or ``Sec-Fetch-Site``) header is
  present, come from the server's own origin;
* responses carry ``Referrer-Policy: no-referrer`` (the token never leaks in a Referer),
  ``Cache-Control: no-store``, ``X-Content-Type-Options: nosniff`` and a Content-Security-Policy
  that forbids framing and any script but the page's own (nonce).
"""

from __future__ import annotations

import ipaddress
import secrets

from aiohttp import web

__all__ = ["new_token", "is_loopback", "allowed_hostnames", "guard_middleware", "csp_header"]

_LOOPBACK_NAMES = {"127.0.0.1", "localhost", "::1"}


def new_token() -> str:
    """A fresh URL-safe random token (128 bits)."""
    return secrets.token_urlsafe(16)


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) is a loopback interface."""
    if host.strip("[]") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def allowed_hostnames(bind_host: str) -> set[str] | None:
    """Host names a request may carry for a server bound to ``bind_host``: the loopback names
    plus the bound address; None (any) when bound to every interface."""
    h = bind_host.strip("[]")
    if h in ("0.0.0.0", "::", ""):
        return None
    return _LOOPBACK_NAMES | {h.lower()}


def _hostname(host_header: str) -> tuple[str, str]:
    """``(hostname, port)`` of a Host header (``[::1]:8080`` -> ``("::1", "8080")``)."""
    h = host_header.strip().lower()
    if h.startswith("["):
        name, _, rest = h[1:].partition("]")
        return name, rest.lstrip(":")
    name, _, port = h.rpartition(":") if h.count(":") == 1 else (h, "", "")
    return name, port


def csp_header(nonce: str) -> str:
    """The page's Content-Security-Policy: own resources only, the page's script by ``nonce``.

    ``'unsafe-eval'`` is allowed because browser automation (playwright's ``wait_for_function``)
    polls by ``eval``; the page itself evaluates no string, and injected markup still cannot run
    (no ``'unsafe-inline'``: a script needs the nonce)."""
    return (f"default-src 'none'; script-src 'nonce-{nonce}' 'unsafe-eval'; style-src 'unsafe-inline'; img-src 'self'; "
            "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")


def _refuse(status: int, why: str) -> web.Response:
    return web.json_response({"ok": False, "error": why}, status=status)


def guard_middleware(token: str, bind_host: str):
    """An aiohttp middleware enforcing the module's rules for a server bound to ``bind_host``
    whose routes live under ``/t/{token}/``."""
    names = allowed_hostnames(bind_host)

    @web.middleware
    async def guard(request: web.Request, handler):
        name, port = _hostname(request.headers.get("Host", ""))
        sock = request.transport.get_extra_info("sockname") if request.transport else None
        own_port = str(sock[1]) if sock else ""
        if names is not None and (name not in names or (port and own_port and port != own_port)):
            return _refuse(403, "unexpected Host header")
        given = request.match_info.get("token", "")
        if not given or not secrets.compare_digest(given.encode(), token.encode()):
            return web.Response(status=404, text="not found: open the URL printed by lensbench (it carries the "
                                                 "access token)\n")
        if request.method not in ("GET", "HEAD"):
            if request.content_type != "application/json":
                return _refuse(415, "expected Content-Type: application/json")
            origin = request.headers.get("Origin")
            if origin is not None and origin.lower() != f"http://{request.headers.get('Host', '').lower()}":
                return _refuse(403, f"cross-origin request refused (Origin {origin})")
            site = request.headers.get("Sec-Fetch-Site")
            if site is not None and site not in ("same-origin", "none"):
                return _refuse(403, f"cross-site request refused (Sec-Fetch-Site {site})")
        resp = await handler(request)
        resp.headers.setdefault("Referrer-Policy", "no-referrer")
        resp.headers.setdefault("Cache-Control", "no-store")
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        resp.headers.setdefault("X-Frame-Options", "DENY")
        return resp

    return guard
