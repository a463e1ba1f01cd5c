"""Evaluate the model being trained, in memory, every N steps and/or at epoch ends (issue 33.3; lmms-eval #611).

:class:`LensbenchEvalCallback` is a ``transformers.TrainerCallback`` (so it works with TRL's ``SFTTrainer`` and
with ``lensbench train ... --eval-bench BENCH=DATA_DIR --eval-every N --eval-limit K``). At a chosen step it:

* wraps the trainer's own model object in :meth:`lensbench.backends.hf.HFBackend.from_live` (no reload, no
  copy: the backend holds the very module whose parameters the optimiser updates), whose fingerprint names the
  step and a cheap fingerprint of the weights (:func:`lensbench.backends.hf.weights_fingerprint`);
* runs each benchmark through the ordinary runner into ``OUT/step-<N>/<bench>`` (a normal run folder:
  resumable, ``lensbench report`` / ``view`` read it; evaluating the same step with the same weights again
  sends nothing), with ``limit`` (the first K samples) and the run ``seed``;
* does so in eval mode under ``torch.inference_mode()`` (the backend's generate thread also runs under it),
  then restores every module's train / eval flag, the gradient switch, the tokenizer's padding side and pad
  token, the generation config's pad token and the Python / NumPy / torch (CPU and CUDA) RNG states: training
  continues exactly as without the callback (the loss sequence is the same, bit for bit; only time differs);
* logs every headline metric with its 95% bootstrap CI (``eval_lensbench/<bench>/<metric>/<category>`` and
  ``..._ci_low`` / ``..._ci_high``, from :func:`lensbench.views.leaderboard.build_leaderboard`, the figures
  ``lensbench report`` prints; no CI below 10 clusters: the curve says ``too few clusters (n)``) as
  ``Trainer.log`` does (``state.log_history`` and, once ``attach(trainer)``
  added it, every callback's ``on_log``), so the trainer's W&B, MLflow and TensorBoard integrations receive
  them at that step; plus ``eval_lensbench/wall_s`` and
  ``eval_lensbench/peak_rss_mb`` (the evaluation's cost);
* appends one line per (step, benchmark) to ``OUT/evals.jsonl`` and rewrites ``OUT/curve.csv`` (the headline
  cells over steps: step, epoch, benchmark, metric, category, value, ci_low, ci_high, n, note, run) and, when
  matplotlib is installed, ``OUT/curve.png``.

Benchmarks that need an LLM judge are run without one here (their own judge-free rules). In a multi-process
run only the main process evaluates (the others wait at their next collective); a model sharded across
processes (FSDP, DeepSpeed ZeRO-3) cannot generate on one process alone and is not supported. Cost per
evaluation on the tiny model: ``benchmarks/eval_callback_cost.py`` (figures in the training docs).
"""

from __future__ import annotations

import csv
import json
import random
import resource
import time
from pathlib import Path
from typing import Any, Mapping

from lensbench.core.errors import ConfigError
from lensbench.core.extras import require

try:  # the callback base of the trainer's event system; lensbench[train] installs transformers
    from transformers import TrainerCallback as _Base
except ImportError:  # pragma: no cover - only without the train extra (the constructor then says so)
    _Base = object

__all__ = ["LensbenchEvalCallback", "parse_eval_benches", "CURVE_COLUMNS", "LOG_PREFIX"]

#: the key prefix of what the callback logs (W&B's integration files ``eval_*`` keys under ``eval/``)
LOG_PREFIX = "eval_lensbench"
CURVE_COLUMNS = ["step", "epoch", "benchmark", "metric", "category", "value", "ci_low", "ci_high", "n", "note", "run"]


def parse_eval_benches(items: list[str]) -> dict[str, Path]:
    """``["BENCH=DATA_DIR", ...]`` (the repeated ``--eval-bench``) as ``{bench: data_dir}``.

    Raises ConfigError naming the item: no ``=``, an unknown benchmark, a data folder that does not exist,
    or a benchmark given twice."""
    from lensbench.benchmarks.registry import benchmark_names

    known = benchmark_names()
    out: dict[str, Path] = {}
    for item in items:
        name, sep, data = item.partition("=")
        name, data = name.strip(), data.strip()
        if not sep or not name or not data:
            raise ConfigError(f"--eval-bench {item!r}: give BENCH=DATA_DIR, e.g. rgb-th-bench=data/RGB-Th-Bench")
        if name not in known:
            raise ConfigError(f"--eval-bench {item!r}: unknown benchmark {name!r}; known: {', '.join(known)}")
        if name in out:
            raise ConfigError(f"--eval-bench {item!r}: {name} given twice")
        if not Path(data).is_dir():
            raise ConfigError(f"--eval-bench {item!r}: data folder {data} does not exist")
        out[name] = Path(data)
    return out


