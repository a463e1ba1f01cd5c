"""The shared review component without a browser: form validation, the store (one transaction per
action, several files), CSV / JSONL export, the accept / edit / reject outcome, agreement figures
against published or hand-computed values, and the server's answers at the HTTP level."""

from __future__ import annotations

import json
import sqlite3
import urllib.error
import urllib.request

import pytest
from PIL import Image

from lensbench.tools.review import (DECISIONS, Field, Form, ReviewDB, ReviewItem, ReviewServer, Section, agreement,
                                    binary_scores, cohen_kappa, export_answers, fleiss_kappa, merged_answers,
                                    percent_agreement, read_csv, resolve)

FORM = Form(fields=(Field.decision(), Field.text("question", "Question"), Field.box("box", "Object")),
            info=("source",), title="Calibration")


def _items(tmp_path, n=3):
    Image.new("RGB", (100, 80), "gray").save(tmp_path / "a.png")
    return [ReviewItem(f"k{i}", (str(tmp_path / "a.png"),), info={"source": f"s{i}"}, texts={"question": f"Q{i}?"},
                       boxes={"box": [10, 10, 50, 40]}, meta={"id": i}) for i in range(n)]


# --------------------------------------------------------------------------- form
def test_field_values_are_validated_and_canonical():
    yn = Field.choice("q", ("Yes", "No", "Cannot determine"))
    assert yn.clean(" cannot   DETERMINE ") == "Cannot determine"
    with pytest.raises(ValueError, match="one of"):
        yn.clean("maybe")
    with pytest.raises(ValueError):
        yn.clean(True)
    s = Field.scale("aes")
    assert s.options == ("1", "2", "3", "4", "5") and s.clean("4") == "4" and s.level == "interval"
    for bad in (4, True, None, ["4"]):  # issue 30 item 7: only strings; a JSON number or true is refused
        with pytest.raises(ValueError, match="as a string"):
            s.clean(bad)
    with pytest.raises(ValueError):
        s.clean("6")
    assert Field.decision().options == DECISIONS
    j = Field.judge("groundable", "groundable", "not groundable")
    assert j.clean("Not Groundable") == "not groundable"
    b = Field.box("box")
    assert json.loads(b.clean("1, 2, 30.556, 40", size=(100, 80))) == [1, 2, 30.56, 40]
    for bad in ([1, 2, 1, 4], [0, 0, 101, 10], "a,b,c,d", [1, 2, 3], [0, 0, float("nan"), 4], [-1, 0, 5, 5]):
        with pytest.raises(ValueError):
            b.clean(bad, size=(100, 80))
    with pytest.raises(ValueError, match="longer"):
        Field.text("t").clean("x" * 20_001)


def test_form_definitions_are_checked():
    with pytest.raises(ValueError, match="duplicate"):
        Form(fields=(Field.text("a"), Field.text("a")))
    with pytest.raises(ValueError, match="identifier"):
        Form(fields=(Field.text("a"),), sections=(Section("main", "x", ("a",)),))
    with pytest.raises(ValueError, match="unknown fields"):
        Form(fields=(Field.text("a"),), sections=(Section("s", "x", ("b",)),))
    with pytest.raises(ValueError):
        Field("Bad-Name")
    with pytest.raises(ValueError, match="unknown field"):
        FORM.clean({"nope": "x"})


# --------------------------------------------------------------------------- store
def test_one_action_is_one_transaction(tmp_path):
    db = ReviewDB(tmp_path / "r.sqlite", FORM)
    db.conn.execute("CREATE TRIGGER t BEFORE INSERT ON events WHEN NEW.field = 'box' "
                    "BEGIN SELECT RAISE(ABORT, 'disk full'); END")
    with pytest.raises(sqlite3.DatabaseError):
        db.record("ann", "k0", {"decision": "edit", "question": "Q?", "box": [1, 1, 5, 5]})
    assert db.all_answers() == {} and db.events() == []
    with pytest.raises(ValueError):  # one bad value: nothing of the action is stored
        db.record("ann", "k0", {"decision": "edit", "question": "Q?", "box": [5, 1, 1, 5]})
    db.conn.execute("DROP TRIGGER t")
    db.record(" ann ", "k0", {"decision": "edit", "question": "Q?", "box": [1, 1, 5, 5]})
    assert db.answers("ann") == {"k0": {"decision": "edit", "question": "Q?", "box": "[1.0, 1.0, 5.0, 5.0]"}}
    assert [e[:4] for e in db.events()] == [("ann", "k0", "decision", "edit"), ("ann", "k0", "question", "Q?"),
                                            ("ann", "k0", "box", "[1.0, 1.0, 5.0, 5.0]")]
    assert db.done("ann", ["k0", "k1"]) == 1
    db.close()
    with ReviewDB(tmp_path / "r.sqlite") as ro, pytest.raises(RuntimeError, match="without a form"):
        ro.record("ann", "k1", {"decision": "accept"})


