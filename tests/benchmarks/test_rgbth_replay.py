"""RGB-Th-Bench scored on real recorded replies (GLM-4.5V, SmolVLM2), against an independent count."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import pytest

from lensbench.benchmarks.rgbth.benchmark import RGBThBench
from lensbench.runtime.runner import RunSettings, run_benchmark

PAPER_SKILLS_BY_GROUP = {
    "RGB-Txt": ["Scene Understanding", "Detailed Object Presence", "Instance Attributes",
                "Instance Location w.r.t. Image", "Instance Spatial Relation", "Instance Counting",
                "Instance Interaction"],
    "RGB-Th-Txt": ["Temperature to Color Mapping Understanding", "RGB-Thermal-Heatmap Alignment",
                   "Instance Thermal Attribute", "Relative Thermal Attribute", "Warmest Areas Detection",
                   "Coldest Areas Detection", "Risk and Anomaly Detection"],
}


def independent_scores(data_dir: Path, replies_file: Path):
    """Count QAcc/SAcc from the release's questions.json files and the raw replies, by hand."""
    replies = defaultdict(list)
    for r in json.loads(replies_file.read_text()):
        scene = "/".join(r["file"].replace("\\", "/").split("/")[:2])
        replies[(scene, r["skill"], r["question"].strip())].append(r["vlm_response_raw"])
    q_ok = defaultdict(lambda: [0, 0])
    u_ok = defaultdict(lambda: [0, 0])
    fails = 0
    for f in sorted(data_dir.glob("*/*/questions.json")):
        scene = f"{f.parent.parent.name}/{f.parent.name}"
        for item in json.loads(f.read_text())["data"]:
            skill = item["skill_type"]
            if not any(skill in v for v in PAPER_SKILLS_BY_GROUP.values()):
                continue
            all_right = True
            asked: dict[str, int] = defaultdict(int)
            for qa in item["QAs"]:
                q = qa["question"].strip()
                raw = replies[(scene, skill, q)][asked[q]]  # the n-th ask gets the n-th recorded reply
                asked[q] += 1
                raw = raw.replace("<|begin_of_box|>", "").replace("<|end_of_box|>", "")
                words = re.findall(r"[a-z]+", raw.lower())
                ans = next((w for w in words if w in ("yes", "no")), None)
                fails += ans is None
                right = ans is not None and ans == qa["answer"].lower()
                q_ok[skill][0] += right
                q_ok[skill][1] += 1
                all_right &= right
            u_ok[skill][0] += all_right
            u_ok[skill][1] += 1
    out = {}
    for metric, tab in (("QAcc", q_ok), ("SAcc", u_ok)):
        per = {s: 100 * a / n for s, (a, n) in tab.items()}
        groups = {g: sum(per[s] for s in ss) / len(ss) for g, ss in PAPER_SKILLS_BY_GROUP.items()}
        groups["Overall"] = sum(per.values()) / len(per)
        out[metric] = groups
    return out, fails


@pytest.mark.parametrize("fname", ["benchmark_results_GLM.json", "benchmark_results_smolvlm2_2_2B_instruct.json"])
def test_replay_equals_independent_count(rgbth_data, tmp_path, fname):
    replies = rgbth_data.parent.parent / fname
    expected, fails = independent_scores(rgbth_data, replies)
    res = run_benchmark(RGBThBench(), RunSettings(model=f"replay:{replies}", out=tmp_path / "run",
                                                  data_dir=rgbth_data, progress=False))
    assert res.complete and res.counts["n"] == 1624 and res.counts["n_error"] == 0
    assert res.counts["n_unparseable"] == fails
    for metric in ("QAcc", "SAcc"):
        for col in ("RGB-Txt", "RGB-Th-Txt", "Overall"):
            assert res.metrics[metric][col] == pytest.approx(expected[metric][col], abs=1e-9), (metric, col)
    # the per-sample log keeps the raw reply (GLM box tokens included)
    first = json.loads((tmp_path / "run" / "samples.jsonl").read_text().splitlines()[0])
    assert "reply" in first and first["outcome"] in ("correct", "wrong", "unparseable")


def test_recorded_error_reply_is_never_scored(rgbth_data, tmp_path):
    """gemini-2.5-pro's file holds one 'Error: 500 INTERNAL' reply: it must be an error, not an answer."""
    replies = rgbth_data.parent.parent / "benchmark_results_google.json"
    res = run_benchmark(RGBThBench(), RunSettings(model=f"replay:{replies}", replay_model="gemini-2.5-pro",
                                                  out=tmp_path / "g", data_dir=rgbth_data, progress=False))
    raw = [r for r in json.loads(replies.read_text()) if r["model"] == "gemini-2.5-pro"
           and r["vlm_response_raw"].startswith("Error:")]
    assert len(raw) == 1
    assert res.counts["n_error"] == 1 and not res.complete
    assert res.counts["n"] == 1623 and res.counts["n_units_missing"] == 1
    recs = [json.loads(x) for x in (tmp_path / "g" / "samples.jsonl").read_text().splitlines()]
    err = [r for r in recs if r["outcome"] == "error"]
    assert len(err) == 1 and err[0]["extra"]["question"] == raw[0]["question"].strip()


def test_multi_model_file_needs_replay_model(rgbth_data, tmp_path):
    from lensbench.core.errors import ConfigError

    with pytest.raises(ConfigError, match="--replay-model"):
        run_benchmark(RGBThBench(), RunSettings(model=f"replay:{rgbth_data.parent.parent / 'benchmark_results_aliyun.json'}",
                                                out=tmp_path / "x", data_dir=rgbth_data, progress=False))


