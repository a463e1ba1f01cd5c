"""Cost of evaluating during training (issue 33.3): time and peak memory per evaluation of
:class:`~lensbench.tools.training.eval_callback.LensbenchEvalCallback` on the tiny Qwen2.5-VL, against
the same training without the callback and against the way without it (save the weights, load them
again through ``hf:FOLDER``, evaluate).

Trains ``--steps`` LoRA steps on repeated one-image examples, evaluating every ``--every`` steps on a
generated RGB-Th-Bench folder (``--scenes`` scenes x 8 skills x 1 question; ``--limit`` first samples),
greedy, ``--max-tokens`` per reply. Prints one JSON line per evaluation (step, samples, wall seconds,
process RSS before and after, peak RSS during the evaluation: Linux ``VmHWM`` reset before it through
``/proc/self/clear_refs``), then one summary line: training wall time with and without the callback,
the evaluations' total, whether the loss sequences are equal, and the reload way's seconds and peak RSS
for one evaluation.

    python benchmarks/eval_callback_cost.py [--steps 4] [--every 2] [--scenes 10] [--limit 80] [--max-tokens 1]

Needs ``lensbench[train]``. Figures seen: docs/training.md, "Evaluating during training".
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from PIL import Image

from lensbench.benchmarks.rgbth.demo import write_release
from lensbench.tools.training.tiny_vlm import save_tiny_vlm
from lensbench.tools.training.eval_callback import LensbenchEvalCallback
from lensbench.tools.training.settings import VLMTrainSettings
from lensbench.tools.training.sft_data import make_example, read_examples, write_examples
from lensbench.tools.training.vlm_sft import build_trainer


def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def _reset_peak() -> None:
    try:
        Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM (the peak RSS) to the current RSS
    except OSError:
        pass


class Measured(LensbenchEvalCallback):
    """The callback, printing the cost of each evaluation."""

    def evaluate(self, model, processor, step, epoch=None):
        before = _status_mb("VmRSS")
        _reset_peak()
        t0 = time.perf_counter()
        logs = super().evaluate(model, processor, step, epoch)
        row = {"step": step, "samples": self._settings["rgb-th-bench"].limit,
               "wall_s": round(time.perf_counter() - t0, 3),
               "rss_before_mb": before, "rss_after_mb": _status_mb("VmRSS"), "peak_rss_mb": _status_mb("VmHWM")}
        self.walls.append(row["wall_s"])
        print(json.dumps({"evaluation": row}), flush=True)
        return logs

    walls: list[float] = []


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--every", type=int, default=2)
    ap.add_argument("--scenes", type=int, default=10)
    ap.add_argument("--limit", type=int, default=80)
    ap.add_argument("--max-tokens", type=int, default=1)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        base = save_tiny_vlm("qwen2.5-vl", root / "base")
        img = root / "a.png"
        Image.new("RGB", (32, 32), (200, 30, 30)).save(img)
        write_examples(root / "sft.jsonl",
                       [make_example(f"e{i}", [img, f"is there a w{i} ?"], "Yes") for i in range(8)])
        bench = write_release(root / "rgbth", n_scenes=a.scenes, questions_per_unit=1)
        exs = read_examples(root / "sft.jsonl")

        def settings(out: str) -> VLMTrainSettings:
            return VLMTrainSettings(model=str(base), out=root / out, batch_size=2, learning_rate=1e-2,
                                    logging_steps=1, save_steps=10_000, max_steps=a.steps, lora_r=8, lora_alpha=16,
                                    warmup_ratio=0.0, device="cpu")

        def train(out: str, cb=None):
            trainer, proc, _, _ = build_trainer(exs, settings(out), eval_callback=cb)
            t0 = time.perf_counter()
            trainer.train()
            return trainer, proc, round(time.perf_counter() - t0, 3)

        train("warmup")  # one-time costs (first forward / backward, allocator) paid before anything is timed
        plain, _, t_plain = train("plain")
        cb = Measured({"rgb-th-bench": bench}, root / "evals", limit=a.limit, every_n_steps=a.every,
                      max_new_tokens=a.max_tokens, run_settings={"max_tokens": a.max_tokens})
        withcb, proc, t_with = train("with", cb)
        same = [h["loss"] for h in plain.state.log_history if "loss" in h] == \
            [h["loss"] for h in withcb.state.log_history if "loss" in h]
        reload_s, reload_peak = _reload_way(withcb, proc, bench, root, a)
        print(json.dumps({"summary": {"train_s_without": t_plain, "train_s_with": t_with,
                                      "evaluations": len(cb.history), "eval_s_total": round(sum(cb.walls), 3),
                                      "losses_equal": same, "reload_way_s": reload_s,
                                      "reload_way_peak_rss_mb": reload_peak}}), flush=True)


def _reload_way(trainer, proc, bench: Path, root: Path, a) -> tuple[float, float]:
    """Save the merged weights, load them through ``hf:`` and evaluate once: the way without the callback."""
    from lensbench.tools.training.evaluate import evaluate_checkpoint

    _reset_peak()
    t0 = time.perf_counter()
    merged = trainer.model.merge_and_unload() if hasattr(trainer.model, "merge_and_unload") else trainer.model
    merged.save_pretrained(root / "ckpt")
    proc.save_pretrained(root / "ckpt")
    evaluate_checkpoint("rgb-th-bench", root / "ckpt", root / "reload-run", data_dir=bench, batch=8,
                        device="cpu", limit=a.limit, max_tokens=a.max_tokens)
    return round(time.perf_counter() - t0, 3), _status_mb("VmHWM")


if __name__ == "__main__":
    main()
