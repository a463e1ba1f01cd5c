"""The review page in headless Chromium (Debian ``chromium`` + playwright; skipped without them):
accept / edit / reject with a text edit and a box drawn by dragging, the binary judge mode by
keyboard, text from the data never run as HTML, and a page from another origin that cannot
store anything even knowing the full URL (no-cors fetch, text/plain form)."""

from __future__ import annotations

import http.server
import json
import shutil
import threading

import pytest
from PIL import Image

from lensbench.tools.review import Field, Form, ReviewDB, ReviewItem, ReviewServer

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian package 'chromium' not installed")

FORM = Form(fields=(Field.decision(), Field.text("question", "Question"), Field.box("box", "Object")),
            info=("source",), title="Calibration")
XSS = '<img src=x onerror="window.pwned=1">'


def _items(tmp_path):
    Image.new("RGB", (200, 160), "gray").save(tmp_path / "a.png")
    return [ReviewItem("k0", (str(tmp_path / "a.png"),), title=XSS, info={"source": "dataset A " + XSS},
                       texts={"question": "How many cars?"}, boxes={"box": [20, 20, 60, 60]}),
            ReviewItem("k1", (str(tmp_path / "a.png"),), info={"source": "dataset B"},
                       texts={"question": "Is it warm?"})]


def _drag_box(page, x1, y1, x2, y2):
    """Drag on the item image from (x1, y1) to (x2, y2), in pixels of the 200 px wide image."""
    page.wait_for_function("document.querySelector('#img0').naturalWidth > 0")
    bb = page.locator("#overlay").bounding_box()
    sx = bb["width"] / 200
    page.mouse.move(bb["x"] + x1 * sx, bb["y"] + y1 * sx)
    page.mouse.down()
    page.mouse.move(bb["x"] + x2 * sx, bb["y"] + y2 * sx, steps=4)
    page.mouse.up()


@pytest.fixture()
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield b
        b.close()


def test_accept_edit_reject_with_text_and_box(tmp_path, browser):
    items = _items(tmp_path)
    with ReviewDB(tmp_path / "r.sqlite", FORM) as db, ReviewServer(items, db, roots=[tmp_path]) as srv:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(srv.url + "?reviewer=ann")
        page.wait_for_selector("#main:not([hidden])")
        assert page.inner_text("#source") == "dataset A " + XSS and page.inner_text("#title") == XSS
        assert page.evaluate("window.pwned") is None
        assert page.input_value('textarea[data-field="question"]') == "How many cars?"
        page.wait_for_selector('#overlay rect[data-box="box"]')
        page.click('button[data-field="decision"][data-value="accept"]')
        page.wait_for_selector('button.sel[data-field="decision"][data-value="accept"]')
        page.keyboard.press("ArrowRight")
        page.wait_for_function("document.querySelector('#where').textContent.startsWith('Item 2 of 2')")
        page.fill('textarea[data-field="question"]', "Is the engine warm?")
        _drag_box(page, 30, 40, 90, 100)
        page.wait_for_selector('#overlay rect[data-box="box"]')
        page.click("#save")
        page.wait_for_selector('button.sel[data-field="decision"][data-value="edit"]')
        page.wait_for_function("document.querySelector('#progress').textContent.startsWith('2 / 2')")
        got = db.answers("ann")
        assert got["k0"] == {"decision": "accept"}
        assert got["k1"]["decision"] == "edit" and got["k1"]["question"] == "Is the engine warm?"
        box = [float(v) for v in got["k1"]["box"].strip("[]").split(",")]
        assert box == pytest.approx([30, 40, 90, 100], abs=2)
        # a change of mind by keyboard: back to item 1, 'r' rejects it
        page.keyboard.press("ArrowLeft")
        page.wait_for_function("document.querySelector('#where').textContent.startsWith('Item 1 of 2')")
        page.keyboard.press("r")
        page.wait_for_selector('button.sel[data-field="decision"][data-value="reject"]')
        assert db.answers("ann")["k0"] == {"decision": "reject"}
        assert [e[2] for e in db.events()] == ["decision", "decision", "question", "box", "decision"]


