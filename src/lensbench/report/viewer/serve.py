"""Serve the viewer from a local aiohttp server (``lensbench view --serve``) for runs too big to embed.

The page is the same; images are not embedded but fetched from ``/thumb/<sha>`` (a JPEG
thumbnail made on first request) and ``/media/<sha>`` (the file as is). Only files registered
by the page's own records are served; the server listens on 127.0.0.1 by default.
"""

from __future__ import annotations

import base64
from pathlib import Path

__all__ = ["make_app", "serve"]


def make_app(html: str, paths: dict[str, Path]):
    """The aiohttp application: ``/`` the page, ``/thumb/<sha>``, ``/media/<sha>`` (404 for unknown hashes)."""
    from aiohttp import web

    from lensbench.report.viewer.media import thumbnail_data_url

    thumbs: dict[str, bytes] = {}

    async def index(_request):
        return web.Response(text=html, content_type="text/html", charset="utf-8")

    async def media(request):
        p = paths.get(request.match_info["sha"])
        if p is None or not p.is_file():
            raise web.HTTPNotFound()
        return web.FileResponse(p)

    async def thumb(request):
        sha = request.match_info["sha"]
        if sha not in thumbs:
            p = paths.get(sha)
            url = thumbnail_data_url(p)[0] if p is not None else None
            if url is None:
                raise web.HTTPNotFound()
            thumbs[sha] = base64.b64decode(url.split(",", 1)[1])
        return web.Response(body=thumbs[sha], content_type="image/jpeg")

    app = web.Application()
    app.router.add_get("/", index)
    app.router.add_get("/media/{sha}", media)
    app.router.add_get("/thumb/{sha}", thumb)
    return app


def serve(html: str, paths: dict[str, Path], host: str = "127.0.0.1", port: int = 8765) -> None:
    """Serve until interrupted (Ctrl-C)."""
    from aiohttp import web

    web.run_app(make_app(html, paths), host=host, port=port, print=lambda *a: None)
