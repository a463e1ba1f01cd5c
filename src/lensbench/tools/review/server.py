"""The review page served from a small local aiohttp server.

Routes (all under ``/t/<token>/``, see :mod:`.guard`): ``GET`` the page (``web/review.html``);
``GET api/items?reviewer=NAME`` the form, the items and NAME's answers so far; ``GET
image/{i}/{j}`` image ``j`` of item ``i``; ``POST api/answer`` with ``{"reviewer", "item",
"values": {field: value}}`` (one action, stored in one transaction; the single-field form
``{"reviewer"|"rater", "item", "field", "value"}`` is accepted too; ``POST api/rate`` is the
same). Answers: ``{"ok": true, "stored": {...}, "done": n, "total": N}`` or ``{"ok": false,
"error": ...}`` with 400 / 403 / 415.

Files: ``image/{i}/{j}`` serves an item's image only when it resolves inside one of the page's
``roots`` (the data folders it was built from), by the rule every loader applies to media paths
(:func:`lensbench.benchmarks.fields.inside`; docs/protocol.md, general rules: media paths named by a data file
must resolve inside the data folder): a path with ``..``, an absolute path elsewhere or a symlink
out is answered 404, never served. Page builders also refuse such a path when the page starts
(:func:`check_media`: exit 2 naming the file and field). A malformed request (e.g. two ``Host``
headers) is answered 400 by aiohttp's parser; its traceback is not printed in the reviewer's terminal.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from lensbench.benchmarks.fields import inside
from lensbench.core.errors import DataError
from lensbench.core.resources import read_text
from lensbench.tools.review.form import ReviewItem, validate_reviewer
from lensbench.tools.review.guard import csp_header, guard_middleware, is_loopback, new_token
from lensbench.tools.review.store import ReviewDB

__all__ = ["make_review_app", "ReviewServer", "serve_review", "review_url", "media_path", "check_media", "MAX_BODY"]

#: Largest request body accepted (bytes).
MAX_BODY = 256 * 1024


def media_path(path: str | Path, roots: Sequence[str | Path]) -> str | None:
    """``path`` fully resolved (symlinks followed) when it lies inside one of ``roots``, else None.

    The test is :func:`lensbench.benchmarks.fields.inside` (the loaders' rule) on the resolved path
    taken relative to each resolved root, so ``..``, an absolute path elsewhere and a symlink leading
    out are all outside. The resolved path is what the caller should open (what was checked)."""
    real = os.path.realpath(path)
    for root in roots:
        rel = os.path.relpath(real, os.path.realpath(root))
        try:
            inside(root, rel, path, "image")
        except DataError:
            continue
        return real
    return None


def check_media(path: str | Path, roots: Sequence[str | Path], file: str | Path, field: str) -> None:
    """Refuse a page's media path outside its data folders before the page starts.

    Raises DataError naming ``file`` (the data file that named ``path``) and ``field`` when
    :func:`media_path` finds ``path`` outside every one of ``roots``."""
    if media_path(path, roots) is None:
        raise DataError(file, f"media path {str(path)!r} resolves outside the data folder "
                              f"{' / '.join(map(str, roots))}; refused", field=field)


class _NoMalformedTraces(logging.Filter):
    """Drops aiohttp's "Error handling request" record for a request its parser refused (answered 400)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, HttpProcessingError)


def _server_logger() -> logging.Logger:
    log = logging.getLogger(__name__)
    if not any(isinstance(f, _NoMalformedTraces) for f in log.filters):
        log.addFilter(_NoMalformedTraces())
    return log


def _image_size(path: str) -> tuple[int, int] | None:
    from PIL import Image

    try:
        with Image.open(path) as im:
            return im.size
    except (OSError, ValueError):
        return None


class _Handlers:
    """The page's request handlers over ``items`` reviewed into ``db`` (see :func:`make_review_app`)."""

    def __init__(self, items: Sequence[ReviewItem], db: ReviewDB, token: str, reviewer: str | None,
                 roots: Sequence[str | Path]):
        self.items, self.db, self.form, self.token, self.reviewer = items, db, db.form, token, reviewer
        self.roots = list(roots)
        self.keys = [it.key for it in items]
        self.index = {it.key: i for i, it in enumerate(items)}
        self.sizes: dict[int, tuple[int, int] | None] = {}
        self.html = read_text(__package__, "web", "review.html")
        self.has_box = any(f.kind == "box" for f in self.form.fields)

    def size_of(self, i: int) -> tuple[int, int] | None:
        if i not in self.sizes:
            p = media_path(self.items[i].images[0], self.roots) if self.items[i].images else None
            self.sizes[i] = _image_size(p) if p else None
        return self.sizes[i]

    async def page(self, _req: web.Request) -> web.Response:
        nonce = secrets.token_urlsafe(12)
        resp = web.Response(text=self.html.replace("<script>", f'<script nonce="{nonce}">'), content_type="text/html")
        resp.headers["Content-Security-Policy"] = csp_header(nonce)
        return resp

    async def api_items(self, req: web.Request) -> web.Response:
        name = (req.query.get("reviewer") or req.query.get("rater") or self.reviewer or "").strip()
        mine = self.db.answers(name) if name else {}
        out = []
        for i, it in enumerate(self.items):
            d = it.to_json()
            d.pop("meta")
            d.pop("images")
            d["image_urls"] = [f"image/{i}/{j}" for j in range(len(it.images))]
            if self.has_box:
                d["size"] = self.size_of(i)
            out.append(d)
        return web.json_response({"reviewer": name, "form": self.form.to_json(), "items": out,
                                  "answers": {k: v for k, v in mine.items() if k in self.index}})

    async def image(self, req: web.Request) -> web.StreamResponse:
        try:
            path = self.items[int(req.match_info["i"])].images[int(req.match_info["j"])]
        except (ValueError, IndexError):
            raise web.HTTPNotFound() from None
        real = media_path(path, self.roots)
        if real is None or not os.path.isfile(real):
            raise web.HTTPNotFound()
        return web.FileResponse(real)

    async def answer(self, req: web.Request) -> web.Response:
        try:
            body = await req.json()
        except ValueError:
            return _bad("expected a JSON object")
        if not isinstance(body, dict):
            return _bad("expected a JSON object")
        name = body.get("reviewer", body.get("rater"))
        item = body.get("item")
        values = body.get("values")
        if values is None and "field" in body:
            if not isinstance(body["field"], str):
                return _bad("field must be a string")
            values = {body["field"]: body.get("value")}
        if not isinstance(item, str) or item not in self.index:
            return _bad(f"unknown item {item!r}"[:300])
        try:
            name = validate_reviewer(name)
            needs_size = isinstance(values, dict) and any(f.kind == "box" and f.name in values for f in self.form.fields)
            stored = self.db.record(name, item, values if isinstance(values, dict) else {},
                                    self.size_of(self.index[item]) if needs_size else None)
        except ValueError as exc:
            return _bad(str(exc)[:500])
        return web.json_response({"ok": True, "stored": stored, "done": self.db.done(name, self.keys),
                                  "total": len(self.items)})

    async def add_slash(self, req: web.Request) -> web.Response:
        raise web.HTTPFound(f"/t/{self.token}/" + (f"?{req.query_string}" if req.query_string else ""))


def _bad(msg: str) -> web.Response:
    return web.json_response({"ok": False, "error": msg}, status=400)


def make_review_app(items: Sequence[ReviewItem], db: ReviewDB, *, token: str, roots: Sequence[str | Path],
                    bind_host: str = "127.0.0.1", reviewer: str | None = None) -> web.Application:
    """The aiohttp application reviewing ``items`` into ``db`` (whose form is used), reachable under
    ``/t/{token}/`` only, guarded for a server bound to ``bind_host``. ``roots``: the folders the
    items' images may come from (others are answered 404, :func:`media_path`). ``reviewer``: the
    default name when the page gives none. Registers ``items`` in ``db``. Raises ValueError for
    duplicate item keys or a store without a form."""
    if db.form is None:
        raise ValueError(f"{db.path}: the review store needs a form")
    keys = [it.key for it in items]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicate item keys")
    db.add_items(items)
    h = _Handlers(items, db, token, reviewer, roots)
    app = web.Application(middlewares=[guard_middleware(token, bind_host)], client_max_size=MAX_BODY)
    app.router.add_get("/t/{token}", h.add_slash)
    app.router.add_get("/t/{token}/", h.page)
    app.router.add_get("/t/{token}/api/items", h.api_items)
    app.router.add_get(r"/t/{token}/image/{i:\d+}/{j:\d+}", h.image)
    app.router.add_post("/t/{token}/api/answer", h.answer)
    app.router.add_post("/t/{token}/api/rate", h.answer)  # the first rating page's route
    return app


def review_url(host: str, port: int, token: str, reviewer: str | None = None) -> str:
    """The URL to open: ``http://HOST:PORT/t/TOKEN/`` (``?reviewer=NAME`` when given)."""
    from urllib.parse import quote

    h = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{h}:{port}/t/{token}/" + (f"?reviewer={quote(reviewer)}" if reviewer else "")


class ReviewServer:
    """The review app in a background thread (tests, notebooks); a context manager.

    ``url`` is ``http://HOST:PORT/t/TOKEN/``; ``port=0`` picks a free port; ``token`` defaults
    to a fresh random one; ``roots``: the folders images may be served from (:func:`make_review_app`).
    Raises RuntimeError when the server does not start in 10 s.
    """

    def __init__(self, items: Sequence[ReviewItem], db: ReviewDB, *, roots: Sequence[str | Path],
                 reviewer: str | None = None, host: str = "127.0.0.1", port: int = 0, token: str | None = None):
        self.token = token or new_token()
        self.app = make_review_app(items, db, token=self.token, roots=roots, bind_host=host, reviewer=reviewer)
        self.host, self.port = host, port
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="review-server")
        self._runner: web.AppRunner | None = None
        self._error: BaseException | None = None

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def start():
            self._runner = web.AppRunner(self.app, logger=_server_logger())
            await self._runner.setup()
            site = web.TCPSite(self._runner, self.host, self.port)
            await site.start()
            self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

        try:
            self._loop.run_until_complete(start())
        except BaseException as exc:  # noqa: BLE001 - reported by __enter__
            self._error = exc
            self._started.set()
            return
        self._started.set()
        self._loop.run_forever()

    @property
    def url(self) -> str:
        """The page's URL, token included."""
        return review_url(self.host, self.port, self.token)

    def __enter__(self) -> "ReviewServer":
        self._thread.start()
        if not self._started.wait(10) or self._error is not None:
            raise RuntimeError(f"review server did not start: {self._error}")
        return self

    def __exit__(self, *exc) -> None:
        async def stop():
            if self._runner is not None:
                await self._runner.cleanup()

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


def serve_review(items: Sequence[ReviewItem], db: ReviewDB, *, roots: Sequence[str | Path], host: str = "127.0.0.1",
                 port: int = 8765, reviewer: str | None = None, log: Callable[[str], None] = print) -> None:
    """Serve until Ctrl-C (the CLI's way): prints the URL with its fresh token, and a warning when
    ``host`` is not a loopback address. ``roots``: as :func:`make_review_app`. Raises OSError when
    the port is taken."""
    token = new_token()
    app = make_review_app(items, db, token=token, roots=roots, bind_host=host, reviewer=reviewer)
    if not is_loopback(host):
        log(f"warning: listening on {host}, beyond this machine: anyone who can reach it and learns the URL "
            "can answer; prefer 127.0.0.1 and an SSH tunnel")
    log(f"{len(items)} items; answers -> {db.path}; open {review_url(host, port, token, reviewer)}")
    web.run_app(app, host=host, port=port, print=None, logger=_server_logger())
