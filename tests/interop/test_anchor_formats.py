"""Issue 33.1: other harnesses' prediction files, written here in the anchors' own layouts, scored by lensbench.

* VLMEvalKit (``vlmeval/inference.py``): the dataset's TSV with the ``image`` column dropped and a
  ``prediction`` column added; GroundingME (``vlmeval/dataset/groundingme.py``: index, question, answer,
  width, height, subtask_l1, subtask_l2) and GOBench (``vlmeval/dataset/gobench.py``: index, question, answer,
  integer indices of ``GOBench.tsv``).
* lmms-eval ``--log_samples`` (``lmms_eval/evaluator.py``): doc_id, doc (the HF fields without the image),
  target, arguments, resps, filtered_resps, token_counts, doc_hash, and the task's metric keys; GroundingME's
  task (``lmms_eval/tasks/groundingme``).
Expected IoUs are computed here from the boxes; rows that fit no item are missing, never wrong; a file of
another benchmark is refused with the columns that do not fit.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lensbench.cli.main import app


def _iou(a, b) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("anchors")
    for bench in ("groundingme", "gobench"):
        r = CliRunner().invoke(app, ["data", "demo", bench, str(root / bench)])
        assert r.exit_code == 0, r.output
    return root


def _tsv_rows(path: Path) -> list[dict[str, str]]:
    csv.field_size_limit(2**31 - 1)
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def _write_predictions(path: Path, columns: list[str], rows: list[dict]) -> None:
    """A VLMEvalKit predictions TSV as ``vlmeval/smp/file.py`` ``dump`` writes it: pandas
    ``to_csv(sep='\\t', index=False, quoting=csv.QUOTE_ALL)``, every cell quoted, the header too."""
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=columns, delimiter="\t", extrasaction="ignore", lineterminator="\n",
                           quoting=csv.QUOTE_ALL)
        w.writeheader()
        w.writerows(rows)


def _run(bench: str, data: Path, pred: Path, out: Path, *extra: str):
    return CliRunner().invoke(app, ["run", bench, "--data-dir", str(data), "--model", f"predictions:{pred}",
                                    "--out", str(out), "--no-progress", *extra])


def _records(out: Path) -> dict[str, dict]:
    return {r["sample_id"]: r for r in map(json.loads, (out / "samples.jsonl").read_text(encoding="utf-8").splitlines())}


def _gm_prediction(i: int, gt: list[float] | None) -> tuple[str, list[float] | None]:
    """Row i's reply and the box it states: the ground truth shifted right by 3*i pixels, null for Rejection."""
    if gt is None:
        return '{"bbox_2d": null}', None
    box = [gt[0] + 3 * i, gt[1], gt[2] + 3 * i, gt[3]]
    return "The object is here.\n" + json.dumps({"bbox_2d": box}), box


def test_vlmevalkit_groundingme_predictions_are_scored_and_unmatched_rows_are_missing(demo, tmp_path):
    data = demo / "groundingme"
    rows = _tsv_rows(data / "groundingme.tsv")
    expected = {}
    for i, row in enumerate(rows):
        gt = json.loads(row["answer"]) if row["answer"] else None
        row["prediction"], box = _gm_prediction(i, gt)
        expected[row["index"]] = None if gt is None else _iou(gt, box)
    rows[1]["question"] = "a purple triangle"  # names sample 1 but is not its description: missing, not wrong
    rows[2]["prediction"] = "Failed to obtain answer via API. HTTP 500"  # VLMEvalKit's failure marker
    rows.append(dict(rows[0], index="999"))  # an item the benchmark does not have
    pred = tmp_path / "Qwen2.5-VL-7B_GroundingME.tsv"
    _write_predictions(pred, ["index", "question", "answer", "width", "height", "subtask_l1", "subtask_l2",
                              "prediction"], rows)
    out = tmp_path / "run"
    r = _run("groundingme", data, pred, out)
    assert r.exit_code == 3, r.output  # two items have no usable reply: an incomplete run, not a crash
    recs = _records(out)
    assert len(recs) == 12
    assert recs["1"]["outcome"] == "error" and "missing:" in recs["1"]["error"] and "purple" in recs["1"]["error"]
    assert recs["2"]["outcome"] == "error" and "Failed to obtain answer" in recs["2"]["error"]
    for sid, want in expected.items():
        if sid in ("1", "2"):
            continue
        rec = recs[sid]
        if want is None:
            assert rec["outcome"] == "correct", sid  # a null box on a Rejection item
        else:
            assert rec["scores"]["iou"] == pytest.approx(want), sid
            assert rec["outcome"] == ("correct" if want >= 0.5 else "wrong"), sid
    doc = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert doc["counts"]["n_error"] == 2
    note = " ".join(doc["extra"]["predictions"])
    assert "VLMEvalKit predictions" in note and "GroundingME box parser" in note
    assert "1 rows were not asked for" in note and "index 999" in note
    assert "predictions: VLMEvalKit predictions Qwen2.5-VL-7B_GroundingME.tsv: 13 rows read" in r.output


