"""IF-Bench report tables: Table 2 rows, per-language scores (Fig. 9), strict vs soft (Tab. 7),
judgment counts, input configurations vs vanilla (Tab. 4 / Tab. 6), model scale (Tab. 3) and
thinking deltas (Fig. 5). Pure functions of :class:`RunResult` s.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lensbench.benchmarks.ifbench.analyses import (norm_name, paper_table, parse_model_name, scale_correlation,
                                                   thinking_deltas)
from lensbench.benchmarks.ifbench.data import ABBREVS, COLUMNS
from lensbench.benchmarks.ifbench.prompts import INPUT_LABELS, INPUTS
from lensbench.core.results import RunResult
from lensbench.report.common import empty_notes, incomplete_notes, run_label, skipped_notes
from lensbench.report.tables import render_table

__all__ = ["render", "render_inputs", "render_scale", "render_thinking", "facts", "label", "setting", "editor_of"]


def setting(r: RunResult) -> tuple[str, bool]:
    """``(input configuration, blind)`` of a run, from its counts (or options)."""
    inp = r.counts.get("input") or r.options.get("input", "if")
    blind = bool(r.counts.get("blind", r.options.get("blind", False)))
    return inp, blind


def editor_of(r: RunResult) -> str:
    """The image editor behind a GenViP run's translated RGB images (Tab. 5's Editor column): the ``editor``
    fingerprint in ``translate_report.json`` of its ``--translated-dir`` (written by ``lensbench genvip
    translate``: the model and the LoRA); ``Vanilla`` for an IF-only run; the folder's path without a report;
    the release's ``translated_rgb_imgs`` without a folder. Table pipes become ``;``."""
    inp, _ = setting(r)
    if "rgb" not in inp:
        return "Vanilla"
    folder = r.options.get("translated_dir")
    if not folder:
        return "release translations (translated_rgb_imgs)"
    try:
        doc = json.loads((Path(folder) / "translate_report.json").read_text(encoding="utf-8"))
        return str(doc["editor"]).replace("|", "; ")
    except (OSError, ValueError, KeyError):
        return str(folder)


def label(r: RunResult) -> str:
    """A run's row name: the model, tagged with a non-vanilla input, blind mode, a perturbation, or incompleteness."""
    inp, blind = setting(r)
    tags = []
    if inp != "if":
        tags.append(INPUT_LABELS.get(inp, inp))
    if blind:
        tags.append("BLIND: no image, language prior")
    if r.options.get("perturb"):
        tags.append(f"perturbed input: {r.options['perturb']}")
    if not r.extra.get("judge"):
        tags.append("exact match only" if r.options.get("answer_parsing", "hybrid") == "hybrid" else
                    str(r.options.get("answer_parsing")))
    return run_label(r, tags)


def facts(r: RunResult) -> dict[str, Any]:
    """Declared facts of a run for the multi-run analyses: family, params_b, thinking, base.

    Options ``--model-family``/``--model-params-b`` win over the name; thinking is the
    ``-Thinking`` name suffix, or the run's ``enable_thinking`` flag when it was set.
    """
    f = parse_model_name(r.model)
    fam = r.counts.get("model_family") or r.options.get("model_family")
    pb = r.counts.get("model_params_b") or r.options.get("model_params_b")
    if fam:
        f["family"] = fam
    if pb:
        f["params_b"] = float(pb)
    th = r.counts.get("thinking")
    if th is not None and bool(th) != f["thinking"]:
        f["thinking"] = bool(th)
    return f


def render(results: Sequence[RunResult], fmt: str = "md", with_paper: bool = False) -> str:
    """Table 2 row(s) (+ the paper's row for the same model name with ``with_paper``), per
    language (Fig. 9), strict vs soft (Tab. 7), judgment counts, and for several runs: input
    configurations vs vanilla (Tab. 4 / Tab. 6 layout), model-scale correlation (Tab. 3) and
    thinking deltas (Fig. 5). ``fmt``: md or csv."""
    parts: list[str] = [_header(results)] if fmt == "md" else []
    parts += [_table2(results, fmt, with_paper), _languages(results, fmt), _strict(results, fmt, with_paper),
              _judgment(results, fmt)]
    if gv := render_inputs(results, fmt, with_paper):
        parts.append(gv)
    if len(results) > 1:
        if sc := render_scale(results, fmt, with_paper):
            parts.append(sc)
        if th := render_thinking(results, fmt):
            parts.append(th)
    parts += incomplete_notes(results, lambda r: (
        f"{r.counts.get('n_error')} request(s) failed in transport (model or parser) and "
        f"{r.counts.get('n_units_missing')} (question, language) unit(s) are left out; re-run with the same --out to "
        "retry them.")).splitlines(keepends=True)
    if skipped := skipped_notes(results, "question(s)"):
        parts.append(skipped)
    if empty := empty_notes(results, "scored wrong without an answer-parser call (as the official code)"):
        parts.append(empty)
    return "\n".join(parts)


