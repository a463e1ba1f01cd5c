"""Replay files: export -> replay keeps every character of a reply; a wrongly typed field, bytes that
are not UTF-8 or a conflicting duplicate is a clear error naming the file, line and field (issue 20
item 10)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clirun import run_cli
from lensbench.backends.replay import ReplayBackend
from lensbench.benchmarks.rgbth.benchmark import RGBThBench
from lensbench.core.errors import DataError

GOOD = '{"request_id": "q/0", "text": "Yes"}'
RGBTH = '"skill": "Scene", "question": "Is it?"'


def replay(path, model=None) -> ReplayBackend:
    """The replay backend of an RGB-Th-Bench run (it reads the benchmark's third-party result format too)."""
    return ReplayBackend(str(path), model, RGBThBench.replay_formats)


def cli(*args):
    return run_cli(*args)


def test_export_replay_round_trip_keeps_line_separators_in_replies(rgbth_gen, tmp_path):
    reply = "Yes\u2028second line\u2029next paragraph\u0085after NEL\x1c\x1d\x1e\x0b\x0c end\r\n"
    run = tmp_path / "orig"
    r = cli("run", "rgb-th-bench", "--data-dir", str(rgbth_gen), "--model", f"constant:{reply}", "--out", str(run),
            "--no-progress", "--limit", "3")
    assert r.returncode == 0, r.stderr
    exported = tmp_path / "replies.jsonl"
    assert cli("export", str(run), "--out", str(exported)).returncode == 0
    raw = exported.read_text(encoding="utf-8")
    # written escaped (issue 30.4: one line per record for every reader, str.splitlines included) ...
    assert not any(c in raw for c in "\u2028\u2029\u0085") and len(raw.splitlines()) == raw.count("\n")
    orig = {json.loads(line)["request_id"]: json.loads(line)["text"] for line in raw.split("\n") if line}
    assert set(orig.values()) == {reply}
    # ... and read back whole when another program wrote them raw (the case that broke)
    unescaped = tmp_path / "raw.jsonl"
    unescaped.write_text("".join(json.dumps(json.loads(x), ensure_ascii=False) + "\n" for x in raw.split("\n") if x),
                         encoding="utf-8")
    assert "\u2028" in unescaped.read_text(encoding="utf-8")
    for f in (exported, unescaped):
        index = replay(f).index
        assert len(orig) == len(index) > 0 and all(index[k] == {"text": v} for k, v in orig.items())
    r = cli("run", "rgb-th-bench", "--data-dir", str(rgbth_gen), "--model", f"replay:{exported}", "--out",
            str(tmp_path / "replayed"), "--no-progress", "--limit", "3")
    assert r.returncode == 0, r.stderr
    again = tmp_path / "again.jsonl"
    assert cli("export", str(tmp_path / "replayed"), "--out", str(again)).returncode == 0
    back = {json.loads(line)["request_id"]: json.loads(line)["text"]
            for line in again.read_text(encoding="utf-8").split("\n") if line}
    assert back == orig


# (second line of the file, the field named, words the message must hold)
BAD_LINES = [
    ('{"request_id": "q/1", "text": 5}', "text", "int"),
    ('{"request_id": "q/1", "text": NaN}', "text", "float"),
    ('{"request_id": "q/1", "text": Infinity}', "text", "float"),
    ('{"request_id": "q/1", "text": ["Yes"]}', "text", "list"),
    ('{"request_id": "q/1", "text": {"content": "Yes"}}', "text", "dict"),
    ('{"request_id": "q/1", "text": true}', "text", "bool"),
    ('{"request_id": ["q/1"], "text": "Yes"}', "request_id", "list"),
    ('{"request_id": 7, "text": "Yes"}', "request_id", "int"),
    ('{"request_id": null, "text": "Yes"}', "request_id", "NoneType"),
    ('{"request_id": {"id": 1}, "text": "Yes"}', "request_id", "dict"),
    ('{"request_id": "q/1", "error": 500}', "error", "int"),
    ('{"request_id": "q/1", "text": null, "error": ["timeout"]}', "error", "list"),
    ('{"request_id": "q/1", "text": "Yes", "model": 3}', "model", "int"),
    ('{"request_id": "q/1", "text": "Yes", "model": ["m"]}', "model", "list"),
    ('{"file": 1, ' + RGBTH + ', "vlm_response_raw": "Yes"}', "file", "int"),
    ('{"file": "Source 1/S", "skill": ["Scene"], "question": "Is it?", "vlm_response_raw": "Yes"}', "skill", "list"),
    ('{"file": "Source 1/S", "skill": "Scene", "question": null, "vlm_response_raw": "Yes"}', "question", "NoneType"),
    ('{"file": "Source 1/S", ' + RGBTH + ', "vlm_response_raw": 1}', "vlm_response_raw", "int"),
    ('{"file": "Source 1/S", ' + RGBTH + ', "vlm_response_raw": ["Yes"]}', "vlm_response_raw", "list"),
    ('{"file": "Source 1/S", ' + RGBTH + ', "vlm_response_raw": NaN}', "vlm_response_raw", "float"),
    ('[1, 2]', None, "not a JSON object"),
    ('"Yes"', None, "not a JSON object"),
    ('17', None, "not a JSON object"),
    ('{"text": "Yes"}', "request_id", "neither"),
    ('{"request_id": "q/1", "text": "Ye', None, "not valid JSON"),
]


@pytest.mark.parametrize("line, field, words", BAD_LINES)
def test_wrongly_typed_fields_name_file_line_and_field(tmp_path, line, field, words):
    p = tmp_path / "replies.jsonl"
    p.write_text(GOOD + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(DataError) as ei:
        replay(p)
    msg = str(ei.value)
    assert str(p) in msg and "line 2" in msg and words in msg, msg
    if field:
        assert f"[field {field!r}]" in msg, msg
    assert "\n" not in msg and len(msg) < 600


@pytest.mark.parametrize("line, field, words", [c for c in BAD_LINES if c[0].startswith("{") and c[0].endswith("}")])
def test_wrongly_typed_fields_in_a_json_list_name_the_record(tmp_path, line, field, words):
    p = tmp_path / "replies.json"
    p.write_text(f"[{GOOD},\n {line}]", encoding="utf-8")
    with pytest.raises(DataError) as ei:
        replay(p)
    msg = str(ei.value)
    assert str(p) in msg and "record 2" in msg and words in msg, msg


@pytest.mark.parametrize("raw, line", [
    (GOOD.encode() + b"\n" + b'{"request_id": "q/1", "text": "caf\xe9"}\n', 2),  # Latin-1
    (b'{"request_id": "q/0", "text": "\xff\xfe"}\n', 1),
    (GOOD.encode() + b"\n" + GOOD.encode() + b"\n" + b'{"request_id": "q/2", "text": "\xc3"}\n', 3),  # cut UTF-8
])
def test_bytes_that_are_not_utf8_name_the_line(tmp_path, raw, line):
    p = tmp_path / "replies.jsonl"
    p.write_bytes(raw)
    with pytest.raises(DataError, match=rf"line {line}: not UTF-8 text") as ei:
        replay(p)
    assert str(p) in str(ei.value)


def test_a_bad_replay_file_is_one_line_on_the_command_line(rgbth_gen, tmp_path):
    p = tmp_path / "replies.jsonl"
    p.write_text(GOOD + '\n{"request_id": "q/1", "text": ["a", "list"]}\n')
    r = cli("run", "rgb-th-bench", "--data-dir", str(rgbth_gen), "--model", f"replay:{p}", "--out",
            str(tmp_path / "run"), "--no-progress")
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(lines) == 1, r.stderr
    assert "line 2" in lines[0] and "'text'" in lines[0] and "list" in lines[0]


def test_a_duplicate_request_id_with_another_reply_is_reported(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_text(GOOD + '\n{"request_id": "q/1", "text": "No"}\n{"request_id": "q/0", "text": "No"}\n')
    with pytest.raises(DataError, match=r"line 3: request_id 'q/0' is recorded again with another reply "
                                        r"\(first at line 1\)") as ei:
        replay(p)
    assert str(p) in str(ei.value)
    p.write_text(GOOD + '\n{"request_id": "q/0", "error": "timeout"}\n')  # a reply and an error for one request
    with pytest.raises(DataError, match="line 2: request_id 'q/0' is recorded again"):
        replay(p)


def test_identical_duplicates_and_other_models_are_fine(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_text(GOOD + "\n" + GOOD + '\n{"request_id": "q/1", "error": "a"}\n{"request_id": "q/1", "error": "b"}\n')
    assert replay(p).index == {"q/0": {"text": "Yes"}, "q/1": {"error": "a"}}
    p.write_text('{"request_id": "q/0", "text": "Yes", "model": "a"}\n{"request_id": "q/0", "text": "No", "model": "b"}\n')
    assert replay(p, "b").index == {"q/0": {"text": "No"}}