def test_a_choice_clicked_keeps_unsaved_text_and_box_edits(tmp_path, browser):
    """Clicking a choice re-renders the item: the text and box typed or drawn before stay, and Save edit stores them."""
    form = Form(fields=(Field.decision(), Field.scale("quality", "Quality"), Field.text("question", "Question"),
                        Field.box("box", "Object")), info=("source",), title="Calibration")
    items = _items(tmp_path)
    with ReviewDB(tmp_path / "r.sqlite", form) as db, ReviewServer(items, db, roots=[tmp_path]) as srv:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(srv.url + "?reviewer=ann")
        page.wait_for_selector("#main:not([hidden])")
        page.fill('textarea[data-field="question"]', "How many red cars?")
        _drag_box(page, 100, 50, 150, 120)
        page.fill('input.coord[data-field="box"][title="x1"]', "90")  # then one coordinate typed
        page.click('button[data-field="quality"][data-value="4"]')
        page.wait_for_selector('button.sel[data-field="quality"][data-value="4"]')
        assert page.input_value('textarea[data-field="question"]') == "How many red cars?"
        assert "not saved yet: question, box" in page.inner_text("#status")
        page.keyboard.press("ArrowDown")  # another re-render: the highlight moves
        assert page.input_value('textarea[data-field="question"]') == "How many red cars?"
        typed = [page.input_value(f'input.coord[data-field="box"][title="{c}"]') for c in ("x1", "y1", "x2", "y2")]
        assert [float(v) for v in typed] == pytest.approx([90, 50, 150, 120], abs=2)
        assert db.answers("ann")["k0"] == {"quality": "4"}  # nothing else stored yet
        page.click("#save")
        page.wait_for_selector('button.sel[data-field="decision"][data-value="edit"]')
        got = db.answers("ann")["k0"]
        assert got["quality"] == "4" and got["decision"] == "edit" and got["question"] == "How many red cars?"
        assert json.loads(got["box"]) == pytest.approx([90, 50, 150, 120], abs=2)
        # stored edits are no longer drafts: the page shows what is stored after another re-render
        page.click('button[data-field="quality"][data-value="2"]')
        page.wait_for_selector('button.sel[data-field="quality"][data-value="2"]')
        assert "not saved yet" not in page.inner_text("#status")
        assert page.input_value('textarea[data-field="question"]') == "How many red cars?"


def test_judge_mode_by_keyboard_and_login(tmp_path, browser):
    form = Form(fields=(Field.judge("groundable", "groundable", "not groundable", "Can the description be grounded?"),),
                title="Rejection check", info=("source",))
    items = _items(tmp_path)
    with ReviewDB(tmp_path / "r.sqlite", form) as db, ReviewServer(items, db, roots=[tmp_path]) as srv:
        page = browser.new_page()
        page.goto(srv.url)
        page.fill("#name", "bob")
        page.click("#start")
        page.wait_for_selector("#main:not([hidden])")
        assert page.query_selector("#save").is_hidden() and page.query_selector("textarea") is None
        page.keyboard.press("n")
        page.wait_for_selector('button.sel[data-field="groundable"][data-value="not groundable"]')
        page.keyboard.press("ArrowRight")
        page.keyboard.press("y")
        page.wait_for_function("document.querySelector('#progress').textContent === '2 / 2 reviewed'")
        assert db.all_answers() == {"bob": {"k0": {"groundable": "not groundable"}, "k1": {"groundable": "groundable"}}}


class _Attacker(http.server.BaseHTTPRequestHandler):
    html = b""

    def do_GET(self):  # noqa: N802 - http.server's name
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(self.html)

    def log_message(self, *args):
        pass


def test_a_page_from_another_origin_stores_nothing(tmp_path, browser):
    items = _items(tmp_path)
    with ReviewDB(tmp_path / "r.sqlite", FORM) as db, ReviewServer(items, db, roots=[tmp_path]) as srv:
        target = srv.url + "api/answer"
        body = '{"reviewer": "evil", "item": "k0", "values": {"decision": "reject"}}'
        _Attacker.html = f"""<!doctype html><html><body>
<iframe name="sink" id="sink"></iframe>
<form id="f" method="POST" action="{target}" enctype="text/plain" target="sink">
<input name='{body[:-1]}, "pad": "' value='x"}}'></form>
<script>
window.fetchDone = false;
fetch("{target}", {{method: "POST", mode: "no-cors", body: JSON.stringify({body})}})
  .then(() => {{ window.fetchDone = true; }}, () => {{ window.fetchDone = true; }});
document.getElementById("sink").addEventListener("load", () => {{ window.formDone = true; }});
document.getElementById("f").submit();
</script></body></html>""".encode()
        attacker = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Attacker)
        threading.Thread(target=attacker.serve_forever, daemon=True).start()
        try:
            page = browser.new_page()
            page.goto(f"http://localhost:{attacker.server_address[1]}/")
            page.wait_for_function("window.fetchDone === true && window.formDone === true", timeout=10000)
            # the control: the same body from the review page itself is stored
            page.goto(srv.url + "?reviewer=ann")
            page.wait_for_selector("#main:not([hidden])")
            page.click('button[data-field="decision"][data-value="accept"]')
            page.wait_for_selector('button.sel[data-field="decision"][data-value="accept"]')
        finally:
            attacker.shutdown()
        assert db.reviewers() == ["ann"]