def _header(results: Sequence[RunResult]) -> str:
    """The line above the tables: what the score is, how replies were judged, what BLIND rows are."""
    judges = sorted({r.counts.get("judge", "?") for r in results})
    notes = [f"judgment: {', '.join(judges)}"]
    if any(setting(r)[1] for r in results):
        notes.append("BLIND rows: the same prompts sent without any image (a language-prior baseline, not an "
                     "image-understanding score)")
    return ("IF-Bench: soft circular score (4 rotations x languages), macro mean over dimensions, "
            "mean of languages; " + "; ".join(notes) + "\n")


def _table2(results: Sequence[RunResult], fmt: str, with_paper: bool) -> str:
    """Table 2: Avg and the 10 dimensions, the paper's row once per model (or all its rows when none matches)."""
    paper2 = {norm_name(p["model"]): p for p in paper_table("table2")["rows"]}
    rows = []
    shown: set[str] = set()
    for r in results:
        rows.append([label(r)] + [r.metrics["Score"].get(c) for c in COLUMNS])
        if with_paper:
            p = paper2.get(norm_name(r.model))
            if p is not None and p["model"] not in shown:  # once per model (the paper's row is vanilla IF)
                shown.add(p["model"])
                rows.append([f"{p['model']} (paper)"] + [p[c] for c in COLUMNS])
    if with_paper and not any(paper2.get(norm_name(r.model)) for r in results):
        rows += [[f"{p['model']} (paper)"] + [p[c] for c in COLUMNS] for p in paper_table("table2")["rows"]]
    return render_table(["Model"] + COLUMNS, rows, fmt, title="IF-Bench (Table 2 layout; %)")


def _languages(results: Sequence[RunResult], fmt: str) -> str:
    """Fig. 9: the English and Chinese averages and their difference."""
    rows = []
    for r in results:
        en, zh = r.metrics.get("Score-en", {}).get("Avg"), r.metrics.get("Score-zh", {}).get("Avg")
        rows.append([label(r), en, zh, (en - zh) if en is not None and zh is not None else None])
    return render_table(["Model", "English", "Chinese", "EN - ZH"], rows, fmt,
                        title="Per-language scores (Fig. 9 layout; %)")


def _strict(results: Sequence[RunResult], fmt: str, with_paper: bool) -> str:
    """Tab. 7: soft and strict circular scores and their Avg difference (the paper's strict row with ``with_paper``)."""
    rows = []
    paper7 = {norm_name(p["model"]): p for p in paper_table("table7")["rows"]}
    for r in results:
        soft, strict = r.metrics["Score"], r.metrics.get("Strict", {})
        rows.append([label(r), "soft"] + [soft.get(c) for c in COLUMNS] + [None])
        d = (strict.get("Avg") - soft.get("Avg")) if strict.get("Avg") is not None and soft.get("Avg") is not None else None
        rows.append([label(r), "strict"] + [strict.get(c) for c in COLUMNS] + [d])
        p = paper7.get(norm_name(r.model)) if with_paper else None
        if p is not None:
            rows.append([f"{p['model']} (paper)", "strict"] + [p["strict"][c] for c in COLUMNS]
                        + [p["strict"]["Avg"] - p["soft"]["Avg"]])
    return render_table(["Model", "Criterion"] + COLUMNS + ["Strict - soft"], rows, fmt,
                        title="Strict vs soft circular score (Tab. 7 layout; %)")


def _judgment(results: Sequence[RunResult], fmt: str) -> str:
    """How each run's replies were judged: exact letters, first characters, parser calls and verdicts, errors."""
    return render_table(
        ["Model", "judgment", "requests", "exact", "first-char", "parser calls", "parser F", "parser invalid",
         "unparseable (scored 0)", "errors (not scored)", "units missing"],
        [[label(r), r.counts.get("judge"), r.counts.get("n_requests"), r.counts.get("n_exact"),
          r.counts.get("n_first_char"), r.counts.get("n_parser_calls"), r.counts.get("n_parser_F"),
          r.counts.get("n_parser_invalid"), r.counts.get("n_unparseable"), r.counts.get("n_error"),
          r.counts.get("n_units_missing")] for r in results], fmt, title="Judgment counts")


