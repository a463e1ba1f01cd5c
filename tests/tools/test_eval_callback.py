"""Evaluating during training (issue 33.3) on the tiny Qwen2.5-VL (torch, TRL, peft; skipped without them):
the hf: backend around the live model shares its weights (no copy), training with the callback is the same as
without it (loss sequence and final weights equal, bit for bit; train mode and RNG restored), one resumable run
folder per step, metrics with CIs reaching the trainer's other callbacks, the curve, and the CLI flag."""

from __future__ import annotations

import csv
import json
import random

import pytest
from PIL import Image

pytest.importorskip("torch")
pytest.importorskip("trl")
pytest.importorskip("peft")
pytest.importorskip("pyarrow")

from lensbench.benchmarks.rgbth.demo import write_release  # noqa: E402
from lensbench.core.errors import ConfigError  # noqa: E402
from lensbench.tools.training.eval_callback import LOG_PREFIX, LensbenchEvalCallback  # noqa: E402
from lensbench.tools.training.settings import VLMTrainSettings  # noqa: E402
from lensbench.tools.training.sft_data import make_example, read_examples, write_examples  # noqa: E402
from lensbench.tools.training.vlm_sft import build_trainer, load_vlm  # noqa: E402

KEY = f"{LOG_PREFIX}/rgb-th-bench/QAcc/Overall"


def _data(tmp):
    img = tmp / "a.png"
    Image.new("RGB", (32, 32), (200, 30, 30)).save(img)
    write_examples(tmp / "sft.jsonl", [make_example(f"e{i}", [img, f"is there a w{i} ?"], "Yes") for i in range(8)])
    return tmp / "sft.jsonl", write_release(tmp / "rgbth", n_scenes=10, questions_per_unit=1)


def _settings(base, out, **kw):
    return VLMTrainSettings(**{**dict(model=str(base), out=out, batch_size=2, learning_rate=1e-2, logging_steps=1,
                                      save_steps=100, max_steps=4, lora_r=8, lora_alpha=16, warmup_ratio=0.0,
                                      device="cpu"), **kw})


def _train(base, sft, out, cb=None):
    """Train 4 steps; returns (trainer, processor, logs seen by another callback's on_log)."""
    from transformers import TrainerCallback

    seen: list[tuple[int, dict]] = []

    class Capture(TrainerCallback):  # stands for the W&B / MLflow / TensorBoard integrations
        def on_log(self, args, state, control, logs=None, **kw):
            seen.append((state.global_step, dict(logs or {})))

    trainer, proc, _, _ = build_trainer(read_examples(sft), _settings(base, out), eval_callback=cb)
    trainer.add_callback(Capture())
    trainer.train()
    return trainer, proc, seen


@pytest.fixture(scope="module")
def runs(tiny_vlm, tmp_path_factory):
    """The same 4-step LoRA training without and with the callback (every 2 steps, sampling at temperature
    0.7: the backend reseeds torch's RNG, which the callback must put back for LoRA dropout to match)."""
    tmp = tmp_path_factory.mktemp("evalcb")
    sft, bench = _data(tmp)
    base = tiny_vlm("qwen2.5-vl")
    plain = _train(base, sft, tmp / "plain")
    cb = LensbenchEvalCallback({"rgb-th-bench": bench}, tmp / "evals", every_n_steps=2, seed=3, max_new_tokens=1,
                               run_settings={"temperature": 0.7, "max_tokens": 1})
    evald = _train(base, sft, tmp / "with", cb)
    return {"plain": plain, "with": evald, "cb": cb, "out": tmp / "evals", "bench": bench, "base": base, "tmp": tmp}


def test_training_is_the_same_with_the_callback(runs):
    import torch

    (t0, _, _), (t1, _, seen) = runs["plain"], runs["with"]
    loss0 = [h["loss"] for h in t0.state.log_history if "loss" in h]
    loss1 = [h["loss"] for h in t1.state.log_history if "loss" in h]
    assert len(loss0) == 4 and loss1 == loss0  # every step's loss logged, and equal bit for bit
    w0 = dict(t0.model.named_parameters())
    for name, p in t1.model.named_parameters():
        assert torch.equal(p, w0[name]), name
    assert runs["cb"].done_steps == {2, 4}
    # the step's own training metrics (TRL's) still come with its loss, beside the evaluation's line
    step2 = [logs for step, logs in seen if step == 2]
    assert any("loss" in x and "mean_token_accuracy" in x for x in step2) and any(KEY in x for x in step2)