def test_lmms_eval_groundingme_samples_use_the_raw_reply_not_the_filtered_one(demo, tmp_path):
    rows = _tsv_rows(demo / "groundingme" / "groundingme.tsv")
    lines, expected = [], {}
    for i, row in enumerate(rows):
        gt = json.loads(row["answer"]) if row["answer"] else None
        reply, box = _gm_prediction(i, gt)
        reply = "<think>the box is near the left edge</think>" + reply
        doc = {"id": int(row["index"]), "description": row["question"], "bbox": gt,
               "subtask_l1": row["subtask_l1"], "subtask_l2": row["subtask_l2"],
               "width": int(row["width"]), "height": int(row["height"])}
        lines.append({"doc_id": i, "doc": doc, "target": "",
                      "arguments": [f"Please provide the bounding box ... {row['question']}",
                                    {"max_new_tokens": 20480, "temperature": 0.0, "do_sample": False}, i,
                                    "groundingme", "test"],
                      "resps": [[reply]], "filtered_resps": ['{"bbox_2d": [0, 0, 1, 1]}'],  # a filter's own reading
                      "token_counts": [None], "doc_hash": f"{i:064x}",
                      "groundingme_IoU": {"iou": 0.0, "subtask_l1": row["subtask_l1"]}})
        expected[row["index"]] = None if gt is None else _iou(gt, box)
    pred = tmp_path / "20260101_000000_samples_groundingme.jsonl"
    pred.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    out = tmp_path / "run"
    r = _run("groundingme", demo / "groundingme", pred, out)
    assert r.exit_code == 0, r.output
    recs = _records(out)
    for sid, want in expected.items():
        if want is None:
            assert recs[sid]["outcome"] == "correct"
        else:
            assert recs[sid]["scores"]["iou"] == pytest.approx(want)
    note = " ".join(json.loads((out / "result.json").read_text(encoding="utf-8"))["extra"]["predictions"])
    assert "lmms-eval samples" in note and "'filtered_resps'" in note and "not used" in note


def _go_reply(k: int) -> str:
    return json.dumps({"realityAnswers_Eval": ["Yes", "No", "Yes", "Cannot Determine", "Yes"],
                       "aestheticsRating_Eval": 1 + k % 5, "consistencyRating_Eval": 5 - k % 5})


