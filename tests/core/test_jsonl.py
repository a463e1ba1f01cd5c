"""Issue 30 part 4: one JSON Lines reader and one writer (lensbench.core.jsonl).

U+2028, U+2029 and U+0085 are line breaks to ``str.splitlines`` but ordinary characters inside a JSON
string. The writer escapes them (one line per record for every reader); the reader splits on "\\n" only
(a file written elsewhere, with the characters raw, reads back whole). Each command that writes and then
reads JSONL is fed the three characters and must give them back unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lensbench.cli.main import app
from lensbench.core.errors import DataError
from lensbench.report.runs import iter_samples
from lensbench.core.jsonl import (read_json, dumps_line, iter_jsonl, iter_lines, jsonl_text, read_jsonl, safe_line,
                                  write_jsonl)

SEPS = "\u2028\u2029\x85"
NASTY = "first\u2028second\u2029third\x85fourth"  # what a model or an annotator may write


def _cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def _raw(path: Path, rows: list, newline: str = "\n") -> Path:
    """A JSONL file as another program writes it: the three characters raw (json.dumps, ensure_ascii off)."""
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + newline for r in rows), encoding="utf-8",
                    newline="")
    if any(NASTY in json.dumps(r, ensure_ascii=False) for r in rows):
        assert all(c in path.read_text(encoding="utf-8") for c in SEPS)
    return path


# ----------------------------------------------------------------- the writer and the reader
def test_writer_escapes_the_three_and_reader_round_trips(tmp_path):
    rows = [{"text": NASTY, "k\u2028ey": [NASTY, 1.5, None]}, {"text": "汉字 é \r\n \t end"}, [NASTY], NASTY]
    f = tmp_path / "rows.jsonl"
    assert write_jsonl(f, rows) == 4
    text = f.read_text(encoding="utf-8")
    assert not any(c in text for c in SEPS)
    assert "汉字 é" in text  # UTF-8 text stays as it is (ensure_ascii off, as before)
    assert len(text.splitlines()) == 4 == text.count("\n")  # one line per record for every reader
    assert read_jsonl(f) == rows
    assert jsonl_text(rows) == text
    assert dumps_line(rows[0]) == text.split("\n")[0]
    assert dumps_line({"a": NASTY}, ensure_ascii=True) == json.dumps({"a": NASTY})


def test_safe_line_is_free_when_there_is_nothing_to_escape():
    s = json.dumps({"a": "plain text " * 20}, ensure_ascii=False)
    assert safe_line(s) is s
    assert safe_line('"\u2028"') == '"\\u2028"' and json.loads(safe_line('"\u2028\x85"')) == "\u2028\x85"


def test_reader_splits_on_newline_only(tmp_path):
    rows = [{"id": 1, "text": NASTY}, {"id": 2, "text": "plain"}]
    f = _raw(tmp_path / "raw.jsonl", rows, newline="\r\n")
    assert len(f.read_text(encoding="utf-8").splitlines()) > 2  # what broke before
    assert read_jsonl(f) == rows
    assert [ln for ln, _v in iter_jsonl(f)] == [1, 2]
    f.write_bytes(b"\xef\xbb\xbf\n" + f.read_bytes() + b"\n  \n")  # a BOM, blank lines
    assert [(ln, v) for ln, v in iter_jsonl(f)] == [(2, rows[0]), (3, rows[1])]
    assert list(iter_lines("a\u2028b\n\nc\x85\n")) == [(1, "a\u2028b"), (3, "c\x85")]


@pytest.mark.parametrize("content,kind,message", [
    (b'{"a": 1}\n\n{"a": \n', None, "line 3: not valid JSON"),
    (b'{"a": 1}\n{"a": "\xff"}\n', None, "line 2: not UTF-8 text (byte 0xff"),
    (b'{"a": 1}\n[1, 2]\n', dict, "line 2: not a JSON object but list"),
    (b'[1]\n{"a": 1}\n', list, "line 2: not a JSON list but dict"),
])
def test_reader_errors_name_file_and_line(tmp_path, content, kind, message):
    f = tmp_path / "bad.jsonl"
    f.write_bytes(content)
    with pytest.raises(DataError) as exc:
        read_jsonl(f, kind=kind)
    assert message in str(exc.value) and str(f) in str(exc.value)


def test_missing_file_names_what_it_is(tmp_path):
    with pytest.raises(DataError, match="grounding items file not found"):
        read_jsonl(tmp_path / "none.jsonl", "grounding items file")


# ----------------------------------------------------------------- commands: write, then read back
def test_run_samples_report_export_and_replay_keep_the_characters(tmp_path):
    """run (samples.jsonl) -> report -> export -> replay: replies with the three characters."""
    assert _cli("data", "demo", "rgb-th-bench", tmp_path / "d").exit_code == 0
    data = tmp_path / "d" / "Data"
    first = tmp_path / "r0"
    assert _cli("run", "rgb-th-bench", "--data-dir", data, "--model", "random", "--out", first).exit_code == 0
    ids = [json.loads(x)["request_id"] for x in (first / "samples.jsonl").read_text(encoding="utf-8").split("\n") if x]
    replies = {rid: (f"Yes{SEPS[i % 3]}because{NASTY}" if i % 3 else f"No{NASTY}") for i, rid in enumerate(ids)}
    replay = _raw(tmp_path / "replies.jsonl", [{"request_id": k, "text": v} for k, v in replies.items()])
    run = tmp_path / "r1"
    r = _cli("run", "rgb-th-bench", "--data-dir", data, "--model", f"replay:{replay}", "--out", run)
    assert r.exit_code == 0, r.output
    samples = (run / "samples.jsonl").read_text(encoding="utf-8")
    assert not any(c in samples for c in SEPS) and len(samples.splitlines()) == len(ids)
    got = {s["request_id"]: s["reply"] for s in map(json.loads, samples.splitlines())}
    assert got == replies
    assert _cli("report", run).exit_code == 0
    assert {r.request_id: r.reply for r in iter_samples(run)} == replies  # what report and view read
    exported = tmp_path / "export.jsonl"
    assert _cli("export", run, "--out", exported).exit_code == 0
    text = exported.read_text(encoding="utf-8")
    assert not any(c in text for c in SEPS) and len(text.splitlines()) == len(ids)
    again = tmp_path / "r2"
    r = _cli("run", "rgb-th-bench", "--data-dir", data, "--model", f"replay:{exported}", "--out", again)
    assert r.exit_code == 0, r.output
    assert [json.loads(x)["reply"] for x in (again / "samples.jsonl").read_text(encoding="utf-8").splitlines()] == \
        [got[i] for i in ids]
    result = lambda d: json.loads((d / "result.json").read_text(encoding="utf-8"))["metrics"]  # noqa: E731
    assert result(again) == result(run)


def test_train_groundingme_data_then_mix(tmp_path):
    """The issue's case: 'train groundingme data' then 'train groundingme mix' with a U+2028 in a description."""
    from lensbench.tools.groundingme.train_demo import make_grounding_demo
    from lensbench.tools.training.sft_data import read_examples

    demo = make_grounding_demo(tmp_path / "demo")
    refs = [json.loads(x) for x in demo["refs"].read_text(encoding="utf-8").split("\n") if x]
    for i, r in enumerate(refs):
        r["description"] = f"the box{SEPS[i % 3]}on the {NASTY} left"
    _raw(demo["refs"], refs)
    items = tmp_path / "items.jsonl"
    r = _cli("train", "groundingme", "data", "--source", demo["refs"], "--out", items, "--split", "train")
    assert r.exit_code == 0, r.output
    read = [json.loads(x) for x in items.read_text(encoding="utf-8").splitlines()]
    assert {x["description"] for x in read} == {r["description"] for r in refs if r.get("split", "train") == "train"}
    r = _cli("train", "groundingme", "mix", "--positives", items, "--negatives", demo["negatives_train"],
             "--out", tmp_path / "mix", "--ratios", "1:2")
    assert r.exit_code == 0, r.output
    exs = read_examples(tmp_path / "mix" / "mix_1-2.jsonl")
    texts = [e["prompt"][0]["content"][1]["text"] for e in exs if e["meta"]["label"] == "positive"]
    assert texts and all(NASTY in t for t in texts)


