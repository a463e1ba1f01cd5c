"""Golden-output harness shared by ``record.py`` (writes ``expected/*.json``) and ``test_golden.py``
(re-runs every scenario against the installed code and compares).

Nothing here imports ``lensbench``: the code under test is only ever driven through its command
line (``python -m lensbench run|report``), so this harness survives any internal restructure.

What one scenario produces (the *document* stored in ``expected/<scenario>.json``):

* ``argv``: the logical command lines (placeholders ``<FIX>`` fixture root, ``<RUN0>``.. run
  folders, ``<SERVER>`` fake server URL), as written in ``scenarios.py`` (before flag renames).
* per run (``runs[i]``): ``exit_code``; ``result`` = ``result.json``'s ``benchmark``, ``model``,
  ``complete``, ``metrics`` and ``counts`` (full; ``options``/``extra``/``run_dir`` are left out:
  they are settings, not numbers); ``request_keys`` = the sorted ``key`` column of the run store
  (``responses.sqlite``, table ``responses``) and ``request_keys_sha256`` over them (one key per
  line); ``samples`` = every ``samples.jsonl`` record reduced by :func:`sample_view` (ONE function:
  adapt it when the record format changes).
* ``reports``: stdout of ``report RUN.. --format md``, ``--format csv`` and ``--format md
  --with-paper`` over all runs of the scenario.
* ``server`` (scenarios with an ``openai:`` backend): every request body the fake server got,
  as one sorted list of strings ``"<sha256 of the normalised body, 16 hex> model=.. params=..
  parts=[..]"`` plus ``bodies_sha256`` over the list. Normalised body = the JSON body with each
  image data URL replaced by ``{"image": <catalogue id>, "size": [w, h], "mime": ..}``: the
  payload is decoded and matched to the fixture image (or video frame) it was made from by an
  8x8 colour signature (``fixtures/image_catalog.json``, computed once when the fixtures were
  made), so the hash does not depend on how (or with which Pillow/libjpeg) the client
  re-encoded the image, but does change when a different image, frame, size or order is sent.
  ``parts`` lists, in order, ``img:<id>@WxH`` and ``txt:<sha256 of the text, 12 hex>``.

All absolute paths (fixture copy, run folders, temp dirs) are replaced by placeholders in every
string of the document. Floats are compared with a relative tolerance of 1e-9 (a restructure
may sum in another order); everything else must be equal.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import math
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

GOLDEN_DIR = Path(__file__).resolve().parent
FIXTURES = GOLDEN_DIR / "fixtures"
#: The golden documents (``GOLDEN_EXPECTED`` overrides, e.g. to check a set recorded elsewhere).
EXPECTED = Path(os.environ["GOLDEN_EXPECTED"]) if os.environ.get("GOLDEN_EXPECTED") else GOLDEN_DIR / "expected"
DRIVER = GOLDEN_DIR / "cli_driver.py"

# =============================================================================================
# CLI flag names: the ONE table to edit when a flag is renamed.
# Scenarios are written with the pre-restructure flag names (the keys). A key may be
# benchmark-qualified ("if-bench:--image-dir") to rename a flag for one benchmark only; the
# qualified entry wins. Values: the flag the installed code takes now.
# =============================================================================================
FLAGS: dict[str, str] = {
    # shared run flags
    "--model": "--model",
    "--out": "--out",
    "--data-dir": "--data-dir",
    "--model-name": "--model-name",
    "--base-url": "--base-url",
    "--replay-model": "--replay-model",
    "--judge-model": "--judge-model",
    "--judge-base-url": "--judge-base-url",
    "--concurrency": "--concurrency",
    "--limit": "--limit",
    "--seed": "--seed",
    "--temperature": "--temperature",
    "--max-tokens": "--max-tokens",
    "--thinking": "--thinking",
    "--extra-body": "--extra-body",
    "--image-format": "--image-format",
    "--image-max-side": "--image-max-side",
    "--no-progress": "--no-progress",
    "--format": "--format",
    "--with-paper": "--with-paper",
    # RGB-Th-Bench
    "--include-extra-skills": "--include-extra-skills",
    # IF-Bench
    "--judge": "--judge",  # also GroundingME's best-of-N selector (qualify to split them)
    "if-bench:--judge": "--answer-parsing",  # IF-Bench: how the letter is read (hybrid | official-first-char)
    "--no-circular": "--no-circular",
    "--languages": "--languages",
    "--input": "--input",
    "--blind": "--blind",
    "--image-dir": "--images-dir",
    "--translated-dir": "--translated-dir",
    "--parser-max-tokens": "--parser-max-tokens",
    "--no-parser-disable-thinking": "--no-parser-disable-thinking",
    # IV-Bench
    "--frames": "--frames",
    "--resolution": "--resolution",
    "--pairs": "--pairs",
    "--pattern": "--pattern",
    "--frame-rule": "--frame-rule",
    "--text-style": "--text-style",
    "--skip-missing": "--skip-missing",
    "--questions": "--questions",
    "--videos-dir": "--videos-dir",  # real_data.py
    # GOBench
    "--human-ratings": "--human-ratings",
    "--prompt-style": "--prompt-style",
    "--delta-max": "--delta-max",
    "--categories": "--categories",
    "--layout": "--layout",
    "--ratings-generator": "--ratings-generator",
    "--image-cache": "--image-cache",
    "--images-dir": "--images-dir",  # GOBench; IV-Bench too (real_data.py): qualify to split
    # GroundingME
    "--bbox-format": "--bbox-format",
    "--official-compat": "--official-compat",
    "--max-pixels": "--max-pixels",
    "--best-of": "--best-of",
    "--judge-retries": "--judge-retries",
    "groundingme:--judge": "--bon-judge",  # best-of-N selection mode (IF-Bench keeps --judge)
}
#: Option VALUES renamed by the restructure: (flag as in scenarios, old value) -> new value
#: (e.g. ``("--judge", "official-first-char"): "official-first-char"``).
VALUES: dict[tuple[str, str], str] = {
    ("--judge", "official-first-char"): "official-first-char",
    ("--judge", "hybrid"): "hybrid",
    ("groundingme:--judge", "text"): "text-full-responses",
    ("groundingme:--judge", "mm"): "mm-image-boxes",
    ("groundingme:--judge", "text:openai:judge-text"): "text-full-responses:openai:judge-text",
}
#: The CLI's sub-commands and the benchmark names, in case they move.
COMMANDS = {"run": ["run"], "report": ["report"]}
BENCH_NAMES = {"rgb-th-bench": "rgb-th-bench", "if-bench": "if-bench", "iv-bench": "iv-bench",
               "gobench": "gobench", "groundingme": "groundingme"}


#: Renamed flags the installed CLI does NOT take, found by :func:`probe_flags` ({(bench, old flag)}):
#: these keep their old name (and old values), so the same tables serve the pre-restructure code
#: (``/work/base``) and the restructured one.
_KEEP_OLD: set[tuple[str, str]] = set()


def translate_args(bench: str, args: Sequence[str]) -> list[str]:
    """Scenario argv (old flag names) -> argv for the installed CLI, through :data:`FLAGS` / :data:`VALUES`."""
    out: list[str] = []
    prev_flag = None
    for a in args:
        if a.startswith("--"):
            new = FLAGS.get(f"{bench}:{a}", FLAGS.get(a))
            if new is None:
                raise KeyError(f"flag {a!r} is not in harness.FLAGS (add it there)")
            if (bench, a) in _KEEP_OLD:
                new = a
            out.append(new)
            prev_flag = a
        else:
            if prev_flag is not None and (bench, prev_flag) not in _KEEP_OLD:
                a = VALUES.get((f"{bench}:{prev_flag}", a), VALUES.get((prev_flag, a), a))
            out.append(a)
            prev_flag = None
    return out


def renamed_flags(bench: str) -> dict[str, str]:
    """``{old: new}`` of the flags :data:`FLAGS` renames for ``bench``."""
    out = {}
    for k, v in FLAGS.items():
        b, _, flag = k.rpartition(":")
        if b in ("", bench) and (b == bench or f"{bench}:{flag}" not in FLAGS) and v != flag:
            out[flag] = v
    return out


def probe_flags(benches: Sequence[str], *, python: str, env: dict[str, str], cwd: Path) -> dict[str, Any]:
    """Ask the installed CLI (``run BENCH --help``) which renamed flags it takes; a renamed flag
    whose new name is absent but whose old name is present keeps the old name (fills
    :data:`_KEEP_OLD`). Returns ``{bench: {old: chosen}}`` (only benchmarks with renames)."""
    _KEEP_OLD.clear()
    todo = {b: renamed_flags(b) for b in dict.fromkeys(benches)}
    todo = {b: r for b, r in todo.items() if r}
    if not todo:
        return {}
    cwd.mkdir(parents=True, exist_ok=True)
    penv = dict(env, COLUMNS="400")
    res = run_steps([[*COMMANDS["run"], BENCH_NAMES[b], "--help"] for b in todo], python=python, env=penv, cwd=cwd)
    chosen: dict[str, Any] = {}
    for (b, ren), r in zip(todo.items(), res):
        flags = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", r["stdout"]))
        chosen[b] = {}
        for old, new in ren.items():
            if new not in flags and old in flags:
                _KEEP_OLD.add((b, old))
                chosen[b][old] = old
            else:
                chosen[b][old] = new
    return chosen


# =============================================================================================
# Per-sample view of samples.jsonl: the ONE function to adapt when the record format changes
# (e.g. to a common SampleRecord with sample_id / outcome / answer / scores / labels).
# =============================================================================================
def _r(v: Any) -> Any:
    """Round floats to 12 significant digits inside a value (JSON-stable)."""
    if isinstance(v, float):
        return float(f"{v:.12g}") if math.isfinite(v) else str(v)
    if isinstance(v, list):
        return [_r(x) for x in v]
    if isinstance(v, dict):
        return {k: _r(x) for k, x in v.items()}
    return v


def sample_view(bench: str, rec: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``(sample id, {"outcome", "answer", "scores", "labels"})`` of one samples.jsonl record.

    ``outcome``: correct | wrong | unparseable | error. ``answer``: what the parser read from the
    reply. ``scores``: numbers that enter the metrics. ``labels``: other per-sample facts that
    enter metrics or counts (gold answer, how it was judged, config). Pre-restructure records
    carry ``id`` and ``status`` plus benchmark-specific fields, read below.
    """
    sid = str(rec.get("id"))
    outcome = rec.get("status")
    answer: Any = None
    scores: dict[str, Any] = {}
    labels: dict[str, Any] = {}
    if bench == "rgb-th-bench" and "sample_id" in rec:  # SampleRecord: labels{abbrev, group, extra}, target
        lb = rec.get("labels") or {}
        sid, outcome, answer = str(rec["sample_id"]), rec.get("outcome"), rec.get("answer")
        labels = {"gold": rec.get("target"), "skill": lb.get("abbrev"), "group": lb.get("group"),
                  "extra": lb.get("extra")}
    elif bench == "rgb-th-bench":
        answer = rec.get("parsed")
        labels = {"gold": rec.get("answer"), "skill": rec.get("abbrev"), "group": rec.get("group"),
                  "extra": rec.get("extra")}
    elif bench == "if-bench" and "sample_id" in rec:  # SampleRecord (restructured): labels/extra/judge/target
        lb, ex, calls = rec.get("labels") or {}, rec.get("extra") or {}, rec.get("judge") or []
        sid, outcome, answer = str(rec["sample_id"]), rec.get("outcome"), rec.get("answer")
        labels = {"gold": rec.get("target"), "judged_by": ex.get("judged_by"),
                  "parser_verdict": calls[-1].get("verdict") if calls else None, "dimension": lb.get("dimension"),
                  "lang": lb.get("language"), "rotation": lb.get("rotation")}
    elif bench == "if-bench":
        answer = rec.get("parsed")
        labels = {"gold": rec.get("answer"), "judged_by": rec.get("judged_by"),
                  "parser_verdict": rec.get("parser_verdict"), "dimension": rec.get("abbrev"),
                  "lang": rec.get("lang"), "rotation": rec.get("rotation")}
    elif bench == "iv-bench" and "sample_id" in rec:  # SampleRecord: labels/extra/target (restructured)
        lb, ex = rec.get("labels") or {}, rec.get("extra") or {}
        sid, outcome, answer = str(rec["sample_id"]), rec.get("outcome"), rec.get("answer")
        labels = {"gold": rec.get("target"), "options": ex.get("options"), "task": lb.get("column"),
                  "frames": lb.get("frames"), "resolution": lb.get("resolution"),
                  **{k: ex.get(k) for k in ("frame_indices", "frame_size", "duration", "error_kind",
                                            "dup_answer_removed", "dup_distractor_removed",
                                            "empty_distractor_removed")}}
    elif bench == "iv-bench":
        answer = rec.get("parsed")
        labels = {"gold": rec.get("correct"), "options": rec.get("options"), "task": rec.get("abbrev"),
                  "frames": rec.get("frames"), "resolution": rec.get("resolution"),
                  "frame_indices": rec.get("frame_indices"), "frame_size": rec.get("frame_size"),
                  "duration": rec.get("duration"), "error_kind": rec.get("error_kind"),
                  "dup_answer_removed": rec.get("dup_answer_removed"),
                  "dup_distractor_removed": rec.get("dup_distractor_removed"),
                  "empty_distractor_removed": rec.get("empty_distractor_removed")}
    elif bench == "gobench":
        # old records: status correct/wrong = a parsed critique; SampleRecords call it "scored"
        if outcome in ("correct", "wrong"):
            outcome = "scored"
        if "outcome" in rec:  # SampleRecord: answer{answers..}, scores{dim, sps_dim}, target, extra
            sid, outcome = str(rec.get("sample_id")), rec["outcome"]
            ex, sc, dims = rec.get("extra") or {}, rec.get("scores") or {}, ("authenticity", "aesthetics", "fidelity")
            answer = (rec.get("answer") or {}).get("answers")
            scores = {"scores": {d: sc.get(d) for d in dims} if outcome == "scored" else None,
                      "sps": {d: sc.get(f"sps_{d}") for d in dims} if any(k.startswith("sps_") for k in sc) else None,
                      "q_agree": ex.get("q_agree")}
            labels = {"parse_method": ex.get("parse_method"), "authenticity_from": ex.get("authenticity_from"),
                      "category": (rec.get("labels") or {}).get("category"), "gt": rec.get("target")}
        else:
            answer = rec.get("answers")
            scores = {"scores": rec.get("scores"), "sps": rec.get("sps"), "q_agree": rec.get("q_agree")}
            labels = {"parse_method": rec.get("parse_method"), "authenticity_from": rec.get("authenticity_from"),
                      "category": rec.get("category"), "gt": rec.get("gt")}
    elif bench == "groundingme":
        if "sample_id" in rec:  # SampleRecord: the old per-item fields are in extra/scores/labels
            ex, sc, lb = rec.get("extra") or {}, rec.get("scores") or {}, rec.get("labels") or {}
            sid, outcome = str(rec["sample_id"]), rec["outcome"]
            rec = {"outcome": ex.get("parse"), "raw_bbox": ex.get("raw_bbox"), "pred_bbox": rec.get("answer"),
                   "official_raw_bbox": ex.get("official_raw_bbox"), "iou": sc.get("iou"),
                   "hit": None if outcome == "error" else bool(sc.get("hit@0.5")), "subtask_l1": lb.get("L-1"),
                   "subtask_l2": lb.get("L-2"), "sent_size": ex.get("sent_size"),
                   "selected_index": ex.get("selected_index"),
                   "bon": ex.get("bon") and {**ex["bon"], "judge": ex.get("knockout")}}
        answer = {"outcome": rec.get("outcome"), "raw_bbox": rec.get("raw_bbox"), "pred_bbox": rec.get("pred_bbox"),
                  "official_raw_bbox": rec.get("official_raw_bbox")}
        scores = {"iou": rec.get("iou"), "hit": rec.get("hit")}
        labels = {"l1": rec.get("subtask_l1"), "l2": rec.get("subtask_l2"), "sent_size": rec.get("sent_size"),
                  "selected_index": rec.get("selected_index")}
        bon = rec.get("bon")
        if bon:
            labels["bon"] = {
                "n": bon.get("n"), "n_valid": bon.get("n_valid"), "mean_hit": bon.get("mean_hit"),
                "oracle_hit": bon.get("oracle_hit"), "selected_hit": bon.get("selected_hit"),
                "samples": [{k: s.get(k) for k in ("i", "status", "outcome", "raw_bbox", "iou", "hit")}
                            for s in bon.get("samples", [])],
                "judge": None if not bon.get("judge") else {
                    "mode": bon["judge"].get("mode"), "fallbacks": bon["judge"].get("fallbacks"),
                    "judge_errors": bon["judge"].get("judge_errors"),
                    "matches": [{k: m.get(k) for k in ("round", "a", "b", "verdict", "winner", "attempts", "fallback")}
                                for m in bon["judge"].get("matches", [])]},
            }
    else:
        raise KeyError(f"no sample view for benchmark {bench!r}")
    labels = {k: v for k, v in labels.items() if v is not None}
    scores = {k: v for k, v in scores.items() if v is not None}
    return sid, _r({"outcome": outcome, "answer": answer, "scores": scores, "labels": labels})