class LensbenchEvalCallback(_Base):
    """Evaluates the in-memory model during training (module docstring).

    Args:
        benchmarks: ``{bench: data_dir}`` (CLI names, e.g. ``"rgb-th-bench"``).
        out: root of the run folders (``OUT/step-<N>/<bench>``), ``evals.jsonl``, ``curve.csv`` / ``.png``.
        limit: evaluate the first K samples of each benchmark (None = all).
        every_n_steps: evaluate when ``global_step % N == 0`` (None = never by steps).
        on_epoch_end: evaluate at the end of every epoch (once per step: a step already evaluated is skipped).
        seed: the runs' seed (shuffles, sampling).
        processor: the model's processor (None = the trainer's ``processing_class``).
        name: the model's display name in the runs (``hf-live:NAME``).
        batch / max_new_tokens: :meth:`HFBackend.from_live` settings (requests per ``generate``; the cap of
            a request that sets no ``max_tokens``, 1024 as ``hf:``'s).
        run_settings: more :class:`~lensbench.runtime.settings.RunSettings` keys (``max_tokens``,
            ``concurrency`` ...); ``options``: ``{bench: {option: value}}`` benchmark options.

    Raises:
        ConfigError: no benchmark, neither ``every_n_steps`` nor ``on_epoch_end``, ``every_n_steps`` < 1,
            or a bad setting or option (checked here, before training starts).
        MissingExtraError: transformers / torch not installed.
    """

    def __init__(self, benchmarks: Mapping[str, str | Path], out: str | Path, *, limit: int | None = None,
                 every_n_steps: int | None = None, on_epoch_end: bool = False, seed: int = 0, processor: Any = None,
                 name: str = "live", batch: int = 8, max_new_tokens: int = 1024, run_settings: dict | None = None,
                 options: Mapping[str, dict] | None = None):
        if _Base is object:
            require("transformers", "train", "LensbenchEvalCallback")
        if not benchmarks:
            raise ConfigError("LensbenchEvalCallback: no benchmark to evaluate (give BENCH=DATA_DIR)")
        if every_n_steps is None and not on_epoch_end:
            raise ConfigError("LensbenchEvalCallback: give every_n_steps, on_epoch_end or both")
        if every_n_steps is not None and every_n_steps < 1:
            raise ConfigError(f"--eval-every {every_n_steps}: must be a positive number of steps")
        self.out = Path(out)
        self.every, self.at_epoch_end, self.processor, self.name = every_n_steps, on_epoch_end, processor, name
        self.live_settings = {"batch": batch, "max_new_tokens": max_new_tokens}
        self.trainer: Any = None
        self.done_steps: set[int] = set()
        self.history: list[dict[str, Any]] = []  # one row per evaluation: step, epoch, wall_s, peak_rss_mb
        self._benches = {b: _make_bench(b, (options or {}).get(b) or {}) for b in benchmarks}
        self._settings = {b: _run_settings(Path(d), limit, seed, run_settings or {}) for b, d in benchmarks.items()}

    def attach(self, trainer: Any) -> "LensbenchEvalCallback":
        """Add the callback to ``trainer`` and keep it, so that the metrics reach the trainer's other callbacks'
        ``on_log`` (its W&B / MLflow / TensorBoard integrations; not attached: ``state.log_history`` only).
        Returns self."""
        trainer.add_callback(self)
        self.trainer = trainer
        return self

    # ------------------------------------------------------------------ trainer events
    def on_step_end(self, args, state, control, model=None, processing_class=None, **kw):
        """Evaluate when the step is a multiple of ``every_n_steps``."""
        if self.every and state.global_step % self.every == 0:
            self._run(args, state, control, model, processing_class)
        return control

    def on_epoch_end(self, args, state, control, model=None, processing_class=None, **kw):
        """Evaluate at the end of an epoch (``on_epoch_end=True``)."""
        if self.at_epoch_end:
            self._run(args, state, control, model, processing_class)
        return control

    def _run(self, args, state, control, model, processing_class) -> None:
        """Evaluate at ``state.global_step`` (once) and log as ``Trainer.log`` does: a row in
        ``state.log_history`` and the callbacks' ``on_log`` (W&B, MLflow, TensorBoard ...). Not through
        ``trainer.log`` itself: TRL's ``SFTTrainer.log`` would take (and clear) the training metrics it gathers
        for the step's own log line, and the handler's ``on_log`` clears ``control.should_log`` (the step's
        loss would not be logged): both stay as they were."""
        step = int(state.global_step)
        if step in self.done_steps or model is None or not getattr(state, "is_world_process_zero", True):
            return
        logs = self.evaluate(model, self.processor or processing_class, step, epoch=state.epoch)
        if state.epoch is not None:
            logs["epoch"] = state.epoch
        state.log_history.append({**logs, "step": step})
        if self.trainer is not None:
            should_log = control.should_log
            self.trainer.callback_handler.on_log(args, state, control, dict(logs))
            control.should_log = should_log

    # ------------------------------------------------------------------ the evaluation
    def evaluate(self, model: Any, processor: Any, step: int, epoch: float | None = None) -> dict[str, float]:
        """Evaluate ``model`` (in memory, as it is) on every benchmark into ``OUT/step-<step>/<bench>``;
        returns the flat metrics logged (module docstring). Training state is restored afterwards, also
        when a run fails (the error propagates: a ConfigError for a folder of other weights at this step)."""
        torch = require("torch", "train", "evaluating during training")
        from lensbench.backends.base import BackendConfig
        from lensbench.backends.hf import HFBackend
        from lensbench.runtime.runner import run_benchmark

        if processor is None:
            raise ConfigError("LensbenchEvalCallback: no processor (give processor= or a trainer with "
                              "processing_class)")
        saved = _TrainingState(torch, model, processor)
        t0, logs, results = time.perf_counter(), {}, {}
        try:
            model.eval()
            with torch.inference_mode():
                for bench, settings in self._settings.items():
                    backend = HFBackend.from_live(model, processor, name=self.name, step=step,
                                                  config=BackendConfig(seed=settings.seed), **self.live_settings)
                    s = settings.model_copy(update={"out": self.out / f"step-{step}" / bench})
                    results[bench] = run_benchmark(self._benches[bench], s, backends={"model": backend})
        finally:
            saved.restore()
        cost = {"wall_s": round(time.perf_counter() - t0, 3), "peak_rss_mb": _peak_rss_mb(),
                "peak_gpu_mb": _peak_gpu_mb(torch)}
        self.done_steps.add(step)
        self.history.append({"step": step, "epoch": epoch, **cost})
        for bench, result in results.items():
            cells = _cells(result.run_dir)
            for c in cells:
                key = f"{LOG_PREFIX}/{bench}/{c.metric}/{c.category}"
                if c.value is not None:
                    logs[key] = float(c.value)
                if c.ci_low is not None and c.ci_high is not None:
                    logs[key + "_ci_low"], logs[key + "_ci_high"] = float(c.ci_low), float(c.ci_high)
            self._record(step, epoch, bench, result.run_dir, [c for c in cells if c.headline], cost)
        logs.update({f"{LOG_PREFIX}/{k}": v for k, v in cost.items() if v is not None})
        self.write_curve()
        return logs

    def _record(self, step: int, epoch, bench: str, run_dir: str, cells, cost: dict) -> None:
        keys = ("metric", "category", "value", "ci_low", "ci_high", "n", "note")
        row = {"step": step, "epoch": epoch, "benchmark": bench, "run": str(run_dir), **cost,
               "headline": [{k: getattr(c, k) for k in keys} for c in cells]}
        self.out.mkdir(parents=True, exist_ok=True)
        with (self.out / "evals.jsonl").open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")

    def write_curve(self) -> Path:
        """Rewrite ``OUT/curve.csv`` (and ``curve.png`` with matplotlib) from ``OUT/evals.jsonl``: the
        headline cells over steps, the last evaluation of a (step, benchmark) kept. Returns the CSV path."""
        return write_curve(self.out)


