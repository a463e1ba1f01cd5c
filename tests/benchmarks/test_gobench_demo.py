"""GOBench demo data (issue 25): ``lensbench data demo gobench DIR`` writes the release layout both GOBench parts
read (``data_total.json`` with ``<category>/<N.M>.png``; VLMEvalKit's ``GOBench.tsv`` with images and ratings),
labelled as not the benchmark; ``data check`` passes on it (and on the other demos); a run scores SPS against its
ratings offline; the generation side reads its prompts and its ratings."""

from __future__ import annotations

import base64
import csv
import importlib.util
import json
from pathlib import Path

import pytest

from clirun import run_cli
from lensbench.benchmarks.gobench.sps import sps


def cli(*args):
    return run_cli(*args)


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    r = cli("data", "demo", "gobench", str(tmp_path_factory.mktemp("gob") / "demo"))
    assert r.returncode == 0, r.stderr
    return Path(r.stdout.strip())


def test_demo_is_the_release_layout_and_labelled(demo):
    assert "NOT THE BENCHMARK" in (demo / "DEMO-DATA-NOT-THE-BENCHMARK.txt").read_text()
    recs = json.loads((demo / "data_total.json").read_text())
    assert len(recs) == 18 and {r["category"] for r in recs} == {"direct_light_images", "reflect_light_images",
                                                                 "refracted_light_images"}
    for r in recs:
        assert (demo / r["image"]).is_file() and r["index"] == r["image"][:-4].replace("/", "_")
        assert len([ln for ln in r["Questions_reality"].splitlines() if ln.strip()]) == 5
    with (demo / "GOBench.tsv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    assert [row["index"] for row in rows] == [str(i) for i in range(1, 19)]
    # the TSV holds each record's own image and prompt, in data_total.json order (VLMEvalKit's numbered rows)
    for r, row in zip(recs, rows):
        assert base64.b64decode(row["image"]) == (demo / r["image"]).read_bytes()
        assert r["prompt"] in row["question"] and "Reality Assessment Score:" in row["answer"]


def test_data_check_passes_on_the_demo_and_says_so(demo):
    r = cli("data", "check", "gobench", str(demo))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "demo data" in r.stdout and "NOT the benchmark" in r.stdout and "loader: records: 18" in r.stdout
    # a real-looking folder with the same 18 records and no demo note still fails the release count
    other = demo.parent / "not-demo"
    other.mkdir()
    (other / "data_total.json").write_bytes((demo / "data_total.json").read_bytes())
    r = cli("data", "check", "gobench", str(other))
    assert r.returncode == 1 and "FAIL  loader: records: 18 (release: 999)" in r.stdout


@pytest.mark.parametrize("bench", ["rgb-th-bench", "if-bench", "iv-bench", "groundingme"])
def test_data_check_passes_on_the_other_demos(bench, tmp_path):
    if bench == "iv-bench" and importlib.util.find_spec("av") is None:
        pytest.skip("IV-Bench demo videos need PyAV")
    r = cli("data", "demo", bench, str(tmp_path / "d"))
    assert r.returncode == 0, r.stderr
    r = cli("data", "check", bench, r.stdout.strip())
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_run_on_the_demo_scores_sps_against_its_ratings(demo, tmp_path):
    replay = tmp_path / "replay.jsonl"
    recs = json.loads((demo / "data_total.json").read_text())
    # every image rated Yes x5 (authenticity 5), aesthetics 3, fidelity 4
    reply = "1. Yes\n2. Yes\n3. Yes\n4. Yes\n5. Yes\nTotal Score: 5\nAesthetics Rating: 3\nInstruction Consistency " \
            "Rating: 4"
    replay.write_text("".join(json.dumps({"request_id": r["index"], "text": reply}) + "\n" for r in recs))
    run = tmp_path / "run"
    r = cli("run", "gobench", "--data-dir", str(demo), "--model", f"replay:{replay}", "--parser", "vlmevalkit",
            "--human-ratings", str(demo / "GOBench.tsv"), "--out", str(run), "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "generated demo data, NOT" in r.stderr
    man = json.loads((run / "run.json").read_text())
    assert man["demo_data"] is True and man["n_samples"] == 18
    # the expected SPS from the TSV's answer cells, computed here (Eq. 1, delta_max 0.5)
    with (demo / "GOBench.tsv").open(encoding="utf-8", newline="") as fh:
        cells = [row["answer"] for row in csv.DictReader(fh, delimiter="\t")]
    human = [dict(ln.rsplit(": ", 1) for ln in c.splitlines()) for c in cells]
    want = sum(sps(3, float(h["Aesthetics Rating"]), 0.5) for h in human) / 18
    recs_out = [json.loads(ln) for ln in (run / "samples.jsonl").read_text().splitlines()]
    assert len(recs_out) == 18 and all(x["outcome"] == "scored" for x in recs_out)
    got = sum(x["scores"]["sps_aesthetics"] for x in recs_out) / 18
    assert got == pytest.approx(want)
    assert cli("report", str(run)).returncode == 0


def test_the_generation_side_reads_the_demo(demo, tmp_path):
    # 'generate' with the folder generator takes one image per scenario prompt of data_total.json
    src = tmp_path / "made"
    for cat in ("direct_light_images", "reflect_light_images", "refracted_light_images"):
        (src / cat).mkdir(parents=True)
        for n in (1, 2):
            (src / cat / f"{n}.png").write_bytes((demo / cat / f"{n}.1.png").read_bytes())
    r = cli("gobench", "generate", "--generator", f"folder:{src}", "--out", str(tmp_path / "out"),
            "--data-dir", str(demo))
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(list((tmp_path / "out").rglob("*.png"))) == 6
    # 'summary' reads the demo's human ratings (numbered rows matched through data_total.json)
    r = cli("gobench", "summary", "--ratings", str(demo / "GOBench.tsv"), "--data-dir", str(demo), "--format", "json")
    assert r.returncode == 0, r.stderr
    t2 = json.loads(r.stdout)["humans: GOBench.tsv"]["table2"]
    assert sorted(t2) == ["variant .1", "variant .2", "variant .3"] and all(v["n"] == 6 for v in t2.values())
    # variant .1's mean aesthetics, from the TSV's answer cells of rows 1, 4, 7, ... (records N.1)
    with (demo / "GOBench.tsv").open(encoding="utf-8", newline="") as fh:
        cells = [row["answer"] for row in csv.DictReader(fh, delimiter="\t")]
    firsts = [float(dict(ln.rsplit(": ", 1) for ln in c.splitlines())["Aesthetics Rating"]) for c in cells[0::3]]
    assert t2["variant .1"]["Aesthetics"] == pytest.approx(sum(firsts) / 6)


def test_load_counts_come_through_loaded_counts_not_a_record(demo, tmp_path):
    """35.5: the loader (gobench/load.py) notes its counts in ``Loaded.counts``; no record carries them, and the
    run's counts still hold them (two images removed: 16 of 18 loaded)."""
    import shutil

    import lensbench
    from lensbench.benchmarks.registry import get_benchmark

    data = tmp_path / "d"
    shutil.copytree(demo, data)
    recs = json.loads((data / "data_total.json").read_text())
    for r in recs[:2]:
        (data / r["image"]).unlink()
    loaded = get_benchmark("gobench")().load(data)
    assert (loaded.counts["n_records_total"], loaded.counts["n_images_missing"], loaded.counts["n_loaded"]) == \
        (len(recs), 2, len(recs) - 2)
    res = lensbench.run("gobench", model="random", out=tmp_path / "run", data_dir=data)
    assert (res.counts["n_records_total"], res.counts["n_images_missing"], res.counts["n_images"]) == \
        (len(recs), 2, len(recs) - 2)
    rows = [json.loads(ln) for ln in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    assert len(rows) == len(recs) - 2 and not any("load_info" in (r.get("extra") or {}) for r in rows)


@pytest.mark.parametrize("bench, field, good", [("gobench", "parser", "vlmevalkit"), ("gobench", "layout", "scenario"),
                                                ("gobench", "prompt_style", "vlmevalkit"),
                                                ("groundingme", "bbox_format", "rel1000"),
                                                ("iv-bench", "pattern", "image-first"),
                                                ("iv-bench", "text_style", "clean")])
def test_enum_options_are_literals(bench, field, good):
    """35.5: option strings are checked once, by their Literal type (no second membership validator)."""
    import typing

    import pydantic

    from lensbench.benchmarks.registry import get_benchmark

    opts = get_benchmark(bench).Options
    assert typing.get_origin(opts.model_fields[field].annotation) is typing.Literal
    assert getattr(opts(**{field: good}), field) == good
    with pytest.raises(pydantic.ValidationError, match=field):
        opts(**{field: "no-such-value"})