# =============================================================================================
# Image catalogue: identify an image payload by the fixture image it came from.
# =============================================================================================
SIG_SIZE = 8
MATCH_THRESHOLD = 24.0  # mean |difference| per channel value (0-255) accepted as "the same image"


def image_signature(im) -> list[int]:
    """8x8 RGB box-averaged thumbnail of a PIL image, as 192 ints (size and codec independent)."""
    from PIL import Image

    small = im.convert("RGB").resize((SIG_SIZE, SIG_SIZE), Image.Resampling.BOX)
    return list(small.tobytes())


class ImageMatcher:
    """Nearest catalogue entry of a decoded image (``fixtures/image_catalog.json``)."""

    def __init__(self, catalog_path: Path):
        import numpy as np

        cat = json.loads(Path(catalog_path).read_text(encoding="utf-8"))
        self.ids = [e["id"] for e in cat["images"]]
        self.sigs = np.array([e["sig"] for e in cat["images"]], dtype=np.float32)
        self._cache: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def identify(self, data: bytes) -> dict[str, Any]:
        """``{"image": id or "unknown:<nearest>", "size": [w, h], "format": PIL format}`` of encoded bytes."""
        import numpy as np
        from PIL import Image

        h = hashlib.sha256(data).hexdigest()
        with self._lock:
            hit = self._cache.get(h)
        if hit is not None:
            return hit
        with Image.open(io.BytesIO(data)) as im:
            im.load()
            size = [im.width, im.height]
            fmt = im.format
            sig = np.array(image_signature(im), dtype=np.float32)
        d = np.abs(self.sigs - sig).mean(axis=1)
        k = int(d.argmin())
        ident = self.ids[k] if d[k] <= MATCH_THRESHOLD else f"unknown:{self.ids[k]}"
        out = {"image": ident, "size": size, "format": fmt}
        with self._lock:
            self._cache[h] = out
        return out