def test_items_round_trip_and_several_files_merge(tmp_path):
    items = _items(tmp_path)
    with ReviewDB(tmp_path / "a.sqlite", FORM) as a, ReviewDB(tmp_path / "b.sqlite", FORM) as b:
        a.add_items(items)
        assert a.items()["k1"] == items[1]
        a.record("ann", "k0", {"decision": "accept"})
        b.record("bob", "k0", {"decision": "reject"})
    got = merged_answers([tmp_path / "a.sqlite", tmp_path / "b.sqlite"])
    assert got == {"ann": {"k0": {"decision": "accept"}}, "bob": {"k0": {"decision": "reject"}}}
    with ReviewDB(tmp_path / "c.sqlite", FORM) as c:
        c.record("ann", "k0", {"decision": "edit"})
    with pytest.raises(ValueError, match="also answered"):
        merged_answers([tmp_path / "a.sqlite", tmp_path / "c.sqlite"])
    with pytest.raises(FileNotFoundError):
        merged_answers([tmp_path / "none.sqlite"])


# --------------------------------------------------------------------------- export and outcome
def test_export_csv_and_jsonl(tmp_path):
    items = {it.key: it for it in _items(tmp_path)}
    answers = {"ann": {"k0": {"decision": "edit", "question": "=1+2\u2028second line\u0085third", "box": "[1, 2, 3, 4]"}},
               "bob": {"k0": {"decision": "accept"}}}
    assert export_answers(tmp_path / "a.csv", answers, FORM, items) == 2
    raw = (tmp_path / "a.csv").read_text(encoding="utf-8")
    assert "'=1+2" in raw
    cols, rows = read_csv(tmp_path / "a.csv")
    assert cols == ["reviewer", "item", "decision", "question", "box", "meta.id"]
    assert rows[0]["question"] == "=1+2\u2028second line\u0085third" and rows[1]["decision"] == "accept"
    assert rows[0]["meta.id"] == "0"
    assert export_answers(tmp_path / "a.jsonl", answers, FORM, items) == 2
    lines = [json.loads(x) for x in (tmp_path / "a.jsonl").read_text(encoding="utf-8").split("\n") if x]
    assert lines[0]["question"] == answers["ann"]["k0"]["question"] and lines[1]["meta"] == {"id": 0}
    with pytest.raises(ValueError, match="csv or jsonl"):
        export_answers(tmp_path / "a.xlsx", answers, FORM, items)


def test_resolve_rules_and_edits(tmp_path):
    items = {it.key: it for it in _items(tmp_path)}
    a = {"ann": {"k0": {"decision": "accept"}, "k1": {"decision": "edit", "question": "Better?"},
                 "k2": {"decision": "reject"}},
         "bob": {"k0": {"decision": "reject"}, "k1": {"decision": "edit", "question": "Best?", "box": "[0, 0, 9, 9]"},
                 "k2": {"decision": "reject"}},
         "cy": {"k0": {"decision": "accept"}, "k1": {"decision": "edit", "question": "Best?"}}}
    out = resolve(a, FORM, items)
    assert set(out) == {"k0", "k1", "k2"}
    assert out["k0"].keep and out["k0"].votes == {"accept": 2, "edit": 0, "reject": 1} and out["k0"].edited == []
    assert out["k1"].texts == {"question": "Best?"} and out["k1"].boxes == {"box": [0, 0, 9, 9]}
    assert out["k1"].edited == ["question", "box"] and out["k1"].conflicts == ["question"]
    assert not out["k2"].keep
    assert not resolve(a, FORM, items, rule="unanimous")["k0"].keep
    assert resolve(a, FORM, items, rule="any")["k0"].keep
    tie = {"ann": {"k0": {"decision": "accept"}}, "bob": {"k0": {"decision": "reject"}}}
    assert not resolve(tie, FORM, items)["k0"].keep
    with pytest.raises(ValueError):
        resolve(a, Form(fields=(Field.judge("g"),)), items)