def test_extra_skills_are_opt_in(rgbth_data, tmp_path):
    b = RGBThBench(RGBThBench.Options(include_extra_skills=True))
    res = run_benchmark(b, RunSettings(model="constant:No", out=tmp_path / "c", data_dir=rgbth_data, progress=False))
    assert res.counts["n"] == 1856
    assert "NumText" in res.metrics["QAcc"] and "NonNumText" in res.metrics["QAcc"]
    # group and Overall scores stay over the paper's 14 skills
    fourteen = [v for k, v in res.metrics["QAcc"].items() if k not in ("Overall", "RGB-Txt", "RGB-Th-Txt", "NumText", "NonNumText")]
    assert len(fourteen) == 14
    assert res.metrics["QAcc"]["Overall"] == pytest.approx(sum(fourteen) / 14)


def independent_thermal_only(data_dir: Path, replies_file: Path):
    """QAcc/SAcc by hand for a thermal-only file: a question without a recorded reply (the
    third-party script skipped repeated question texts) or with an ``Error:`` reply is left
    out of QAcc, and its unit out of SAcc; the n-th ask of a question takes the n-th reply."""
    replies = defaultdict(list)
    for r in json.loads(replies_file.read_text()):
        scene = "/".join(r["file"].replace("\\", "/").split("/")[:2])
        replies[(scene, r["skill"], r["question"].strip())].append(r["vlm_response_raw"])
    q_ok, u_ok = defaultdict(lambda: [0, 0]), defaultdict(lambda: [0, 0])
    missing = 0
    for f in sorted(data_dir.glob("*/*/questions.json")):
        scene = f"{f.parent.parent.name}/{f.parent.name}"
        for item in json.loads(f.read_text())["data"]:
            skill = item["skill_type"]
            if not any(skill in v for v in PAPER_SKILLS_BY_GROUP.values()):
                continue
            asked: dict[str, int] = defaultdict(int)
            unit_ok, complete = True, True
            for qa in item["QAs"]:
                q = qa["question"].strip()
                got = replies[(scene, skill, q)]
                raw = got[asked[q]] if asked[q] < len(got) else None
                asked[q] += 1
                if raw is None or raw.startswith("Error:"):
                    missing += 1
                    complete = False
                    continue
                words = re.findall(r"[a-z]+", re.sub(r"<think>.*?</think>", "", raw, flags=re.S).lower())
                ans = next((w for w in words if w in ("yes", "no")), None)
                right = ans == qa["answer"].strip().lower()
                q_ok[skill][0] += right
                q_ok[skill][1] += 1
                unit_ok &= right
            if complete:
                u_ok[skill][0] += unit_ok
                u_ok[skill][1] += 1
    out = {}
    for metric, tab in (("QAcc", q_ok), ("SAcc", u_ok)):
        per = {s: 100 * a / n for s, (a, n) in tab.items() if n}
        groups = {g: sum(per[s] for s in ss if s in per) / len([s for s in ss if s in per])
                  for g, ss in PAPER_SKILLS_BY_GROUP.items()}
        groups["Overall"] = sum(per.values()) / len(per)
        groups["Coldest"] = per.get("Coldest Areas Detection")
        out[metric] = groups
    return out, missing


@pytest.mark.parametrize("fname", ["benchmark_results_gemini-2.5-flash_thermal_only.json",
                                   "benchmark_results_gpt-5_thermal_only.json",
                                   "benchmark_results_unsloth_Qwen3-VL-8B-Thinking-GGUF_Q8_0_thermal_only.json"])
def test_thermal_only_replay_equals_independent_count(rgbth_data, tmp_path, fname):
    replies = rgbth_data.parent.parent / fname
    expected, missing = independent_thermal_only(rgbth_data, replies)
    res = run_benchmark(RGBThBench(RGBThBench.Options(input="thermal-only")),
                        RunSettings(model=f"replay:{replies}", out=tmp_path / "run", data_dir=rgbth_data, progress=False))
    assert res.counts["n_error"] == missing and res.counts["n"] == 1624 - missing
    for metric in ("QAcc", "SAcc"):
        for col in ("RGB-Txt", "RGB-Th-Txt", "Overall", "Coldest"):
            assert res.metrics[metric][col] == pytest.approx(expected[metric][col], abs=1e-9), (metric, col)


def test_thermal_only_coldest_symptom(rgbth_data, tmp_path):
    """Coldest QAcc of gemini-2.5-flash thermal-only is 81/109 (the second ask of Source 2/3's repeated
    question has no recorded reply), not 82/110 (a copy of the first reply)."""
    replies = rgbth_data.parent.parent / "benchmark_results_gemini-2.5-flash_thermal_only.json"
    res = run_benchmark(RGBThBench(RGBThBench.Options(input="thermal-only")),
                        RunSettings(model=f"replay:{replies}", out=tmp_path / "run", data_dir=rgbth_data, progress=False))
    assert res.metrics["QAcc"]["Coldest"] == pytest.approx(100 * 81 / 109)
    assert res.counts["per_skill"]["Coldest"]["questions"] == 109


def test_real_thermal_only_file_refused_under_paper_input(rgbth_data, tmp_path):
    from lensbench.core.errors import ConfigError

    replies = rgbth_data.parent.parent / "benchmark_results_gpt-5_thermal_only.json"
    with pytest.raises(ConfigError, match="--input thermal-only"):
        run_benchmark(RGBThBench(), RunSettings(model=f"replay:{replies}", out=tmp_path / "x", data_dir=rgbth_data,
                                                progress=False))


def test_release_defect_reported(rgbth_data, tmp_path):
    res = run_benchmark(RGBThBench(), RunSettings(model="constant:Yes", out=tmp_path / "c", data_dir=rgbth_data,
                                                  progress=False))
    assert [d["unit"] for d in res.counts["data_defects"]] == ["Source 1/Fuse panel 2/Temp2Col"]