# =============================================================================================
# Fake OpenAI-compatible server with per-scenario scripted replies.
# =============================================================================================
@dataclass
class ReqView:
    """What a reply script sees of one chat request."""

    scenario: str
    model: str
    texts: list[str]
    images: list[dict[str, Any]]  # {"image": catalogue id, "size": [w, h], "format": ...} in order
    body: dict[str, Any]

    @property
    def text(self) -> str:
        return "\n".join(self.texts)

    @property
    def seed(self):
        return self.body.get("seed")

    @property
    def temperature(self):
        return self.body.get("temperature")


Script = Callable[[ReqView, "ScriptContext"], Any]


@dataclass
class ScriptContext:
    """Passed to reply scripts: where the (copied) fixtures are."""

    fixtures: Path
    cache: dict[str, Any] = field(default_factory=dict)

    def load_json(self, rel: str) -> Any:
        if rel not in self.cache:
            p = self.fixtures / rel
            text = p.read_text(encoding="utf-8")
            if rel.endswith(".jsonl"):
                self.cache[rel] = [json.loads(line) for line in text.splitlines() if line.strip()]
            else:
                self.cache[rel] = json.loads(text)
        return self.cache[rel]


def normalise_body(body: dict[str, Any], matcher: ImageMatcher) -> tuple[dict[str, Any], list[str], list[str],
                                                                          list[dict[str, Any]]]:
    """(body with images replaced by their identity, parts summary, texts, images) of a request body."""
    b = json.loads(json.dumps(body))
    parts: list[str] = []
    texts: list[str] = []
    images: list[dict[str, Any]] = []
    for m in b.get("messages", []):
        content = m.get("content")
        if isinstance(content, str):
            texts.append(content)
            parts.append(f"{m.get('role')}:txt:{hashlib.sha256(content.encode()).hexdigest()[:12]}")
            continue
        for p in content or []:
            if p.get("type") == "image_url":
                url = p["image_url"]["url"] if isinstance(p.get("image_url"), dict) else p.get("image_url")
                head, _, payload = url.partition(",")
                ident = matcher.identify(base64.b64decode(payload))
                mime = head[5:].split(";")[0] if head.startswith("data:") else head
                p["image_url"] = {"image": ident["image"], "size": ident["size"], "mime": mime}
                images.append(ident)
                parts.append(f"img:{ident['image']}@{ident['size'][0]}x{ident['size'][1]}:{mime}")
            elif p.get("type") == "text":
                texts.append(p["text"])
                parts.append(f"txt:{hashlib.sha256(p['text'].encode()).hexdigest()[:12]}")
            else:
                parts.append(f"{p.get('type')}:?")
    return b, parts, texts, images