def test_groundingme_candidates_read_back_for_review(tmp_path):
    """'groundingme build' writes candidates.jsonl, 'groundingme review' reads it (a traceback before)."""
    from lensbench.tools.groundingme.build import CANDIDATES, read_candidates, write_jsonl_atomic

    rows = [{"id": f"c{i}", "description": f"{NASTY} {i}"} for i in range(3)]
    write_jsonl_atomic(tmp_path / CANDIDATES, rows)
    assert read_candidates(tmp_path) == rows
    _raw(tmp_path / CANDIDATES, rows)
    assert read_candidates(tmp_path) == rows
    (tmp_path / CANDIDATES).write_text('{"id": "c0"}\n{"id": \n', encoding="utf-8")
    with pytest.raises(DataError, match="line 2: not valid JSON"):
        read_candidates(tmp_path)


def test_other_readers_take_the_characters_raw(tmp_path):
    """Every other JSONL reader, given a file written elsewhere with the three characters raw."""
    from lensbench.benchmarks.groundingme.items import read_items_file, write_items_file
    from lensbench.benchmarks.ivbench.data import load_queries
    from lensbench.tools.groundingme.negatives import read_refexp_source
    from lensbench.tools.ifbench.collect import read_annotations
    from lensbench.tools.ivbench.download import read_ids
    from lensbench.tools.ivbench.sft_data import source_questions
    from lensbench.tools.ivbench.synth import load_videoqa
    from lensbench.tools.training.sft_data import make_example, read_examples, write_examples

    from PIL import Image

    img = tmp_path / "i.png"
    Image.new("RGB", (64, 48)).save(img)  # a real image: the training reader checks it (issue 30.3)
    item = {"id": "a", "image": "i.png", "description": NASTY, "bbox": [1, 2, 30, 40], "width": 64, "height": 48}
    assert read_items_file(_raw(tmp_path / "items.jsonl", [item]))[0]["description"] == NASTY
    write_items_file(tmp_path / "items2.jsonl", [item])
    assert read_items_file(tmp_path / "items2.jsonl")[0]["description"] == NASTY
    assert read_refexp_source(_raw(tmp_path / "refs.jsonl", [item]))[0]["description"] == NASTY
    ann = read_annotations(_raw(tmp_path / "ann.jsonl", [{"image": "i.png", "description": NASTY,
                                                           "box": [1, 2, 30, 40]}]))
    assert ann["i.png"][0]["description"] == NASTY
    q = {"data_id": 1, "image_name": "q.png", "question": NASTY, "question_type": "Counting", "granularity": "",
         "answer": "two", "answer_location": "", "distractors": ["one", "three"], "source_question": NASTY}
    ivq = _raw(tmp_path / "test_data.jsonl", [{"vid1": [q]}])
    assert load_queries(ivq)[0].question == NASTY
    assert source_questions(ivq) == {"vid1/1": NASTY}
    assert read_ids(ivq) == ["vid1"]
    vqa = load_videoqa(_raw(tmp_path / "vqa.jsonl", [{"video_id": "v", "question": NASTY, "answer": "a"}]))
    assert vqa[0].question == NASTY
    ex = make_example("e1", [img, NASTY], NASTY)
    write_examples(tmp_path / "sft.jsonl", [ex])
    assert not any(c in (tmp_path / "sft.jsonl").read_text(encoding="utf-8") for c in SEPS)
    assert read_examples(tmp_path / "sft.jsonl")[0]["id"] == "e1"
    assert NASTY in json.dumps(read_examples(tmp_path / "sft.jsonl"), ensure_ascii=False)