def render_inputs(results: Sequence[RunResult], fmt: str = "md", with_paper: bool = False) -> str:
    """Tab. 4 / Tab. 6 layout: per model, each input configuration beside the vanilla (``if``)
    run, with the Avg delta. Empty string when no run uses another input or blind mode."""
    if not any(setting(r) != ("if", False) for r in results):
        return ""
    by_model: dict[str, list[RunResult]] = defaultdict(list)
    names: dict[str, str] = {}
    for r in results:
        by_model[norm_name(r.model)].append(r)
        names.setdefault(norm_name(r.model), r.model)
    order = list(INPUTS)
    rows = []
    paper4 = {norm_name(p["model"]): p for p in paper_table("table4")["rows"]}
    for key, rs in by_model.items():
        model = names[key]
        rs = sorted(rs, key=lambda r: (setting(r)[1], order.index(setting(r)[0])
                                        if setting(r)[0] in order else 99))
        base = next((r for r in rs if setting(r) == ("if", False)), None)
        bavg = base.metrics["Score"].get("Avg") if base else None
        for r in rs:
            inp, blind = setting(r)
            avg = r.metrics["Score"].get("Avg")
            delta = (avg - bavg) if (avg is not None and bavg is not None and r is not base) else None
            label = INPUT_LABELS.get(inp, inp) + (" (blind: no image)" if blind else "")
            genvip = "vanilla" if (inp, blind) == ("if", False) else ("GenViP" if inp == "if+rgb+text" and not blind else "")
            rows.append([model, label, genvip, avg, delta] + [r.metrics["Score"].get(c) for c in ABBREVS])
        p = paper4.get(norm_name(model)) if with_paper and len(rs) > 1 else None
        if p is not None:
            rows.append([f"{p['model']} (paper)", "IF", "vanilla", p["vanilla"]["Avg"], None]
                        + [p["vanilla"][c] for c in ABBREVS])
            rows.append([f"{p['model']} (paper)", "IF + RGB + Text", "GenViP", p["genvip"]["Avg"],
                         p["genvip"]["Avg"] - p["vanilla"]["Avg"]] + [p["genvip"][c] for c in ABBREVS])
    return render_table(["Model", "Input", "GenViP", "Avg", "Δ Avg vs IF"] + ABBREVS, rows, fmt,
                        title="Input configurations vs vanilla (Tab. 4 / Tab. 6 layout; %)")


def vanilla_rows(results: Sequence[RunResult]) -> list[dict[str, Any]]:
    rows = []
    for r in results:
        if setting(r) != ("if", False):
            continue
        f = facts(r)
        rows.append({"model": r.model, **f, **r.metrics["Score"]})
    return rows


def render_scale(results: Sequence[RunResult], fmt: str = "md", with_paper: bool = False) -> str:
    """Tab. 3 layout: mean over families of Pearson r(score, parameter count); empty when no
    family has two sizes among the (vanilla, non-blind) runs."""
    corr = scale_correlation(vanilla_rows(results))
    if not corr["families"]:
        return ""
    rows = [["Corr (ours)"] + [corr["Corr"][c] for c in COLUMNS]]
    if with_paper:
        rows.append(["Corr (paper)"] + [paper_table("table3")["Corr"][c] for c in COLUMNS])
    fam_txt = "; ".join(f"{k}: {', '.join(v['models'])}" for k, v in corr["families"].items())
    return render_table([""] + COLUMNS, rows, fmt, title="Model scale vs score (Tab. 3 layout; Pearson r within "
                        f"families, averaged) — families: {fam_txt}")


def render_thinking(results: Sequence[RunResult], fmt: str = "md") -> str:
    """Fig. 5 layout: thinking minus non-thinking score per pair and averaged; empty without pairs."""
    td = thinking_deltas(vanilla_rows(results))
    if not td["pairs"]:
        return ""
    rows = [[f"{p['thinking']} - {p['non_thinking']}"] + [p["delta"][c] for c in COLUMNS] for p in td["pairs"]]
    rows.append([f"mean over {len(td['pairs'])} pair(s)"] + [td["mean"][c] for c in COLUMNS])
    return render_table(["Pair"] + COLUMNS, rows, fmt, title="Thinking vs non-thinking (Fig. 5 layout; "
                        "score change, points)")