def write_curve(out: str | Path) -> Path:
    """``out/curve.csv`` (:data:`CURVE_COLUMNS`, sorted by benchmark, metric, category, step) and, when
    matplotlib is installed, ``out/curve.png`` (one panel line per headline cell with its CI band), from
    ``out/evals.jsonl``. Returns the CSV path."""
    out = Path(out)
    last: dict[tuple[int, str], dict] = {}
    src = out / "evals.jsonl"
    for line in (src.read_text(encoding="utf-8").splitlines() if src.is_file() else []):
        if line.strip():
            row = json.loads(line)
            last[(row["step"], row["benchmark"])] = row
    rows = [{"step": r["step"], "epoch": r.get("epoch"), "benchmark": r["benchmark"], "run": r["run"], **h}
            for r in last.values() for h in r["headline"]]
    rows.sort(key=lambda r: (r["benchmark"], r["metric"], r["category"], r["step"]))
    path = out / "curve.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, CURVE_COLUMNS)
        w.writeheader()
        w.writerows({k: ("" if r.get(k) is None else r.get(k)) for k in CURVE_COLUMNS} for r in rows)
    _plot(rows, out / "curve.png")
    return path


def _plot(rows: list[dict], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    series: dict[str, list[dict]] = {}
    for r in rows:
        if r.get("value") is not None:
            series.setdefault(f"{r['benchmark']} {r['metric']} ({r['category']})", []).append(r)
    if not series:
        return
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for label, pts in series.items():
        xs = [p["step"] for p in pts]
        ax.plot(xs, [p["value"] for p in pts], marker="o", label=label)
        if all(p.get("ci_low") is not None for p in pts):
            ax.fill_between(xs, [p["ci_low"] for p in pts], [p["ci_high"] for p in pts], alpha=0.2)
    ax.set_xlabel("training step")
    ax.set_ylabel("headline metric (95% CI band)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


class _TrainingState:
    """What an evaluation changes and :meth:`restore` puts back: each module's ``training`` flag, the grad
    switch, the RNG states (Python, NumPy, torch CPU and every initialised CUDA device), the tokenizer's
    padding side and pad token, and the generation config's pad token id."""

    def __init__(self, torch, model, processor):
        import numpy as np

        self.torch, self.np, self.model = torch, np, model
        self.modes = [(m, m.training) for m in model.modules()]
        self.grad = torch.is_grad_enabled()
        cuda = torch.cuda.is_available() and torch.cuda.is_initialized()
        self.rng = (random.getstate(), np.random.get_state(), torch.get_rng_state(),
                    torch.cuda.get_rng_state_all() if cuda else None)
        self.tok = getattr(processor, "tokenizer", processor)
        self.tok_state = (self.tok.padding_side, self.tok.pad_token)
        gc = getattr(model, "generation_config", None)
        self.gen_pad = (gc, getattr(gc, "pad_token_id", None))

    def restore(self) -> None:
        for m, was in self.modes:
            m.training = was
        self.torch.set_grad_enabled(self.grad)
        py, npy, cpu, cuda = self.rng
        random.setstate(py)
        self.np.random.set_state(npy)
        self.torch.set_rng_state(cpu)
        if cuda is not None:
            self.torch.cuda.set_rng_state_all(cuda)
        self.tok.padding_side = self.tok_state[0]
        if self.tok.pad_token != self.tok_state[1]:
            self.tok.pad_token = self.tok_state[1]
        gc, pad = self.gen_pad
        if gc is not None:
            gc.pad_token_id = pad


def _make_bench(name: str, options: dict):
    from pydantic import ValidationError

    from lensbench.benchmarks.registry import get_benchmark

    cls = get_benchmark(name)
    try:
        return cls(cls.Options(**options))
    except (ValidationError, ValueError) as exc:
        raise ConfigError(f"LensbenchEvalCallback: {name} options {options}: {exc}") from None


def _run_settings(data_dir: Path, limit: int | None, seed: int, extra: dict):
    from pydantic import ValidationError

    from lensbench.runtime.settings import RunSettings

    try:
        return RunSettings(model="hf-live", out=Path("."), data_dir=data_dir, limit=limit, seed=seed, progress=False,
                           **extra)
    except ValidationError as exc:
        bad = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"LensbenchEvalCallback run settings: {bad}") from None


def _cells(run_dir: str):
    """The leaderboard cells of the headline metrics of one run folder (all categories), each with its CI
    only when at least :data:`~lensbench.scoring.agreement.MIN_CLUSTERS` clusters stand behind it, else
    the note ``too few clusters (n)`` (SPEC, general rules)."""
    from lensbench.views.leaderboard import build_leaderboard
    from lensbench.views.runs import read_run
    from lensbench.scoring.agreement import MIN_CLUSTERS

    cells = build_leaderboard([read_run(run_dir)]).cells
    for c in cells:
        if c.n is not None and c.n < MIN_CLUSTERS:
            c.ci_low = c.ci_high = None
            c.note = f"too few clusters ({c.n})"
    return cells


def _peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _peak_gpu_mb(torch) -> float | None:
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        return round(torch.cuda.max_memory_allocated() / 2**20, 1)
    return None
