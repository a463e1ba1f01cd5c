"""Issue 30 items 2 and 7, probed over every review and rating page: the shared review page, IF-Bench's
calibration page, GroundingME's selection and verification pages, GOBench's rating page. Each page is
started in-process on 127.0.0.1 with four items: one image inside the data folder (the control, served),
one named through ``..``, one absolute path elsewhere, one symlink leading out; then raw HTTP requests
(traversal in the URL, encoded traversal, duplicate Host, bad JSON, JSON true / 1 / null / a list as a
rating) with the outcome asserted. The CLI pages refuse such a path at start (exit 2 naming file and field).
"""

from __future__ import annotations

import json
import logging
import socket
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from lensbench.cli.main import app
from lensbench.tools.review import Field, Form, ReviewDB, ReviewItem, ReviewServer

SECRET = "root:x:0:0:this-must-never-be-served"
PAGES = ["review", "ifbench-calibration", "gm-selection", "gm-verification", "gobench-rating"]


def _folder(tmp_path: Path) -> tuple[Path, list[str]]:
    """``data/good.png`` (inside), and the three outside paths: ``data/../secret.txt``, its absolute path,
    ``data/link.png`` -> the secret (a symlink out)."""
    data = tmp_path / "data"
    data.mkdir()
    Image.new("RGB", (40, 30), "gray").save(data / "good.png")
    (tmp_path / "secret.txt").write_text(SECRET)
    (data / "link.png").symlink_to(tmp_path / "secret.txt")
    return data, ["good.png", "../secret.txt", str(tmp_path / "secret.txt"), "link.png"]


def _ifbench_record(name: str, i: int) -> dict:
    opts = {L: f"option {L}{i}" for L in "ABCD"}
    return {"dataset": "ds", "dst_thermal_path": name,
            "question": {"dimension": "Scene Understanding", "en_question": f"What is shown {i}?",
                         "cn_question": f"问题 {i}?", "en_options": opts, "cn_options": opts, "answer": "A"}}


def _page(kind: str, tmp_path: Path):
    """``(server, db, item keys, a valid answer {field: value}, the field a rating probe uses)``."""
    data, names = _folder(tmp_path)
    paths = [str(data / n) for n in names]
    if kind == "review":
        form = Form(fields=(Field.choice("q", ("Yes", "No")),))
        db = ReviewDB(tmp_path / "r.sqlite", form)
        items = [ReviewItem(f"k{i}", (p,)) for i, p in enumerate(paths)]
        return ReviewServer(items, db, roots=[data]), db, [it.key for it in items], {"q": "Yes"}, "q"
    if kind == "ifbench-calibration":
        from lensbench.tools.ifbench.calibrate import CALIBRATION_FORM, review_items

        recs = {f"SU-{i:03d}": _ifbench_record(n, i) for i, n in enumerate(names)}
        items = review_items(recs, data)
        db = ReviewDB(tmp_path / "r.sqlite", CALIBRATION_FORM)
        return ReviewServer(items, db, roots=[data]), db, list(recs), {"decision": "accept"}, "decision"
    if kind == "gm-selection":
        from lensbench.tools.groundingme.review import selection_form, selection_items
        from lensbench.tools.groundingme.review_cli import image_roots

        work = tmp_path / "work"
        work.mkdir()
        (work / "build.json").write_text(json.dumps({"options": {"images": str(data)}}))
        cands = [{"id": f"c{i}", "image": p, "subtask_l1": "Discriminative", "subtask_l2": "Appearance",
                  "description": "the grey square", "bbox": [1, 1, 20, 20]} for i, p in enumerate(paths)]
        db = ReviewDB(tmp_path / "r.sqlite", selection_form())
        items = selection_items(cands)
        return ReviewServer(items, db, roots=image_roots(work)), db, [c["id"] for c in cands], \
            {"decision": "accept"}, "decision"
    if kind == "gm-verification":
        from lensbench.tools.groundingme.review import verification_form

        db = ReviewDB(tmp_path / "r.sqlite", verification_form())
        items = [ReviewItem(f"s{i}", (p,), info={"description": "d"}) for i, p in enumerate(paths)]
        return ReviewServer(items, db, roots=[data]), db, [it.key for it in items], {"verdict": "groundable"}, \
            "verdict"
    from lensbench.tools.gobench.ratings_db import RatingsDB
    from lensbench.tools.gobench.server import RateItem, RatingServer

    rdb = RatingsDB(tmp_path / "ratings.sqlite")
    items = [RateItem(item=f"g/direct_light_images/{i}.1.png", generator="g", image=p, record=str(i),
                      category="direct_light_images", title="t", prompt="p", questions=("q?",) * 5)
             for i, p in enumerate(paths)]
    srv = RatingServer(items, rdb, roots=[data])
    return srv, srv._review_db, [it.item for it in items], {"q1": "Yes"}, "aesthetics"