def body_line(norm: dict[str, Any], parts: list[str]) -> str:
    """One line of ``server.requests``: normalised-body hash, model, other params, parts."""
    digest = hashlib.sha256(json.dumps(norm, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]
    params = {k: v for k, v in norm.items() if k not in ("model", "messages")}
    return (f"{digest} model={norm.get('model')} params={json.dumps(params, sort_keys=True, ensure_ascii=False)} "
            f"parts=[{', '.join(parts)}]")


class FakeServer:
    """OpenAI chat-completions server on 127.0.0.1 (thread). URL ``<url>/<scenario>/v1`` routes a
    request to that scenario's reply scripts (by the body's ``model``) and records its body."""

    def __init__(self, fixtures: Path, matcher: ImageMatcher):
        self.ctx = ScriptContext(fixtures)
        self.matcher = matcher
        self.scripts: dict[str, dict[str, Script]] = {}
        self.lines: dict[str, list[str]] = {}
        self.failures: list[str] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):  # quiet
                pass

            def do_GET(self):
                self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n)
                parts = self.path.strip("/").split("/")
                scen = parts[0] if parts else ""
                try:
                    body = json.loads(raw)
                    reply = server.handle(scen, body)
                except Exception as exc:  # noqa: BLE001 - reported by the test
                    import traceback

                    with server._lock:
                        server.failures.append(f"{scen}: {type(exc).__name__}: {exc}\n{traceback.format_exc()}")
                    self._send(400, {"error": {"message": f"fake server script failed: {exc}"}})
                    return
                self._send(200, reply)

            def _send(self, code, obj):
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True, name="golden-fake-openai")

    def start(self) -> "FakeServer":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def register(self, scenario: str, scripts: dict[str, Script]) -> str:
        """Route ``scenario`` to ``scripts`` (body model name -> script); returns its base URL."""
        with self._lock:
            self.scripts[scenario] = scripts
            self.lines[scenario] = []
        return f"{self.url}/{scenario}/v1"

    def handle(self, scenario: str, body: dict[str, Any]) -> dict[str, Any]:
        norm, parts, texts, images = normalise_body(body, self.matcher)
        with self._lock:
            scripts = self.scripts[scenario]
            self.lines[scenario].append(body_line(norm, parts))
        model = body.get("model", "")
        if model not in scripts:
            raise KeyError(f"no reply script for model {model!r}")
        out = scripts[model](ReqView(scenario, model, texts, images, body), self.ctx)
        msg: dict[str, Any] = {"role": "assistant"}
        finish = "stop"
        if isinstance(out, dict):
            msg["content"] = out.get("content")
            if out.get("reasoning_content") is not None:
                msg["reasoning_content"] = out["reasoning_content"]
            finish = out.get("finish_reason", "stop")
        else:
            msg["content"] = str(out)
        return {"id": "chatcmpl-golden", "object": "chat.completion", "created": 0, "model": model,
                "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


# =============================================================================================
# Running a scenario.
# =============================================================================================
def copy_fixtures(dest: Path) -> Path:
    """Copy the committed fixtures to ``dest`` (runs never write into the repository)."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(FIXTURES, dest)
    return dest


class _Paths:
    def __init__(self, pairs: list[tuple[str, str]]):
        # longest first, with resolved variants
        seen = {}
        for real, ph in pairs:
            for v in {real, str(Path(real).resolve())}:
                seen.setdefault(v, ph)
        self.pairs = sorted(seen.items(), key=lambda kv: -len(kv[0]))

    def text(self, s: str) -> str:
        for real, ph in self.pairs:
            if real in s:
                s = s.replace(real, ph)
        return s

    def obj(self, o: Any) -> Any:
        if isinstance(o, str):
            return self.text(o)
        if isinstance(o, list):
            return [self.obj(x) for x in o]
        if isinstance(o, dict):
            return {self.text(k) if isinstance(k, str) else k: self.obj(v) for k, v in o.items()}
        return o


def substitute(args: Sequence[str], mapping: dict[str, str]) -> list[str]:
    out = []
    for a in args:
        for k, v in mapping.items():
            a = a.replace(k, v)
        out.append(a)
    return out


def store_keys(run_dir: Path) -> list[str]:
    p = run_dir / "responses.sqlite"
    if not p.is_file():
        return []
    con = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
    try:
        return sorted(r[0] for r in con.execute("SELECT key FROM responses"))
    finally:
        con.close()


def run_steps(steps: list[list[str]], *, python: str, env: dict[str, str], cwd: Path) -> list[dict[str, Any]]:
    """Run CLI invocations (argv after ``python -m lensbench``) through ``cli_driver.py`` in one
    interpreter (``GOLDEN_ISOLATED=1``: one ``python -m lensbench`` process per step)."""
    plan = cwd / "plan.json"
    res = cwd / "steps.json"
    plan.write_text(json.dumps(steps), encoding="utf-8")
    cmd = [python, str(DRIVER), str(plan), str(res)]
    if env.get("GOLDEN_ISOLATED") == "1":
        cmd.append("--isolated")
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if not res.is_file():
        raise RuntimeError(f"cli driver failed (rc {p.returncode}):\n{p.stdout[-3000:]}\n{p.stderr[-5000:]}")
    return json.loads(res.read_text(encoding="utf-8"))


def driver_env(pythonpath: str | None = None) -> dict[str, str]:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    env.update({"NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "200", "PYTHONIOENCODING": "utf-8"})
    env.pop("OPENAI_API_KEY", None)
    return env


@dataclass
class Prepared:
    """A scenario ready to run: its CLI steps and what is needed to collect its document."""

    sc: Any
    steps: list[list[str]]
    logical: list[list[str]]
    run_dirs: list[Path]
    paths: "_Paths"
    server_url: str | None


def prepare(sc, *, fixtures: Path, workdir: Path, server: FakeServer | None) -> Prepared:
    """Create the scenario's work folder, register its reply scripts and build its CLI steps:
    one ``run`` per entry of ``sc.runs``, then ``report`` md / csv / md --with-paper over all runs."""
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    run_dirs = [workdir / f"run{i}" for i in range(len(sc.runs))]
    mapping = {"{FIX}": str(fixtures), "{WORK}": str(workdir)}
    for i, d in enumerate(run_dirs):
        mapping[f"{{RUN{i}}}"] = str(d)
    server_url = None
    if sc.scripts:
        if server is None:
            raise RuntimeError(f"scenario {sc.name} needs the fake server")
        server_url = server.register(sc.name, sc.scripts)
        mapping["{SERVER}"] = server_url
    bench = BENCH_NAMES[sc.bench]
    steps: list[list[str]] = []
    logical: list[list[str]] = []
    for i, args in enumerate(sc.runs):
        full = ["--out", f"{{RUN{i}}}", "--no-progress", *args]
        logical.append(["run", sc.bench, *full])
        steps.append([*COMMANDS["run"], bench, *translate_args(sc.bench, substitute(full, mapping))])
    rdirs = [str(d) for d in run_dirs]
    for extra in (["--format", "md"], ["--format", "csv"], ["--format", "md", "--with-paper"]):
        steps.append([*COMMANDS["report"], *rdirs, *translate_args(sc.bench, extra)])
    paths = _Paths([(str(fixtures), "<FIX>"), (str(workdir), "<WORK>"), (tempfile.gettempdir(), "<TMP>")]
                   + [(str(d), f"<RUN{i}>") for i, d in enumerate(run_dirs)]
                   + ([(server_url, "<SERVER>")] if server_url else []))
    return Prepared(sc, steps, logical, run_dirs, paths, server_url)


def collect(prep: Prepared, results: list[dict[str, Any]], server: FakeServer | None) -> dict[str, Any]:
    """The scenario's document from its step results and run folders (paths normalised)."""
    sc = prep.sc
    runs = []
    for i, d in enumerate(prep.run_dirs):
        run: dict[str, Any] = {"exit_code": results[i]["rc"]}
        rj = d / "result.json"
        if rj.is_file():
            r = json.loads(rj.read_text(encoding="utf-8"))
            run["result"] = {k: r.get(k) for k in ("benchmark", "model", "complete", "metrics", "counts")}
        else:
            run["result"] = None
        keys = store_keys(d)
        run["request_keys"] = keys
        run["request_keys_sha256"] = hashlib.sha256("".join(k + "\n" for k in keys).encode()).hexdigest()
        samples: dict[str, Any] = {}
        sj = d / "samples.jsonl"
        if sj.is_file():
            for line in sj.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    sid, view = sample_view(sc.bench, json.loads(line))
                    if sid in samples:
                        raise ValueError(f"{sc.name}: duplicate sample id {sid!r} in samples.jsonl")
                    samples[sid] = view
        run["samples"] = samples
        runs.append(run)
    n = len(sc.runs)
    reports = {"md": results[n]["stdout"], "csv": results[n + 1]["stdout"], "md_with_paper": results[n + 2]["stdout"],
               "exit_codes": [results[n + k]["rc"] for k in range(3)]}
    doc: dict[str, Any] = {"scenario": sc.name, "benchmark": sc.bench, "description": sc.description,
                           "argv": prep.logical, "runs": runs, "reports": reports}
    if sc.scripts:
        lines = sorted(server.lines.get(sc.name, []))
        doc["server"] = {"n_requests": len(lines), "requests": lines,
                         "bodies_sha256": hashlib.sha256("".join(x + "\n" for x in lines).encode()).hexdigest()}
    return prep.paths.obj(doc)


# =============================================================================================
# Comparison.
# =============================================================================================
REL_TOL = 1e-9


def diff(expected: Any, actual: Any, path: str = "$") -> list[str]:
    """Differences between two documents as readable lines (empty = equal)."""
    out: list[str] = []
    if isinstance(expected, dict) and isinstance(actual, dict):
        for k in expected:
            if k not in actual:
                out.append(f"{path}.{k}: missing (expected {_short(expected[k])})")
            else:
                out += diff(expected[k], actual[k], f"{path}.{k}")
        for k in actual:
            if k not in expected:
                out.append(f"{path}.{k}: unexpected {_short(actual[k])}")
        return out
    if isinstance(expected, list) and isinstance(actual, list):
        if all(isinstance(x, str) for x in expected + actual) and (len(expected) > 8 or len(actual) > 8):
            se, sa = set(expected), set(actual)
            for x in sorted(se - sa)[:20]:
                out.append(f"{path}: missing item {_short(x)}")
            for x in sorted(sa - se)[:20]:
                out.append(f"{path}: unexpected item {_short(x)}")
            if not out and expected != actual:
                out.append(f"{path}: same items, different order or multiplicity")
            return out
        if len(expected) != len(actual):
            out.append(f"{path}: length {len(actual)} != expected {len(expected)}")
        for i, (e, a) in enumerate(zip(expected, actual)):
            out += diff(e, a, f"{path}[{i}]")
        return out
    if isinstance(expected, str) and isinstance(actual, str) and "\n" in expected + actual:
        if expected != actual:
            import difflib

            d = list(difflib.unified_diff(expected.splitlines(), actual.splitlines(), "expected", "actual", lineterm="",
                                          n=1))
            out.append(f"{path}: text differs\n    " + "\n    ".join(d[:60]))
        return out
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)) and not isinstance(expected, bool) \
            and not isinstance(actual, bool):
        if expected == actual or math.isclose(expected, actual, rel_tol=REL_TOL, abs_tol=1e-12):
            return out
        out.append(f"{path}: {actual!r} != expected {expected!r}")
        return out
    if expected != actual:
        out.append(f"{path}: {_short(actual)} != expected {_short(expected)}")
    return out


