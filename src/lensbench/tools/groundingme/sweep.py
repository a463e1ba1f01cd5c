"""The Sec. 5.3 ratio sweep: evaluate the base model (Tab. 5 "Origin", Fig. 6 "Baseline"), then for
each neg:pos mixture train (:func:`lensbench.tools.training.vlm_sft.train_vlm`) and evaluate the
checkpoint through ``hf:`` on the in-domain set (``grounding-rej``: RefCOCOg_val +
RefCOCOg_rej_val) and on GroundingME. Every step resumes: a trained ratio is not trained again,
an evaluated run folder is only re-read.

Layout of ``out``::

    sweep.json                       # what ran: base model, ratios, run folders, train summaries
    baseline/in-domain/  baseline/groundingme/
    1-8/train/ (checkpoints, model/)  1-8/in-domain/  1-8/groundingme/   ... one folder per ratio
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lensbench.core.errors import ConfigError
from lensbench.tools.groundingme.sft_data import ratio_slug
from lensbench.tools.training.evaluate import evaluate_checkpoint
from lensbench.tools.training.guards import check_lora_targets, vlm_modules
from lensbench.tools.training.settings import VLMTrainSettings
from lensbench.tools.training.sft_data import read_examples
from lensbench.tools.training.vlm_sft import train_vlm

__all__ = ["SweepPlan", "run_sweep", "read_sweep"]


@dataclass
class SweepPlan:
    """One sweep. ``train``: settings for every ratio (``model`` = the base, ``out`` replaced per
    ratio); ``mixtures``: the folder of ``lensbench train groundingme mix`` (``mixtures.json``);
    ``eval_set``: a ``grounding-rej`` data folder; ``groundingme``: GroundingME's data folder (None
    = skip the out-of-domain runs); ``ratios``: None = every ratio of the mixtures; ``eval``:
    run settings for both evaluations (``max_tokens``, ``limit``, ``max_pixels`` ...); ``batch`` /
    ``dtype``: the ``hf:`` backend's; ``progress``: show each evaluation's progress on stderr (the
    trainer shows its own bar)."""

    train: VLMTrainSettings
    mixtures: Path
    eval_set: Path
    out: Path
    groundingme: Path | None = None
    ratios: tuple[str, ...] | None = None
    eval: dict[str, Any] = field(default_factory=dict)
    batch: int = 16
    dtype: str = "auto"
    progress: bool = False


def _evaluate(plan: SweepPlan, model: str, folder: Path, name: str, fmt: str) -> dict[str, str]:
    runs = {}
    evaluate_checkpoint("grounding-rej", model, folder / "in-domain", data_dir=plan.eval_set, model_name=name,
                        batch=plan.batch, dtype=plan.dtype, bbox_format=fmt, progress=plan.progress, **plan.eval)
    runs["in_domain"] = str(folder / "in-domain")
    if plan.groundingme is not None:
        evaluate_checkpoint("groundingme", model, folder / "groundingme", data_dir=plan.groundingme, model_name=name,
                            batch=plan.batch, dtype=plan.dtype, bbox_format=fmt, progress=plan.progress, **plan.eval)
        runs["groundingme"] = str(folder / "groundingme")
    return runs


def run_sweep(plan: SweepPlan, log=print) -> dict[str, Any]:
    """Run the sweep (module docstring) and write ``out/sweep.json``; returns its content.

    Raises ConfigError when the mixtures folder has no ``mixtures.json`` or lacks a requested ratio
    or the LoRA targets match nothing, DataError for a bad mixture file (all checked before any
    model loads); errors of training / evaluation propagate (what finished stays on disk and is
    reused)."""
    man_path = plan.mixtures / "mixtures.json"
    if not man_path.is_file():
        raise ConfigError(f"{plan.mixtures}: no mixtures.json (make it with 'lensbench train groundingme mix')")
    man = json.loads(man_path.read_text(encoding="utf-8"))
    ratios = plan.ratios or tuple(man["ratios"])
    missing = [r for r in ratios if r not in man["ratios"]]
    if missing:
        raise ConfigError(f"{plan.mixtures}: no mixture for ratio(s) {', '.join(missing)}; have {', '.join(man['ratios'])}")
    for r in ratios:  # every mixture and the LoRA targets checked before the first model loads
        read_examples(plan.mixtures / man["ratios"][r]["file"])
    if plan.train.lora:
        check_lora_targets(vlm_modules(plan.train.model), plan.train.lora_targets, plan.train.model)
    fmt = man["bbox_format"]
    base = Path(plan.train.model).name or plan.train.model
    doc: dict[str, Any] = {"base_model": plan.train.model, "bbox_format": fmt, "mixtures": str(plan.mixtures),
                           "eval_set": str(plan.eval_set), "groundingme": str(plan.groundingme or ""), "ratios": {}}
    n = len(ratios) + 1
    log(f"[1/{n}] baseline: evaluating {plan.train.model}")
    doc["baseline"] = {"runs": _evaluate(plan, plan.train.model, plan.out / "baseline", f"{base} (before SFT)", fmt)}
    for i, r in enumerate(ratios, 2):
        slug = ratio_slug(r)
        folder = plan.out / slug
        log(f"[{i}/{n}] ratio {r}: training on {man['ratios'][r]['file']}")
        summary = train_vlm(plan.mixtures / man["ratios"][r]["file"],
                            plan.train.model_copy(update={"out": folder / "train"}), note=log)
        log(f"[{i}/{n}] ratio {r}: {'already trained' if summary.get('skipped') else 'trained'} "
            f"({summary['steps']} steps); evaluating {summary['model_dir']}")
        doc["ratios"][r] = {"train": str(folder / "train"), "steps": summary["steps"],
                            "runs": _evaluate(plan, summary["model_dir"], folder, f"{base} SFT {r}", fmt)}
        _write(plan.out, doc)
    _write(plan.out, doc)
    return doc



def _write(out: Path, doc: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / "sweep.json.tmp"
    tmp.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    tmp.replace(out / "sweep.json")


def read_sweep(out: Path) -> dict[str, Any]:
    """``out/sweep.json``. Raises ConfigError when it is missing."""
    p = Path(out) / "sweep.json"
    if not p.is_file():
        raise ConfigError(f"{out}: no sweep.json (run 'lensbench train groundingme sweep' first)")
    return json.loads(p.read_text(encoding="utf-8"))