def _raw(port: int, head: str, body: bytes = b"") -> tuple[int, bytes]:
    """Send exactly ``head`` (request line and headers, CRLF-joined) and ``body``; ``(status, response body)``."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(head.encode() + b"\r\nConnection: close\r\n\r\n" + body)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    status = int(data.split(b" ", 2)[1])
    return status, data.partition(b"\r\n\r\n")[2]


def _get(srv, path: str, host: str | None = None) -> tuple[int, bytes]:
    return _raw(srv.port, f"GET /t/{srv.token}/{path} HTTP/1.1\r\nHost: {host or f'127.0.0.1:{srv.port}'}")


def _post(srv, body: bytes) -> tuple[int, bytes]:
    return _raw(srv.port, f"POST /t/{srv.token}/api/answer HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\n"
                          f"Content-Type: application/json\r\nContent-Length: {len(body)}", body)


@pytest.fixture(params=PAGES)
def page(request, tmp_path):
    srv, db, keys, good, rating = _page(request.param, tmp_path)
    with srv:
        yield srv, db, keys, good, rating
    db.close()


def test_only_files_inside_the_data_folder_are_served(page):
    srv, _db, _keys, _good, _rating = page
    status, body = _get(srv, "image/0/0")
    assert status == 200 and body[:8] == b"\x89PNG\r\n\x1a\n"  # the control: inside, served
    for i in (1, 2, 3):  # .., absolute, symlink out
        status, body = _get(srv, f"image/{i}/0")
        assert (status, SECRET.encode() in body) == (404, False), i
    for path in ("image/0/0/../../../../secret.txt", "image/%2e%2e/%2e%2e/secret.txt", "image/..%2f..%2fsecret.txt",
                 "image/0/%2e%2e%2f%2e%2e%2fsecret.txt", "image//etc/passwd", "image/9/0", "image/-1/0"):
        status, body = _get(srv, path)
        assert status == 404 and SECRET.encode() not in body and b"root:" not in body, path


def test_malformed_requests_get_400_and_no_traceback(page, caplog, capfd):
    srv, _db, _keys, _good, _rating = page
    caplog.set_level(logging.DEBUG)
    status, body = _raw(srv.port, f"GET /t/{srv.token}/ HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\nHost: evil.example")
    assert status == 400 and b"Duplicate" in body
    status, _ = _raw(srv.port, f"GET /t/{srv.token}/ HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\nBad Header Line")
    assert status == 400
    assert _get(srv, "")[0] == 200  # the server still answers
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.parametrize("value", [True, False, 1, 4, None, ["Yes"], {"v": "Yes"}])
def test_a_rating_must_be_a_json_string(page, value):
    srv, db, keys, good, rating = page
    for field in {next(iter(good)), rating}:
        status, body = _post(srv, json.dumps({"reviewer": "ann", "item": keys[0], "values": {field: value}}).encode())
        assert status == 400 and json.loads(body)["ok"] is False, (field, body)
    assert db.all_answers() == {}
    status, body = _post(srv, json.dumps({"reviewer": "ann", "item": keys[0], "values": good}).encode())
    assert status == 200 and json.loads(body)["stored"] == good  # the control
    assert db.all_answers() == {"ann": {keys[0]: good}}


@pytest.mark.parametrize("body", [b"{not json", b"", b"\xff\xfe", b"[1, 2]", b'"text"', b"null",
                                  b'{"reviewer": "ann", "item": "nope", "values": {}}'])
def test_bad_json_bodies_get_400(page, body):
    srv, db, _keys, _good, _rating = page
    status, out = _post(srv, body)
    assert status == 400 and json.loads(out)["ok"] is False
    assert db.all_answers() == {}


# --------------------------------------------------------------------------- refused at start
def test_ifbench_review_refuses_an_image_outside_the_data_folder(tmp_path, monkeypatch):
    import aiohttp.web

    served = []
    monkeypatch.setattr(aiohttp.web, "run_app", lambda app_, **kw: served.append(kw))
    data = tmp_path / "built"
    (data / "infrared_imgs").mkdir(parents=True)
    Image.new("RGB", (40, 30), "gray").save(data / "infrared_imgs" / "good.png")
    for bad in ("../../../../etc/passwd", "/etc/passwd", "good.png"):
        doc = {"Scene Understanding": [_ifbench_record("good.png", 0), _ifbench_record(bad, 1)]}
        (data / "if_bench.json").write_text(json.dumps(doc, ensure_ascii=False))
        r = CliRunner().invoke(app, ["ifbench", "review", "--data-dir", str(data), "--db", str(tmp_path / f"{len(served)}.db")])
        if bad == "good.png":  # the control: the same file with an inside path starts the page
            assert r.exit_code == 0 and len(served) == 1, r.output
            continue
        assert r.exit_code == 2 and not served, r.output
        out = " ".join(r.output.split())
        assert "if_bench.json [field 'SU-001.dst_thermal_path']" in out and "outside the data folder" in out
        assert "Traceback" not in r.output


def test_groundingme_review_refuses_an_image_outside_the_build_folders(tmp_path, monkeypatch):
    import aiohttp.web

    served = []
    monkeypatch.setattr(aiohttp.web, "run_app", lambda app_, **kw: served.append(kw))
    data, names = _folder(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    (work / "build.json").write_text(json.dumps({"options": {"images": str(data)}}))
    for name in names[1:] + names[:1]:  # the control (inside) last
        cands = [{"id": f"c{i}", "image": str(data / n), "subtask_l1": "Spatial", "subtask_l2": "Position",
                  "description": "d", "bbox": [1, 1, 5, 5]} for i, n in enumerate(("good.png", name))]
        (work / "candidates.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cands))
        r = CliRunner().invoke(app, ["groundingme", "review", "--work", str(work), "--db", str(tmp_path / "r.db")])
        if name == "good.png":
            assert r.exit_code == 0 and len(served) == 1, r.output
            continue
        out = " ".join(r.output.split())
        assert r.exit_code == 2 and not served, r.output
        assert "candidates.jsonl [field 'line 2.image']" in out and "outside the data folder" in out, out


def test_gobench_rate_refuses_a_symlink_out_of_the_images_folder(tmp_path):
    from lensbench.core.errors import DataError
    from lensbench.benchmarks.gobench.load import load_records
    from lensbench.tools.gobench.server import collect_items
    from tests.tools.test_gobench_gen import _mini_release

    data = _mini_release(tmp_path / "data")
    recs = load_records(data / "data_total.json")
    assert len(collect_items(data, recs, "g")[0]) == 4  # the control
    first = sorted(data.glob("*/*.png"))[0]
    (tmp_path / "secret.png").write_bytes(first.read_bytes())
    first.unlink()
    first.symlink_to(tmp_path / "secret.png")
    with pytest.raises(DataError, match="outside the data folder"):
        collect_items(data, recs, "g")