def test_run_folders_metrics_and_curve(runs):
    out, (_, _, seen) = runs["out"], runs["with"]
    for step in (2, 4):
        folder = out / f"step-{step}" / "rgb-th-bench"
        man = json.loads((folder / "run.json").read_text())
        assert man["model_fingerprint"].startswith(f"hf-live:live|step={step}|weights=") and man["seed"] == 3
        recs = [json.loads(x) for x in (folder / "samples.jsonl").read_text().splitlines()]
        assert len(recs) == 80 and man["engine"]["sent"] == 80  # 10 scenes x 8 skills x 1 question
        qacc = 100 * sum(r["outcome"] == "correct" for r in recs) / len(recs)
        assert any(r["outcome"] == "correct" for r in recs)  # one sampled token: at times the trained "Yes"
        logged = [logs for s, logs in seen if s == step and KEY in logs]
        assert len(logged) == 1 and logged[0][KEY] == pytest.approx(qacc)
        lo, hi = logged[0][KEY + "_ci_low"], logged[0][KEY + "_ci_high"]  # 10 scenes: enough clusters for a CI
        assert lo <= qacc <= hi and logged[0][f"{LOG_PREFIX}/wall_s"] > 0
    fp = {s: json.loads((out / f"step-{s}/rgb-th-bench/run.json").read_text())["model_fingerprint"] for s in (2, 4)}
    assert fp[2].split("|")[2] != fp[4].split("|")[2]  # the weights moved between the steps
    rows = list(csv.DictReader((out / "curve.csv").open()))
    q = [r for r in rows if r["metric"] == "QAcc" and r["category"] == "Overall"]
    assert [int(r["step"]) for r in q] == [2, 4]
    assert [float(r["value"]) for r in q] == [pytest.approx(json.loads(
        (out / f"step-{s}/rgb-th-bench/result.json").read_text())["metrics"]["QAcc"]["Overall"]) for s in (2, 4)]
    assert (out / "curve.png").stat().st_size > 1000 if _has_mpl() else True


def _has_mpl() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def test_same_step_again_sends_nothing_and_other_weights_are_refused(runs):
    import torch

    trainer, proc, _ = runs["with"]
    model = trainer.model
    cb = LensbenchEvalCallback({"rgb-th-bench": runs["bench"]}, runs["out"], every_n_steps=2, seed=3, max_new_tokens=1,
                               run_settings={"temperature": 0.7, "max_tokens": 1})
    before = json.loads((runs["out"] / "step-4/rgb-th-bench/result.json").read_text())["metrics"]
    cb.evaluate(model, proc, 4)  # the weights after step 4: the folder of step 4 is resumed
    man = json.loads((runs["out"] / "step-4/rgb-th-bench/run.json").read_text())
    assert man["engine"]["sent"] == 0 and man["engine"]["cached"] == 80
    assert json.loads((runs["out"] / "step-4/rgb-th-bench/result.json").read_text())["metrics"] == before
    assert model.training  # back in train mode
    p = next(p for n, p in model.named_parameters() if p.requires_grad)
    with torch.no_grad():
        p.add_(1.0)
    try:
        with pytest.raises(ConfigError, match="holds a run of model"):
            cb.evaluate(model, proc, 4)  # other weights under the same step: never mixed into its folder
    finally:
        with torch.no_grad():
            p.sub_(1.0)
    assert model.training and torch.is_grad_enabled()


def test_from_live_shares_the_weights(runs):
    import asyncio

    import torch

    from lensbench.backends.hf import HFBackend, weights_fingerprint
    from lensbench.core.types import GenParams, ImagePart, Message, Request

    model, proc = load_vlm(str(runs["base"]))
    model.train()
    be = HFBackend.from_live(model, proc, name="tiny", step=7, batch=2, max_new_tokens=3)
    assert be.model is model and be.processor is proc
    ptrs = {p.data_ptr() for p in model.parameters()}
    assert {p.data_ptr() for p in be.model.parameters()} == ptrs  # the same storage: no second copy
    assert be.fingerprint.startswith("hf-live:tiny|step=7|weights=") and "|dtype=float32|" in be.fingerprint
    img = runs["tmp"] / "a.png"
    req = Request(id="q", messages=(Message.user(ImagePart.of(img), "is there a w1 ?"),),
                  params=GenParams(temperature=0.0, max_tokens=3))
    res, = asyncio.run(be.generate_batch([req]))
    assert not isinstance(res, Exception) and res.usage["completion_tokens"] >= 1
    asyncio.run(be.aclose())
    assert {p.data_ptr() for p in model.parameters()} == ptrs  # closing drops the reference, not the model
    same, _ = load_vlm(str(runs["base"]))
    assert weights_fingerprint(same) == weights_fingerprint(model)
    with torch.no_grad():
        next(model.parameters()).mul_(1.5)
    assert weights_fingerprint(same) != weights_fingerprint(model)
    with pytest.raises(ConfigError, match="device"):
        HFBackend.from_live(model, proc, device="cpu")