# --------------------------------------------------------------------------- agreement
def test_fleiss_kappa_matches_the_published_example():
    """Fleiss' kappa worked example (10 subjects, 14 raters, 5 categories): kappa = 0.210."""
    counts = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1], [7, 7, 0, 0, 0],
              [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    table = []
    for row in counts:
        vals = [c for c, n in enumerate(row) for _ in range(n)]
        table.append({f"r{i}": v for i, v in enumerate(vals)})
    assert fleiss_kappa(table) == pytest.approx(0.2099, abs=5e-4)


def test_cohen_kappa_and_percent_by_hand():
    a = ["y", "y", "n", "n", "y", "n", "y", "y"]
    b = ["y", "n", "n", "n", "y", "y", "y", "y"]
    po = 6 / 8
    pe = (5 / 8) * (5 / 8) + (3 / 8) * (3 / 8)
    assert cohen_kappa(a, b) == pytest.approx((po - pe) / (1 - pe))
    assert percent_agreement([{"A": x, "B": y} for x, y in zip(a, b)]) == pytest.approx(75.0)
    assert percent_agreement([{"A": "y", "B": "y", "C": "n"}]) == pytest.approx(100 / 3)
    assert cohen_kappa(["y", "y"], ["y", "y"]) is None


def _nominal_alpha(units: list[list[str]]) -> float:
    """Krippendorff's nominal alpha from its coincidence-matrix definition (units: pairable values)."""
    from collections import Counter
    from itertools import permutations

    o = Counter()
    for vals in units:
        if len(vals) < 2:
            continue
        for x, y in permutations(range(len(vals)), 2):
            o[(vals[x], vals[y])] += 1 / (len(vals) - 1)
    n_c = Counter()
    for (c, _k), w in o.items():
        n_c[c] += w
    n = sum(n_c.values())
    d_o = sum(w for (c, k), w in o.items() if c != k)
    d_e = sum(n_c[c] * n_c[k] for c in n_c for k in n_c if c != k) / (n - 1)
    return 1 - d_o / d_e


def test_agreement_per_field_against_independent_values():
    form = Form(fields=(Field.judge("g", "groundable", "not groundable"), Field.scale("s")))
    g = {"ann": ["groundable", "groundable", "not groundable", "groundable", None],
         "bob": ["groundable", "not groundable", "not groundable", "groundable", "groundable"],
         "cy": ["groundable", "groundable", "not groundable", None, "not groundable"]}
    answers = {r: {f"i{j}": {"g": v, "s": str(1 + (j + len(r)) % 5)} for j, v in enumerate(vals) if v}
               for r, vals in g.items()}
    fig = agreement(answers, form)
    units = [[g[r][j] for r in g if g[r][j]] for j in range(5)]
    assert fig["g"]["krippendorff_alpha"] == pytest.approx(_nominal_alpha(units))
    assert fig["g"]["n_items"] == 5 and fig["g"]["n_reviewers"] == 3 and fig["g"]["cohen_kappa"] is None
    shares = [1, 1 / 3, 1, 1, 0]
    assert fig["g"]["percent"] == pytest.approx(100 * sum(shares) / 5)
    full = [{r: g[r][j] for r in g} for j in range(3)]
    assert fig["g"]["fleiss_kappa"] == pytest.approx(fleiss_kappa(full))
    two = agreement({r: answers[r] for r in ("ann", "bob")}, form, ["g"])["g"]
    both = [j for j in range(5) if g["ann"][j] and g["bob"][j]]
    assert two["cohen_kappa"] == pytest.approx(cohen_kappa([g["ann"][j] for j in both], [g["bob"][j] for j in both]))
    with pytest.raises(ValueError, match="not a choice"):
        agreement(answers, FORM, ["question"])


def test_binary_scores_by_hand():
    truth = {"a": True, "b": True, "c": False, "d": False, "e": True}
    judged = {"a": True, "b": False, "c": True, "d": False, "e": True, "zz": True}
    s = binary_scores(truth, judged)
    assert (s["n"], s["tp"], s["fp"], s["fn"], s["tn"]) == (5, 2, 1, 1, 1)
    assert s["accuracy"] == pytest.approx(60.0) and s["precision"] == pytest.approx(200 / 3)
    assert s["recall"] == pytest.approx(200 / 3) and s["f1"] == pytest.approx(200 / 3)
    assert binary_scores({"a": False}, {"a": False})["precision"] is None


# --------------------------------------------------------------------------- server (HTTP)
def _post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_server_stores_actions_and_shows_no_paths(tmp_path):
    items = _items(tmp_path)
    with ReviewDB(tmp_path / "r.sqlite", FORM) as db, ReviewServer(items, db, roots=[tmp_path]) as srv:
        with urllib.request.urlopen(srv.url) as r:
            html = r.read().decode()
            csp = r.headers["Content-Security-Policy"]
            assert r.headers["Referrer-Policy"] == "no-referrer" and "frame-ancestors 'none'" in csp
            nonce = csp.split("'nonce-")[1].split("'")[0]
            assert f'<script nonce="{nonce}">' in html
        with urllib.request.urlopen(srv.url + "api/items?reviewer=ann") as r:
            js = json.loads(r.read())
        assert str(tmp_path) not in json.dumps(js) and "meta" not in js["items"][0]
        assert js["items"][0]["image_urls"] == ["image/0/0"] and js["items"][0]["size"] == [100, 80]
        with urllib.request.urlopen(srv.url + "image/0/0") as r:
            assert r.read()[:4] == b"\x89PNG"
        ok = _post(srv.url + "api/answer", {"reviewer": "ann", "item": "k1",
                                            "values": {"decision": "edit", "question": "New?", "box": [0, 0, 100, 80]}})
        assert ok == (200, {"ok": True, "stored": {"decision": "edit", "question": "New?",
                                                   "box": "[0.0, 0.0, 100.0, 80.0]"}, "done": 1, "total": 3})
        for bad in ({"values": {"box": [0, 0, 101, 80]}}, {"values": {"decision": "maybe"}}, {"values": {}},
                    {"values": {"x": "1"}}, {"item": "nope", "values": {"decision": "accept"}}, {"values": "accept"}):
            status, js = _post(srv.url + "api/answer", {"reviewer": "ann", "item": "k2", **bad})
            assert status == 400 and not js["ok"], bad
        assert len(db.events()) == 3
        with urllib.request.urlopen(srv.url.rstrip("/")) as r:  # /t/TOKEN redirects to /t/TOKEN/
            assert r.url == srv.url


def test_review_cli_export_and_agreement_from_the_files_alone(tmp_path):
    from typer.testing import CliRunner

    from lensbench.cli.main import app

    form = Form(fields=(Field.judge("g", "groundable", "not groundable"), Field.text("note")), title="App. C")
    items = [ReviewItem(f"k{i}", meta={"label": i % 2 == 0}) for i in range(4)]
    votes = {"ann": ["groundable", "groundable", "not groundable", "groundable"],
             "bob": ["groundable", "not groundable", "not groundable", "groundable"]}
    for r, vals in votes.items():
        with ReviewDB(tmp_path / f"{r}.sqlite", form) as db:
            db.add_items(items)
            for it, v in zip(items, vals):
                db.record(r, it.key, {"g": v})
        with ReviewDB(tmp_path / f"{r}.sqlite") as db:
            assert db.stored_form().to_json() == form.to_json()
    dbs = ["--db", str(tmp_path / "ann.sqlite"), "--db", str(tmp_path / "bob.sqlite")]
    r = CliRunner().invoke(app, ["review", "agreement", *dbs, "--format", "json"])
    assert r.exit_code == 0, r.output
    g = json.loads(r.output)["g"]
    assert g["percent"] == pytest.approx(75.0) and g["cohen_kappa"] == pytest.approx(
        cohen_kappa(votes["ann"], votes["bob"]))
    r = CliRunner().invoke(app, ["review", "export", *dbs, "--out", str(tmp_path / "all.csv")])
    assert r.exit_code == 0 and "8 rows" in r.output, r.output
    cols, rows = read_csv(tmp_path / "all.csv")
    assert cols == ["reviewer", "item", "g", "note", "meta.label"] and rows[1]["meta.label"] == "False"
    r = CliRunner().invoke(app, ["review", "export", *dbs, "--out", str(tmp_path / "all.csv")])
    assert r.exit_code != 0 and "exists" in r.output
    (tmp_path / "junk.sqlite").write_text("not sqlite")
    r = CliRunner().invoke(app, ["review", "agreement", "--db", str(tmp_path / "junk.sqlite")])
    assert r.exit_code != 0 and "Traceback" not in r.output