def test_more_readers_take_the_characters_raw(tmp_path):
    """GenViP manifests and metadata, GroundingME box files, GOBench judge ratings (a run's samples.jsonl)."""
    from lensbench.tools.gobench.summary import rows_from_run
    from lensbench.tools.groundingme.boxfile import read_box_file
    from lensbench.tools.ifbench.genvip.editor_data import pairs_from_manifest, read_diffsynth_metadata

    from PIL import Image

    for n in ("ir.png", "rgb.png"):
        Image.new("RGB", (8, 8)).save(tmp_path / n)  # real images: the pair readers check them (issue 30.3)
    m = _raw(tmp_path / "manifest.jsonl", [{"ir": "ir.png", "rgb": "rgb.png", "kept": True, "reason": NASTY}])
    assert [p.target.name for p in pairs_from_manifest(m)] == ["rgb.png"]
    meta = read_diffsynth_metadata(_raw(tmp_path / "meta.jsonl", [{"edit_image": "ir.png", "image": "rgb.png",
                                                                    "prompt": NASTY}]))
    assert meta[0].prompt == NASTY
    boxes = read_box_file(_raw(tmp_path / "boxes.jsonl", [{"image": "ir.png", "label": NASTY, "bbox": [1, 2, 3, 4]}]),
                          tmp_path)
    assert [d.label for d in boxes[tmp_path / "ir.png"]] == [NASTY]
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"model_name": "judge"}), encoding="utf-8")
    _raw(run / "samples.jsonl", [{"outcome": "scored", "sample_id": "s1", "reply": NASTY,
                                  "labels": {"image": f"img{NASTY}"}, "scores": {"aesthetics": 3}}])
    assert [r.key for r in rows_from_run(run).rows] == [f"img{NASTY}"]


def test_read_json_reads_a_document_and_names_the_file_when_it_is_not_json(tmp_path):
    """The one JSON question-file reader (issue 35.4): IF-Bench, RGB-Th-Bench and GOBench read through it."""
    good = tmp_path / "q.json"
    good.write_text('{"data": [{"QAs": []}], "n": "é"}', encoding="utf-8")
    assert read_json(good) == {"data": [{"QAs": []}], "n": "é"}
    bad = tmp_path / "bad.json"
    bad.write_text('{"data": [1,]}', encoding="utf-8")
    with pytest.raises(DataError) as e:
        read_json(bad)
    try:
        json.loads('{"data": [1,]}')
    except json.JSONDecodeError as exc:
        why = str(exc)
    assert str(bad) in str(e.value) and f"not valid JSON: {why}" in str(e.value)
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"a": "\xe9"}')
    with pytest.raises(DataError, match="not valid JSON"):
        read_json(latin)