def test_training_state_restored(runs):
    import numpy as np
    import torch

    from lensbench.tools.training.eval_callback import _TrainingState

    model, proc = load_vlm(str(runs["base"]))
    model.train()
    vis = model.model.visual
    vis.eval()  # a frozen part in eval mode stays so
    tok = proc.tokenizer
    tok.padding_side = "right"
    saved_py, saved_np, saved_t = random.getstate(), np.random.get_state(), torch.get_rng_state()
    state = _TrainingState(torch, model, proc)
    torch.manual_seed(123), random.seed(5), np.random.seed(5)  # what sampling in an evaluation does
    model.eval()
    tok.padding_side = "left"
    state.restore()
    assert model.training and not vis.training and tok.padding_side == "right"
    again = (random.random(), np.random.rand(), torch.rand(3))  # drawn after the restore
    random.setstate(saved_py), np.random.set_state(saved_np), torch.set_rng_state(saved_t)
    want = (random.random(), np.random.rand(), torch.rand(3))  # drawn from the states before the evaluation
    assert again[:2] == want[:2] and torch.equal(again[2], want[2])


def test_bad_settings_refused_before_training(tmp_path):
    from lensbench.tools.training.eval_callback import parse_eval_benches

    with pytest.raises(ConfigError, match="every_n_steps, on_epoch_end"):
        LensbenchEvalCallback({"rgb-th-bench": tmp_path}, tmp_path)
    with pytest.raises(ConfigError, match="BENCH=DATA_DIR"):
        parse_eval_benches(["rgb-th-bench"])
    with pytest.raises(ConfigError, match="unknown benchmark 'nope'"):
        parse_eval_benches([f"nope={tmp_path}"])
    with pytest.raises(ConfigError, match="does not exist"):
        parse_eval_benches([f"rgb-th-bench={tmp_path / 'missing'}"])
    assert parse_eval_benches([f"rgb-th-bench={tmp_path}"]) == {"rgb-th-bench": tmp_path}


def test_cli_flag_trains_and_evaluates(runs, tmp_path):
    from typer.testing import CliRunner

    from lensbench.cli.main import app

    sft = runs["tmp"] / "sft.jsonl"
    args = ["train", "groundingme", "train", "--examples", str(sft), "--model", str(runs["base"]), "--out",
            str(tmp_path / "t"), "--set", "max_steps=2", "--set", "batch_size=2", "--set", "device=cpu",
            "--set", "save_steps=100"]
    bad = CliRunner().invoke(app, args + ["--eval-bench", "rgb-th-bench", "--eval-every", "1"])
    assert bad.exit_code == 2 and "--eval-bench 'rgb-th-bench': give BENCH=DATA_DIR" in bad.output
    assert "Traceback" not in bad.output and not (tmp_path / "t").exists()  # refused before any training
    ok = CliRunner().invoke(app, args + ["--eval-bench", f"rgb-th-bench={runs['bench']}", "--eval-every", "1",
                                         "--eval-limit", "8", "--eval-max-tokens", "2"])
    assert ok.exit_code == 0, ok.output
    summary = json.loads(ok.stdout.strip().splitlines()[-1])
    assert [r["step"] for r in summary["evaluations"]["runs"]] == [1, 2]
    for step in (1, 2):
        res = json.loads((tmp_path / "t" / "evals" / f"step-{step}" / "rgb-th-bench" / "result.json").read_text())
        assert res["counts"]["n"] == 8
    log = [json.loads(x) for x in (tmp_path / "t" / "train_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log if KEY in r] == [1, 2]  # the JSONL log callback received them too
    assert not any(KEY + "_ci_low" in r for r in log)  # 8 samples = 1 scene: no CI on one cluster
    rows = list(csv.DictReader((tmp_path / "t" / "evals" / "curve.csv").open()))
    assert rows and all(r["note"] == "too few clusters (1)" and r["ci_low"] == "" for r in rows)
