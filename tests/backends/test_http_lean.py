"""The lean HTTP/1.1 client against small scripted asyncio servers: framing (Content-Length, chunked with
trailers, read-to-EOF, 100 Continue), keep-alive reuse and the transparent retry of a connection the server
closed while idle, and the failure mapping (timeout, refused, short body, malformed head)."""

from __future__ import annotations

import asyncio
import base64
import socket

import pytest

from lensbench.backends import http_lean
from lensbench.backends.http_body import SLICE
from lensbench.backends.http_lean import LeanClient
from lensbench.core.errors import TransportError

OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"


async def read_request(reader: asyncio.StreamReader) -> tuple[list[bytes], bytes] | None:
    """(head lines, body) of one request, or None at EOF before a request."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head[:-4].split(b"\r\n")
    n = next(int(x.split(b":")[1]) for x in lines if x.lower().startswith(b"content-length:"))
    return lines, await reader.readexactly(n)


class Scripted:
    """An asyncio server whose ``answer(conn_no, req_no, lines, body, writer)`` coroutine writes each response
    (return False to close the connection afterwards)."""

    def __init__(self, answer):
        self.answer = answer
        self.connections = 0
        self.requests: list[tuple[int, list[bytes], bytes]] = []

    async def __aenter__(self):
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/v1/chat/completions"
        return self

    async def __aexit__(self, *exc):
        self.server.close()

    async def _handle(self, reader, writer):
        self.connections += 1
        conn, k = self.connections, 0
        try:
            while (req := await read_request(reader)) is not None:
                self.requests.append((conn, *req))
                k += 1
                if await self.answer(conn, k, req[0], req[1], writer) is False:
                    break
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()


async def ok(conn, k, lines, body, w):
    w.write(OK)


def run(coro):
    return asyncio.run(coro)


def test_exact_body_and_request_head():
    big = bytes(range(256)) * (3 * SLICE // 256 + 17)
    pieces = [b'{"messages":[', b'{"x":"', big, b'"}', b"],", b'"model":"m"}']

    async def main():
        async with Scripted(ok) as srv:
            c = LeanClient()
            status, headers, body = await c.post(srv.url, {"Authorization": "Bearer k"}, pieces, 5)
            await c.close()
            return srv, status, headers, body

    srv, status, headers, body = run(main())
    assert (status, body, headers["content-type"]) == (200, b"{}", "application/json")
    (_, lines, got), = srv.requests
    assert got == b"".join(pieces)
    port = srv.url.split(":")[2].split("/")[0]
    assert lines[0] == b"POST /v1/chat/completions HTTP/1.1"
    assert set(lines[1:]) == {f"Host: 127.0.0.1:{port}".encode(), b"Content-Type: application/json",
                              b"Connection: keep-alive", b"Authorization: Bearer k",
                              f"Content-Length: {sum(map(len, pieces))}".encode()}


def test_basic_auth_from_url_credentials():
    async def main():
        async with Scripted(ok) as srv:
            c = LeanClient()
            await c.post(srv.url.replace("http://", "http://alice:s3cr%21t@"), {}, [b"{}"], 5)
            await c.close()
            return srv

    (_, lines, _), = run(main()).requests
    assert b"Authorization: Basic " + base64.b64encode(b"alice:s3cr%21t") in lines  # as aiohttp.BasicAuth sends it


def test_keep_alive_reuses_one_connection():
    async def main():
        async with Scripted(ok) as srv:
            c = LeanClient()
            for i in range(10):
                assert (await c.post(srv.url, {}, [b'{"i":%d}' % i], 5))[0] == 200
            assert c.idle_count() == 1
            await c.close()
            return srv, c

    srv, c = run(main())
    assert srv.connections == 1 == c.opened and len(srv.requests) == 10
    assert [r[2] for r in srv.requests] == [b'{"i":%d}' % i for i in range(10)]


def test_chunked_response_with_trailers_and_100_continue():
    async def answer(conn, k, lines, body, w):
        if k == 1:
            w.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            await w.drain()
            await asyncio.sleep(0.01)
            w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst")
        else:
            w.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n")
            await w.drain()
            await asyncio.sleep(0.01)
            w.write(b"6\r\n world\r\n0\r\nX-Trailer: t1\r\n\r\n")

    async def main():
        async with Scripted(answer) as srv:
            c = LeanClient()
            a = await c.post(srv.url, {}, [b"{}"], 5)
            b = await c.post(srv.url, {}, [b"{}"], 5)
            await c.close()
            return srv, a, b

    srv, a, b = run(main())
    assert a[0] == 200 and a[2] == b"first"
    assert b[0] == 200 and b[2] == b"hello world" and b[1]["x-trailer"] == "t1"
    assert srv.connections == 1


def test_connection_close_and_read_to_eof():
    async def answer(conn, k, lines, body, w):
        if conn == 1:
            w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc")
        else:  # no length: the body runs to EOF
            w.write(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + b"z" * 100_000)
        return False

    async def main():
        async with Scripted(answer) as srv:
            c = LeanClient()
            a = await c.post(srv.url, {}, [b"{}"], 5)
            b = await c.post(srv.url, {}, [b"{}"], 5)
            assert c.idle_count() == 0
            await c.close()
            return srv, a, b

    srv, a, b = run(main())
    assert a[2] == b"abc" and b[2] == b"z" * 100_000 and srv.connections == 2


def test_server_closing_an_idle_connection_is_retried_transparently(monkeypatch):
    monkeypatch.setattr(http_lean, "IDLE_RACE_S", 0.1)

    async def answer(conn, k, lines, body, w):
        if conn == 1 and k == 2:
            return False  # close without a byte as the request arrives (its keep-alive timeout crossed it)
        w.write(OK)

    async def main():
        async with Scripted(answer) as srv:
            c = LeanClient()
            a = await c.post(srv.url, {}, [b"{}"], 5)
            await asyncio.sleep(0.15)  # idle longer than IDLE_RACE_S
            b = await c.post(srv.url, {}, [b'{"n":2}'], 5)
            await c.close()
            return srv, c, a, b

    srv, c, a, b = run(main())
    assert a[0] == b[0] == 200 and srv.connections == 2 == c.opened
    assert [r[0] for r in srv.requests] == [1, 1, 2]


def test_a_request_dropped_by_the_server_is_reported_not_resent():
    """A connection reused at once and closed after the server read the whole request: the server dropped
    it while handling it; the engine must see that failure (and count its own retry)."""
    async def answer(conn, k, lines, body, w):
        if k == 2:
            return False
        w.write(OK)

    async def main():
        async with Scripted(answer) as srv:
            c = LeanClient()
            await c.post(srv.url, {}, [b"{}"], 5)
            with pytest.raises(TransportError) as ei:
                await c.post(srv.url, {}, [b'{"n":2}'], 5)
            await c.close()
            return srv, ei.value

    srv, e = run(main())
    assert e.retryable and e.kind == "other" and len(srv.requests) == 2 and srv.connections == 1


def test_idle_connection_closed_before_reuse_is_skipped():
    async def answer(conn, k, lines, body, w):
        w.write(OK)
        return False  # keep-alive advertised, but the server closes right after

    async def main():
        async with Scripted(answer) as srv:
            c = LeanClient()
            await c.post(srv.url, {}, [b"{}"], 5)
            await asyncio.sleep(0.05)  # the FIN arrives while the connection is idle
            b = await c.post(srv.url, {}, [b"{}"], 5)
            await c.close()
            return srv, b

    srv, b = run(main())
    assert b[0] == 200 and srv.connections == 2 and len(srv.requests) == 2


@pytest.mark.parametrize("reply,kind,words", [
    (b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789", "other", "10 of 100"),
    (b"HTTP/1.1 OK\r\nContent-Length: 2\r\n\r\n{}", "malformed", "status line"),
    (b"garbage\r\n\r\n", "malformed", "status line"),
    (b"HTTP/1.1 200 OK\r\nbad header\r\n\r\n", "malformed", "header"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "malformed", "chunk size"),
    (b"HTTP/1.1 200 O", "other", "response head"),
])
def test_broken_responses_are_retryable_errors(reply, kind, words):
    async def answer(conn, k, lines, body, w):
        w.write(reply)
        return False

    async def main():
        async with Scripted(answer) as srv:
            c = LeanClient()
            with pytest.raises(TransportError) as ei:
                await c.post(srv.url, {}, [b"{}"], 5, shown="http://shown/v1")
            assert c.idle_count() == 0
            await c.close()
            return ei.value

    e = run(main())
    assert e.retryable and e.kind == kind and words in str(e) and e.url == "http://shown/v1", str(e)


def test_timeout_closes_the_connection():
    async def answer(conn, k, lines, body, w):
        if k == 1:
            await asyncio.sleep(2)
        w.write(OK)

    async def main():
        async with Scripted(answer) as srv:
            c = LeanClient()
            t = asyncio.get_running_loop().time()
            with pytest.raises(TransportError) as ei:
                await c.post(srv.url, {}, [b"{}"], 0.2, shown="http://h/v1")
            took = asyncio.get_running_loop().time() - t
            assert c.idle_count() == 0 and not c._busy
            after = await c.post(srv.url, {}, [b"{}"], 5)
            await c.close()
            return ei.value, took, after, srv

    e, took, after, srv = run(main())
    assert e.kind == "timeout" and e.retryable and str(e) == "timeout after 0.2s at http://h/v1"
    assert 0.15 < took < 1.0 and after[0] == 200 and srv.connections == 2


def test_refused_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    async def main():
        c = LeanClient()
        with pytest.raises(TransportError) as ei:
            await c.post(f"http://127.0.0.1:{port}/v1/chat/completions", {}, [b"{}"], 5)
        return ei.value

    e = run(main())
    assert e.kind == "refused" and e.retryable and "connection refused at" in str(e)


def test_cancelled_request_does_not_return_its_connection():
    async def answer(conn, k, lines, body, w):
        if conn == 1:
            await asyncio.sleep(5)
        w.write(OK)

    async def main():
        async with Scripted(answer) as srv:
            c = LeanClient()
            task = asyncio.create_task(c.post(srv.url, {}, [b"{}"], 10))
            while not srv.requests:
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert c.idle_count() == 0 and not c._busy
            r = await c.post(srv.url, {}, [b"{}"], 5)
            await c.close()
            return r, srv

    r, srv = run(main())
    assert r[0] == 200 and srv.connections == 2


def test_many_concurrent_requests_all_answered():
    async def answer(conn, k, lines, body, w):
        await asyncio.sleep(0.05)
        w.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))

    async def main():
        async with Scripted(answer) as srv:
            c = LeanClient()
            outs = await asyncio.gather(*(c.post(srv.url, {}, [b'{"i":', b"%d" % i, b"}"], 20) for i in range(200)))
            again = await asyncio.gather(*(c.post(srv.url, {}, [b"{}"], 20) for i in range(200)))
            await c.close()
            return outs, again, srv, c

    outs, again, srv, c = run(main())
    assert [o[2] for o in outs] == [b'{"i":%d}' % i for i in range(200)]
    assert all(o[0] == 200 for o in again)
    assert srv.connections == c.opened == 200  # the second round reused every connection


def test_non_http_url_is_refused():
    with pytest.raises(ValueError):
        run(LeanClient().post("https://example.com/v1", {}, [b"{}"], 1))
