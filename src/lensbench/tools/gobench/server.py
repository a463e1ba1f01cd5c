"""The GOBench rating page: a small local aiohttp server (``lensbench gobench rate``).

One image at a time with its prompt, the five Optical Authenticity questions (Yes / No / Cannot
determine) and the two 1-5 ratings (Sec. 2.2), as the authors' rating tool (``code/human_rate.py``)
asks them. Every answer is stored in the SQLite :class:`~lensbench.benchmarks.gobench.ratings_db.RatingsDB` the
moment it is given; several raters share one database (``?rater=NAME`` or ``--rater``); a rater
who comes back resumes at the first image not fully rated. Keyboard: Y / N / C answer the
highlighted question, 1-5 the highlighted rating, Up / Down move the highlight, Left / Right
(or P / Enter) change image.

Routes: ``GET /`` (the page, ``lensbench/web/gobench_rate.html``), ``GET /api/items`` (items
and the rater's answers so far), ``GET /image/{i}``, ``POST /api/rate`` (``{rater, item, field,
value}``).
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

from aiohttp import web

from lensbench.core.errors import ConfigError
from lensbench.benchmarks.gobench.ratings_db import FIELDS, RatingsDB
from lensbench.benchmarks.gobench.records import GORecord
from lensbench.core.resources import read_text

__all__ = ["RateItem", "collect_items", "make_app", "RatingServer"]

_EXTS = {".png", ".jpg", ".jpeg", ".webp"}


@dataclass(frozen=True)
class RateItem:
    """One image to rate: ``item`` = ``<generator>/<category>/<file>`` (the database key),
    ``record`` = the record index (release layout) or scenario id (``<category>_<N>``)."""

    item: str
    generator: str
    image: str
    record: str
    category: str
    title: str
    prompt: str
    questions: tuple[str, ...]


def collect_items(images: Path, records: list[GORecord], generator: str) -> tuple[list[RateItem], list[str]]:
    """Items for the images under ``images`` (``<category>/<N.M>.png`` as released, or
    ``<category>/<N>.png`` one per scenario); returns ``(items sorted by key, unknown files)``.

    Raises ConfigError when ``images`` is not a folder or holds no GOBench image.
    """
    images = Path(images)
    if not images.is_dir():
        raise ConfigError(f"--images {images}: not a folder")
    by_image = {r.image: r for r in records}
    by_scen: dict[str, GORecord] = {}
    for r in records:
        by_scen.setdefault(r.scenario, r)
    items, unknown = [], []
    for p in sorted(images.glob("*/*")):
        if p.suffix.lower() not in _EXTS or not p.is_file():
            continue
        rel = f"{p.parent.name}/{p.name}"
        stem = rel.rsplit(".", 1)[0]
        rec = by_image.get(stem + ".png")
        rid = rec.index if rec else None
        if rec is None and stem in by_scen:
            rec, rid = by_scen[stem], stem.replace("/", "_")
        if rec is None:
            unknown.append(rel)
            continue
        items.append(RateItem(item=f"{generator}/{rel}", generator=generator, image=str(p), record=rid or "",
                              category=rec.category, title=rec.title, prompt=rec.prompt, questions=rec.questions))
    if not items:
        raise ConfigError(f"--images {images}: no GOBench images (<category>/<N.M>.png or <category>/<N>.png) found")
    return items, unknown


def make_app(items: list[RateItem], db: RatingsDB, default_rater: str | None = None) -> web.Application:
    """The aiohttp application serving the page for ``items``, storing into ``db``."""
    html = read_text(__package__, "web", "rate.html")
    db.add_items((it.item, it.generator, it.image, it.record) for it in items)
    keys = {it.item for it in items}

    async def page(_req: web.Request) -> web.Response:
        return web.Response(text=html, content_type="text/html")

    async def api_items(req: web.Request) -> web.Response:
        rater = (req.query.get("rater") or default_rater or "").strip()
        ratings = db.of_rater(rater) if rater else {}
        return web.json_response({
            "rater": rater, "fields": list(FIELDS),
            "items": [{**{k: v for k, v in asdict(it).items() if k != "image"}, "image_url": f"/image/{i}"}
                      for i, it in enumerate(items)],
            "ratings": {k: v for k, v in ratings.items() if k in keys}})

    async def image(req: web.Request) -> web.StreamResponse:
        try:
            it = items[int(req.match_info["i"])]
        except (ValueError, IndexError):
            raise web.HTTPNotFound() from None
        return web.FileResponse(it.image)

    async def rate(req: web.Request) -> web.Response:
        try:
            body = await req.json()
            rater, item, field, value = (str(body.get(k, "")) for k in ("rater", "item", "field", "value"))
        except (ValueError, AttributeError):
            return web.json_response({"ok": False, "error": "expected a JSON object"}, status=400)
        if item not in keys:
            return web.json_response({"ok": False, "error": f"unknown item {item!r}"}, status=400)
        try:
            db.set(rater, item, field, value)
        except ValueError as exc:
            return web.json_response({"ok": False, "error": str(exc)}, status=400)
        mine = db.of_rater(rater)
        done = sum(1 for k, fs in mine.items() if k in keys and all(f in fs for f in FIELDS))
        return web.json_response({"ok": True, "complete": done, "total": len(items)})

    app = web.Application()
    app.router.add_get("/", page)
    app.router.add_get("/api/items", api_items)
    app.router.add_get(r"/image/{i:\d+}", image)
    app.router.add_post("/api/rate", rate)
    return app


class RatingServer:
    """The rating app on 127.0.0.1 in a background thread (for tests and ``rate``); context manager.

    ``url`` is ``http://127.0.0.1:PORT/``; ``port=0`` picks a free port.
    """

    def __init__(self, items: list[RateItem], db: RatingsDB, *, rater: str | None = None, host: str = "127.0.0.1",
                 port: int = 0):
        self.app = make_app(items, db, rater)
        self.host, self.port = host, port
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._runner: web.AppRunner | None = None

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def start():
            self._runner = web.AppRunner(self.app)
            await self._runner.setup()
            site = web.TCPSite(self._runner, self.host, self.port)
            await site.start()
            self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            self._started.set()

        self._loop.run_until_complete(start())
        self._loop.run_forever()

    @property
    def url(self) -> str:
        """Base URL of the page."""
        return f"http://{self.host}:{self.port}/"

    def __enter__(self) -> "RatingServer":
        self._thread.start()
        if not self._started.wait(10):
            raise RuntimeError("rating server did not start")
        return self

    def __exit__(self, *exc) -> None:
        async def stop():
            if self._runner is not None:
                await self._runner.cleanup()

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