def _short(v: Any, n: int = 200) -> str:
    s = json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else repr(v)
    return s if len(s) <= n else s[:n] + "..."


def dump(doc: Any, depth: int = 0, expand: int = 4) -> str:
    """JSON text of a document: containers above ``expand`` levels one item per line, deeper
    values (a sample, a metric row, a request line) on one line each (compact, diff-friendly)."""
    pad = " " * depth
    if depth < expand and isinstance(doc, dict) and doc:
        items = [f'{pad} {json.dumps(k, ensure_ascii=False)}: {dump(v, depth + 1, expand).lstrip()}' for k, v in doc.items()]
        out = "{\n" + ",\n".join(items) + f"\n{pad}}}"
    elif depth < expand and isinstance(doc, list) and doc and not (
            all(not isinstance(x, (dict, list)) for x in doc) and len(json.dumps(doc, ensure_ascii=False)) < 400):
        items = [f"{pad} {dump(v, depth + 1, expand).lstrip()}" for v in doc]
        out = "[\n" + ",\n".join(items) + f"\n{pad}]"
    else:
        out = json.dumps(doc, ensure_ascii=False)
    return (pad + out + "\n") if depth == 0 else pad + out


#: Facts of the last :func:`run_many` call (``lensbench_files``: the package(s) the driver ran).
LAST_RUN_INFO: dict[str, Any] = {}


