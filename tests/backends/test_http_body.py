"""PiecesPayload / write_plan: the body goes out as its pieces, byte-exact, large pieces uncopied."""

from __future__ import annotations

import asyncio
import json

import pytest

from lensbench.backends.http_body import SLICE, SMALL, PiecesPayload, write_plan


def _pieces():
    big = bytes(range(32, 127)) * ((3 * SLICE + 1234) // 95)  # > 3 slices, not a multiple of SLICE
    return [b'{"messages":[', b'{"role":"user","content":[', big, b",", b"x" * SMALL, b"]}", b"],", b'"model":"m"}'], big


@pytest.mark.parametrize("limit", [None, 0, 5, 13, 13 + 26 + SLICE + 7, 10**9])
def test_write_plan_concatenates_to_the_body_up_to_the_limit(limit):
    pieces, _big = _pieces()
    whole = b"".join(pieces)
    got = b"".join(bytes(c) for c in write_plan(pieces, limit))
    assert got == (whole if limit is None else whole[:limit])


def test_large_pieces_are_slices_of_the_original_bytes_and_small_runs_are_joined():
    pieces, big = _pieces()
    plan = list(write_plan(pieces))
    views = [c for c in plan if isinstance(c, memoryview)]
    # the big image piece and the SMALL-sized piece go out as views into the very same objects
    assert all(v.obj is big or v.obj is pieces[4] for v in views)
    assert max(len(v) for v in views) == SLICE
    assert sum(len(v) for v in views if v.obj is big) == len(big)
    # the two small pieces before the image are one write, and so are the three after the last large one
    assert plan[0] == pieces[0] + pieces[1]
    assert plan[-1] == b"]}" + b"]," + b'"model":"m"}'


def test_payload_size_and_decode():
    pieces, _big = _pieces()
    p = PiecesPayload(pieces)
    assert p.size == sum(len(x) for x in pieces)
    assert p.decode() == b"".join(pieces).decode()
    assert p.headers["Content-Type"] == "application/json"


def test_server_receives_the_exact_body(tmp_path):
    """End to end through aiohttp: the request the server reads is the joined pieces, byte for byte."""
    aiohttp = pytest.importorskip("aiohttp")
    from aiohttp import web

    got = []

    async def handler(request):
        got.append(await request.read())
        return web.json_response({"ok": True})

    async def main():
        app = web.Application(client_max_size=64 << 20)
        app.router.add_post("/x", handler)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]
        pieces, _ = _pieces()
        pieces[-1] = b'"model":"m","n":' + json.dumps(len(pieces)).encode() + b"}"
        try:
            async with aiohttp.ClientSession() as s:
                for _ in range(2):  # a retry sends a new payload made from the same pieces
                    async with s.post(f"http://127.0.0.1:{port}/x", data=PiecesPayload(pieces)) as r:
                        assert r.status == 200
        finally:
            await runner.cleanup()
        return b"".join(pieces)

    whole = asyncio.run(main())
    assert got == [whole, whole]
