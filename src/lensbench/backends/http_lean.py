"""A lean asyncio HTTP/1.1 client for plain-http inference servers (vLLM, SGLang, llama.cpp, LMDeploy, Ollama).

Why: aiohttp costs ~0.17 s to import (SSL contexts, CA bundle, attrs classes) and ~0.3-0.4 ms of Python
per request; a local ``http://`` endpoint needs none of its generality. :class:`LeanClient` does one
thing: ``POST`` a JSON body given as pieces (:func:`~lensbench.backends.http_body.write_plan`: large
pieces go to the socket as memoryview slices, never joined) over keep-alive connections, and read one
response. No TLS, no proxies, no redirects (a 3xx is returned like any other status), no cookies.

Connections: one pool per ``(host, port)`` with no size limit (the engine bounds concurrency); idle
connections are reused last-in first-out. A connection goes back to the pool only after a complete
response without ``Connection: close``; a cancelled, timed-out or failed request closes its
connection. A request on a *reused* connection that fails before any response byte arrives is
retried once on a fresh connection when the server cannot have read it or had likely closed the
connection while it sat idle: the failure came while sending (reset, broken pipe), or the connection
had been idle for at least :data:`IDLE_RACE_S` (servers close idle connections after their keep-alive
timeout, 5 s or more, and the close can cross our request). A connection idle for less that is
closed after the whole request went out was dropped by the server while handling it: that is an
error the engine sees and retries itself (so it counts it), not a silent second send.

Errors (:class:`~lensbench.core.errors.TransportError`, all retryable, ``url`` = the shown URL):
``kind="timeout"`` when ``timeout_s`` (connect + send + receive) runs out; ``kind="refused"`` when the
connection cannot be made (refused, DNS failure, unreachable); ``kind="malformed"`` for a malformed
status line, header or chunk; ``kind="other"`` for a connection dropped mid-request or a body shorter
than its Content-Length.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Sequence
from urllib.parse import urlsplit

from lensbench.backends.http_body import write_plan
from lensbench.backends.endpoints import connect_failure
from lensbench.core.errors import TransportError

__all__ = ["LeanClient", "basic_auth", "HEAD_LIMIT"]

#: largest status line + headers (bytes) accepted; a longer head is malformed.
HEAD_LIMIT = 64 << 10
#: seconds a pooled connection must have been idle for a close crossing the request to count as the
#: server's keep-alive timeout (retried at once) rather than a drop (reported); below common timeouts (5 s+).
IDLE_RACE_S = 1.0


def basic_auth(user: str, password: str) -> str:
    """The ``Authorization`` value for HTTP basic auth (RFC 7617), as aiohttp.BasicAuth builds it:
    ``"Basic " + base64(user:password)``, latin-1 encoded (UTF-8 when a character is outside latin-1)."""
    raw = f"{user}:{password}"
    try:
        data = raw.encode("latin1")
    except UnicodeEncodeError:
        data = raw.encode("utf-8")
    return "Basic " + base64.b64encode(data).decode("ascii")


class _Malformed(Exception):
    """The response does not parse as HTTP/1.x (status line, header, chunk size)."""


class _Conn(asyncio.Protocol):
    """One TCP connection: a receive buffer, a data waiter and write flow control."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.received = 0  # bytes received since the current request started
        self.sent = False  # the current request was handed to the transport in full
        self.idle_since = 0.0  # loop time it went back to the pool
        self.lost = False
        self.exc: BaseException | None = None
        self._waiter: asyncio.Future | None = None
        self._drain: asyncio.Future | None = None
        self._paused = False

    # ---------------------------------------------------------------- protocol callbacks
    def connection_made(self, transport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buf += data
        self.received += len(data)
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    def eof_received(self) -> bool:
        self.connection_lost(None)
        return False  # close the transport

    def connection_lost(self, exc) -> None:
        self.lost = True
        self.exc = self.exc or exc
        for f in (self._waiter, self._drain):
            if f is not None and not f.done():
                f.set_result(None)

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        d = self._drain
        if d is not None and not d.done():
            d.set_result(None)

    # ---------------------------------------------------------------- helpers for the client
    def usable(self) -> bool:
        return not self.lost and not self.buf and not self.transport.is_closing()

    async def write(self, chunks) -> None:
        """Write ``chunks`` in order, waiting while the transport's buffer is above its high-water mark.
        Raises ConnectionResetError once the connection is lost."""
        t = self.transport
        for c in chunks:
            if self.lost:
                raise ConnectionResetError("connection lost while sending")
            t.write(c)
            if self._paused:
                self._drain = asyncio.get_running_loop().create_future()
                try:
                    await self._drain
                finally:
                    self._drain = None

    async def more(self) -> bool:
        """Wait until more data arrives (True) or the connection is closed with nothing new (False)."""
        if self.lost:
            return False
        before = self.received
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None
        return self.received != before or not self.lost

    def close(self) -> None:
        self.lost = True
        if self.transport is not None:
            self.transport.abort()


def _parse_head(head: bytes) -> tuple[int, dict[str, str], bool]:
    """``(status, headers with lower-case names, HTTP/1.1?)`` from a head without its final blank line."""
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or len(parts[1]) != 3 or not parts[1].isdigit():
        raise _Malformed(f"malformed status line {bytes(lines[0][:80])!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if not sep or not name or name != name.strip():
            raise _Malformed(f"malformed header line {bytes(line[:80])!r}")
        k = name.decode("latin1").lower()
        v = value.strip().decode("latin1")
        headers[k] = headers[k] + ", " + v if k in headers else v
    return int(parts[1]), headers, parts[0] == b"HTTP/1.1"


class _Short(Exception):
    """The connection closed before the response was complete (``got`` of ``want`` body bytes; -1 unknown)."""


async def _read_response(c: _Conn) -> tuple[int, dict[str, str], bytes, bool]:
    """Read one final response from ``c``: ``(status, headers, body, keep_alive)``; 1xx responses are skipped.
    Raises _Malformed, _Short (closed early; ``c.received == 0`` tells nothing came at all)."""
    buf = c.buf
    while True:
        end = buf.find(b"\r\n\r\n")
        while end < 0:
            if len(buf) > HEAD_LIMIT:
                raise _Malformed(f"response head longer than {HEAD_LIMIT} bytes")
            if not await c.more():
                raise _Short("connection closed before the response head" if not buf else
                             f"connection closed inside the response head ({len(buf)} bytes)")
            end = buf.find(b"\r\n\r\n")
        status, headers, http11 = _parse_head(bytes(buf[:end]))
        del buf[:end + 4]
        if 100 <= status < 200 and status != 101:
            continue
        break
    conn_hdr = headers.get("connection", "").lower()
    keep = ("close" not in conn_hdr) if http11 else ("keep-alive" in conn_hdr)
    if status in (204, 304):
        return status, headers, b"", keep
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return status, headers, await _read_chunked(c, headers), keep
    cl = headers.get("content-length")
    if cl is not None:
        if not cl.isdigit():
            raise _Malformed(f"malformed Content-Length {cl[:40]!r}")
        n = int(cl)
        while len(buf) < n:
            if not await c.more():
                raise _Short(f"response body ended after {len(buf)} of {n} bytes (Content-Length)")
        body = bytes(buf[:n])
        del buf[:n]
        return status, headers, body, keep
    while await c.more():  # neither: the body runs to EOF and the connection cannot be reused
        pass
    body = bytes(buf)
    buf.clear()
    return status, headers, body, False


async def _read_chunked(c: _Conn, headers: dict[str, str]) -> bytes:
    """A chunked body (RFC 9112 section 7.1), chunk extensions ignored, trailers merged into ``headers``."""
    buf, out = c.buf, bytearray()
    while True:
        end = buf.find(b"\r\n")
        while end < 0:
            if len(buf) > HEAD_LIMIT:
                raise _Malformed("chunk size line too long")
            if not await c.more():
                raise _Short(f"chunked body ended after {len(out)} bytes")
            end = buf.find(b"\r\n")
        size_s = bytes(buf[:end]).split(b";", 1)[0].strip()
        try:
            size = int(size_s, 16)
        except ValueError:
            raise _Malformed(f"malformed chunk size {size_s[:40]!r}") from None
        if size < 0:
            raise _Malformed(f"malformed chunk size {size_s[:40]!r}")
        if size == 0:
            del buf[:end + 2]
            break
        while len(buf) < end + 2 + size + 2:
            if not await c.more():
                raise _Short(f"chunked body ended inside a chunk after {len(out)} bytes")
        if buf[end + 2 + size:end + 4 + size] != b"\r\n":
            raise _Malformed("chunk not followed by CRLF")
        out += buf[end + 2:end + 2 + size]
        del buf[:end + 4 + size]
    while True:  # trailer fields, then the blank line
        end = buf.find(b"\r\n")
        while end < 0:
            if not await c.more():
                raise _Short("chunked body ended inside the trailers")
            end = buf.find(b"\r\n")
        line = bytes(buf[:end])
        del buf[:end + 2]
        if not line:
            return bytes(out)
        name, sep, value = line.partition(b":")
        if not sep:
            raise _Malformed(f"malformed trailer line {line[:80]!r}")
        headers.setdefault(name.decode("latin1").strip().lower(), value.strip().decode("latin1"))


async def _within(seconds: float, coro):
    """Await ``coro`` for at most ``seconds`` (``asyncio.timeout`` on Python 3.11+, ``wait_for`` on 3.10)."""
    if hasattr(asyncio, "timeout"):
        async with asyncio.timeout(seconds):
            return await coro
    return await asyncio.wait_for(coro, seconds)


class LeanClient:
    """Keep-alive HTTP/1.1 ``POST`` client for ``http://`` URLs; one per event loop (not thread-safe)."""

    def __init__(self) -> None:
        self._idle: dict[tuple[str, int], list[_Conn]] = {}
        self._busy: set[_Conn] = set()
        self._targets: dict[tuple, tuple[tuple[str, int], bytes]] = {}
        #: connections opened so far (tests: keep-alive reuse).
        self.opened = 0

    def _target(self, url: str, headers: dict) -> tuple[tuple[str, int], bytes]:
        """``((host, port), request head without Content-Length and the blank line)``, cached per URL+headers."""
        key = (url, tuple(headers.items()))
        t = self._targets.get(key)
        if t is None:
            parts = urlsplit(url)
            if parts.scheme != "http" or not parts.hostname:
                raise ValueError(f"the lean client takes http://host[:port]/path URLs only, not {parts.scheme}://")
            hdrs = dict(headers)
            if parts.username is not None and not any(k.lower() == "authorization" for k in hdrs):
                hdrs["Authorization"] = basic_auth(parts.username, parts.password or "")
            host, port = parts.hostname, parts.port or 80
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            host_hdr = f"[{host}]" if ":" in host else host
            host_hdr += f":{port}" if parts.port else ""
            lines = [f"POST {path} HTTP/1.1", f"Host: {host_hdr}", "Content-Type: application/json",
                     "Connection: keep-alive"]
            lines += [f"{k}: {v}" for k, v in hdrs.items() if k.lower() not in ("host", "content-length",
                                                                                  "connection", "content-type")]
            t = (host, port), ("\r\n".join(lines) + "\r\n").encode("latin1")
            self._targets[key] = t
        return t

    async def post(self, url: str, headers: dict, pieces: Sequence[bytes], timeout_s: float,
                   shown: str | None = None) -> tuple[int, dict[str, str], bytes]:
        """POST the body ``b"".join(pieces)`` (never joined here) to ``url``; returns
        ``(status, headers with lower-case names, body bytes)`` of the final response (any status).

        Args:
            url: ``http://[user:password@]host[:port]/path``; credentials become basic auth unless
                ``headers`` has an Authorization.
            headers: extra request headers (e.g. ``Authorization``); Host, Content-Length,
                Content-Type (application/json) and Connection (keep-alive) are set here.
            pieces: the body in order.
            timeout_s: total seconds for connect + send + receive.
            shown: the URL to name in errors (default ``url``); never include credentials.
        Raises TransportError (see the module docstring); ValueError for a non-http URL.
        """
        addr, head = self._target(url, headers)
        shown = shown or url
        size = sum(map(len, pieces))
        plan = list(write_plan(pieces, size))
        first = head + b"Content-Length: %d\r\n\r\n" % size
        if plan and not isinstance(plan[0], memoryview):
            plan[0] = first + plan[0]
        else:
            plan.insert(0, first)
        try:
            return await _within(timeout_s, self._mapped(addr, plan, shown))
        except (TimeoutError, asyncio.TimeoutError):  # distinct classes before Python 3.11
            raise TransportError(f"timeout after {timeout_s:g}s at {shown}", kind="timeout", url=shown) from None

    async def _mapped(self, addr: tuple[str, int], plan: list, shown: str) -> tuple[int, dict[str, str], bytes]:
        """:meth:`_exchange` with its failures as TransportError (timeouts left to :meth:`post`)."""
        try:
            return await self._exchange(addr, plan, shown)
        except _Malformed as exc:
            raise TransportError(f"malformed response from {shown}: {exc}", kind="malformed", url=shown) from None
        except _Short as exc:
            raise TransportError(f"connection failed at {shown}: {exc}", url=shown) from None
        except OSError as exc:
            if isinstance(exc, TimeoutError):
                raise
            raise TransportError(f"connection failed at {shown}: {type(exc).__name__}: {exc}", url=shown) from None

    async def _exchange(self, addr: tuple[str, int], plan: list, shown: str) -> tuple[int, dict[str, str], bytes]:
        idle = self._idle.get(addr)
        loop = asyncio.get_running_loop()
        while idle:
            c = idle.pop()
            if c.usable():
                stale = loop.time() - c.idle_since >= IDLE_RACE_S
                try:
                    return await self._once(c, addr, plan)
                except (_Short, ConnectionError):
                    if c.received or (c.sent and not stale):
                        raise  # an answer began, or the server dropped the request it had read: reported
                break  # the server closed the connection as we reused it: once more on a fresh one
            c.close()
        try:
            _t, c = await loop.create_connection(_Conn, *addr)
        except OSError as exc:  # refused, DNS failure, unreachable (aiohttp's ClientConnectorError)
            raise connect_failure(shown, exc) from None
        self.opened += 1
        return await self._once(c, addr, plan)

    async def _once(self, c: _Conn, addr: tuple[str, int], plan: list) -> tuple[int, dict[str, str], bytes]:
        """One request/response on ``c``; ``c`` goes back to the idle pool only when all went well."""
        self._busy.add(c)
        c.received, c.sent = 0, False
        keep = False
        try:
            await c.write(plan)
            c.sent = True
            status, headers, body, keep = await _read_response(c)
            return status, headers, body
        finally:
            self._busy.discard(c)
            if keep and c.usable():
                c.idle_since = asyncio.get_running_loop().time()
                self._idle.setdefault(addr, []).append(c)
            else:
                c.close()

    def idle_count(self) -> int:
        """Idle pooled connections (all hosts)."""
        return sum(len(v) for v in self._idle.values())

    async def close(self) -> None:
        """Close every pooled and in-use connection (in-flight requests then fail)."""
        for conns in self._idle.values():
            for c in conns:
                c.close()
        self._idle.clear()
        for c in list(self._busy):
            c.close()
        self._busy.clear()
        await asyncio.sleep(0)  # let the transports run connection_lost