def test_vlmevalkit_gobench_integer_indices_are_the_rows_of_gobench_tsv(demo, tmp_path):
    data = demo / "gobench"
    tsv = _tsv_rows(data / "GOBench.tsv")
    for k, row in enumerate(tsv):
        row["prediction"] = _go_reply(k)
    pred = tmp_path / "GPT4o_GOBench.tsv"
    _write_predictions(pred, ["index", "question", "answer", "prediction"], tsv)
    records = json.loads((data / "data_total.json").read_text(encoding="utf-8"))
    out = tmp_path / "run"
    r = _run("gobench", data, pred, out, "--human-ratings", str(data / "GOBench.tsv"))
    assert r.exit_code == 0, r.output
    recs = _records(out)
    assert len(recs) == len(records) == len(tsv)
    # the demo's GOBench.tsv numbers the images of data_total.json from 1, in its order
    by_index = {str(k + 1): rec["index"] for k, rec in enumerate(records)}
    for k, row in enumerate(tsv):
        got = recs[by_index[row["index"]]]
        assert got["answer"]["aesthetics"] == 1 + k % 5 and got["answer"]["fidelity"] == 5 - k % 5
        assert got["answer"]["authenticity"] == 3.5
    # exported back, each image's row carries its human means in VLMEvalKit's 'answer' text, and scores the same
    back = tmp_path / "back.tsv"
    r = CliRunner().invoke(app, ["export", str(out), "--format", "vlmevalkit-tsv", "--out", str(back)])
    assert r.exit_code == 0, r.output
    numbers = {row["index"]: re.findall(r"[\d.]+", row["answer"]) for row in tsv}
    for row in _tsv_rows(back):
        k = next(i for i, rec in by_index.items() if rec == row["index"])  # exported index: the record index
        assert [float(x) for x in re.findall(r"[\d.]+", row["answer"])] == [float(x) for x in numbers[k]]
    again = tmp_path / "again"
    r = _run("gobench", data, back, again, "--human-ratings", str(data / "GOBench.tsv"))
    assert r.exit_code == 0, r.output
    first, second = (json.loads((d / "result.json").read_text(encoding="utf-8")) for d in (out, again))
    assert second["metrics"] == first["metrics"] and first["metrics"]["SPS"]["Aesthetics"] is not None


def test_vlmevalkit_gobench_integer_indices_without_the_tsv_match_nothing(demo, tmp_path):
    data = demo / "gobench"
    tsv = _tsv_rows(data / "GOBench.tsv")
    for k, row in enumerate(tsv):
        row["prediction"] = _go_reply(k)
    pred = tmp_path / "GPT4o_GOBench.tsv"
    _write_predictions(pred, ["index", "question", "answer", "prediction"], tsv)
    out = tmp_path / "run"
    r = _run("gobench", data, pred, out)
    assert r.exit_code == 3, r.output
    doc = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert doc["counts"]["n_error"] == len(tsv)  # every image missing, none scored
    assert f"{len(tsv)} rows were not asked for" in " ".join(doc["extra"]["predictions"])


def test_a_file_of_another_benchmark_is_refused_naming_the_columns(demo, tmp_path):
    go = tmp_path / "GOBench_preds.tsv"
    _write_predictions(go, ["index", "question", "answer", "prediction"],
                       [{"index": "1", "question": "q", "answer": "Aesthetics Rating: 3", "prediction": "x"}])
    r = _run("groundingme", demo / "groundingme", go, tmp_path / "a")
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "GOBench_preds.tsv" in r.output and "no column 'width', 'height', 'subtask_l1', 'subtask_l2'" in r.output
    assert not (tmp_path / "a" / "samples.jsonl").exists()

    gm = tmp_path / "GroundingME_preds.tsv"
    _write_predictions(gm, ["index", "question", "answer", "width", "height", "subtask_l1", "subtask_l2",
                            "prediction"],
                       [{"index": "0", "question": "the yellow circle", "answer": "[62, 51, 96, 85]", "width": 160,
                         "height": 120, "subtask_l1": "Discriminative", "subtask_l2": "Appearance",
                         "prediction": "{}"}])
    r = _run("gobench", demo / "gobench", gm, tmp_path / "b")
    assert r.exit_code == 2 and "column 'answer' holds '[62, 51, 96, 85]'" in r.output, r.output

    lm = tmp_path / "samples_groundingme.jsonl"
    lm.write_text(json.dumps({"doc_id": 0, "doc": {"id": 0, "description": "d"}, "resps": [["{}"]]}) + "\n")
    r = _run("if-bench", demo / "groundingme", lm, tmp_path / "c")
    assert r.exit_code == 2 and "doc has no 'qid'" in r.output and "its fields: description, id" in r.output