def _cost(sc) -> float:
    c = float(len(sc.runs))
    if sc.scripts:
        c += 1.5 if sc.bench in ("if-bench", "groundingme") else 0.8
    return c


def run_many(scenarios, *, python: str, env: dict[str, str], root: Path, workers: int = 2,
             ) -> dict[str, tuple[dict[str, Any] | None, str]]:
    """Run scenarios with one fixture copy and one fake server; the scenarios are split into
    ``workers`` batches, each batch one ``cli_driver.py`` process (imports paid once per batch),
    batches running concurrently. Returns ``{name: (document or None, error text)}``."""
    from concurrent.futures import ThreadPoolExecutor

    LAST_RUN_INFO.clear()
    LAST_RUN_INFO["flags"] = probe_flags([sc.bench for sc in scenarios], python=python, env=env, cwd=root / "_probe")
    fixtures = copy_fixtures(root / "fixtures")
    matcher = ImageMatcher(fixtures / "image_catalog.json")
    server = FakeServer(fixtures, matcher).start() if any(sc.scripts for sc in scenarios) else None
    out: dict[str, tuple[dict[str, Any] | None, str]] = {}
    preps = {sc.name: prepare(sc, fixtures=fixtures, workdir=root / sc.name, server=server) for sc in scenarios}
    n = max(1, min(workers, len(scenarios)))
    batches: list[list[Any]] = [[] for _ in range(n)]
    load = [0.0] * n
    for sc in sorted(scenarios, key=_cost, reverse=True):  # longest first onto the least loaded batch
        k = load.index(min(load))
        batches[k].append(sc)
        load[k] += _cost(sc)

    def one(k: int, batch):
        if not batch:
            return
        steps = [st for sc in batch for st in preps[sc.name].steps]
        wd = root / f"_batch{k}"
        wd.mkdir(exist_ok=True)
        try:
            res = run_steps(steps, python=python, env=env, cwd=wd)
        except Exception as exc:  # noqa: BLE001
            for sc in batch:
                out[sc.name] = (None, f"{type(exc).__name__}: {exc}")
            return
        LAST_RUN_INFO.setdefault("lensbench_files", set()).update(
            s.get("lensbench_file") for s in res if s.get("lensbench_file"))
        i = 0
        for sc in batch:
            prep = preps[sc.name]
            mine = res[i: i + len(prep.steps)]
            i += len(prep.steps)
            try:
                doc = collect(prep, mine, server)
                err = "\n".join(f"step {s['argv'][:2]} rc={s['rc']}\n{s['stderr'][-3000:]}" for s in mine
                                if s["rc"] not in (0, 3))
                if server is not None:
                    fails = [f for f in server.failures if f.startswith(sc.name + ":")]
                    if fails:
                        err += "\nfake server script failures:\n" + "\n".join(fails[:3])
                out[sc.name] = (doc, err)
            except Exception as exc:  # noqa: BLE001
                import traceback

                out[sc.name] = (None, f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")

    try:
        with ThreadPoolExecutor(max_workers=n) as pool:
            list(pool.map(lambda kb: one(*kb), enumerate(batches)))
    finally:
        if server is not None:
            server.stop()
    return out
