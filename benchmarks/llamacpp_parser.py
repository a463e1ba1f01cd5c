"""IF-Bench's Fig. 11 LLM answer parser run for real on a local GGUF model (``llamacpp:``).

A small IF-Bench run on the real questions (``if_bench.json``; stand-in 8x8 images, since
the parser never sees them) with a ``replay:`` model whose replies are wordy — each names
one option letter (or none) in a sentence, in the request's language — so the exact-letter
rule fails and every such reply goes to the parser (``--judge-model llamacpp:GGUF``). Some
replies are a bare letter (the exact rule takes them; no parser call). The letter each reply
means is known, so the parser's extractions are scored against it; a reply that names no
option should come back as ``F``.

Prints: requests, exact-rule hits, parser calls, parser extractions right / wrong by kind of
reply, F answers, invalid parser replies, wall time, model load time and llama.cpp's token
rates (from its log), then a second run of the same folder (all parser calls cached: none
sent, model not loaded).

    python benchmarks/llamacpp_parser.py --gguf /tmp/gguf/qwen2.5-0.5b-instruct.gguf [--limit 12]

(``--gguf`` defaults to ``$LENSBENCH_GGUF``.) Needs ``pip install 'lensbench[llamacpp]'``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from PIL import Image

from lensbench.benchmarks.ifbench.benchmark import IFBench, rotate
from lensbench.runtime.runner import RunSettings, run_benchmark

DEFAULT_DATA = Path("/work/shared/data/IF-Bench/evaluate/if_bench")

EN_LETTER = [
    'The answer is option {L} because the thermal pattern best matches "{T}".',
    'After carefully examining the infrared image, I believe "{T}" is correct, so my choice is {L}.',
    "Option {L}: {T}. The bright regions indicate warmer objects, which supports this.",
    "It is hard to be certain from a thermal image, but my best guess is ({L}) {T}.",
    "**{L}** - {T}",
]
ZH_LETTER = [
    "答案是{L}，因为热分布与“{T}”最吻合。",
    "根据红外图像中的热分布，正确选项是{L}：{T}。",
    "我认为应该选{L}（{T}）。",
]
EN_NONE = ["The image is too blurry to determine which option is correct.",
           "I cannot answer this question without more information about the scene."]
ZH_NONE = ["无法从这张图像中判断答案。", "图像太模糊，我无法确定哪个选项正确。"]


def stand_in_images(json_path: Path, folder: Path) -> None:
    """8x8 grey JPEGs under every ``dst_thermal_path`` name in ``json_path`` (the parser never sees them)."""
    raw = json.loads(json_path.read_text(encoding="utf-8"))
    names = sorted({e["dst_thermal_path"] for v in raw.values() for e in v})
    folder.mkdir(parents=True, exist_ok=True)
    for i, n in enumerate(names):
        if not (folder / n).exists():
            Image.new("L", (8, 8), i % 256).save(folder / n)


def wordy_replies(bench: IFBench, data_dir: Path, limit: int, seed: int) -> tuple[list[dict], dict[str, dict]]:
    """Replay records and, per request id, what each reply means: ``{"kind", "meant"}``.

    kind: ``exact`` (bare letter), ``letter`` (a sentence naming one option; meant = that
    letter, the right one 70% of the time) or ``none`` (names no option; meant = ``F``).
    """
    rng = random.Random(seed)
    qs = {q.qid: q for q in bench.load(data_dir)[:limit]}
    records, truth = [], {}
    for r in bench.expand(list(qs.values())):
        q, lang = qs[r.meta["qid"]], r.meta["lang"]
        slots, right = rotate(q.option_list(lang), q.answer, r.meta["rotation"])
        u = rng.random()
        letter = right if rng.random() < 0.7 else rng.choice([x for x in "ABCD" if x != right])
        if u < 0.10:
            kind, text = "exact", letter
        elif u < 0.25:
            kind, letter = "none", "F"
            text = rng.choice(EN_NONE if lang == "en" else ZH_NONE)
        else:
            kind = "letter"
            text = rng.choice(EN_LETTER if lang == "en" else ZH_LETTER).format(L=letter, T=slots["ABCD".index(letter)])
        records.append({"request_id": r.id, "text": text, "model": "wordy-replay"})
        truth[r.id] = {"kind": kind, "meant": letter}
    return records, truth


_TIMING = re.compile(r"(prompt eval|\beval) time =\s*([\d.]+) ms /\s*(\d+) tokens")
_STAMP = re.compile(r"^(\d+)\.(\d+)\.(\d+)\.(\d+) .*listening on")


def log_figures(log: Path) -> dict:
    """Token counts and rates summed over llama.cpp's ``print_timing`` lines; model load seconds."""
    tot = {"prompt eval": [0.0, 0], "eval": [0.0, 0]}
    load_s = None
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        m = _TIMING.search(line)
        if m:
            tot[m.group(1).strip()][0] += float(m.group(2))
            tot[m.group(1).strip()][1] += int(m.group(3))
        s = _STAMP.match(line)
        if s and load_s is None:
            load_s = int(s.group(1)) * 60 + int(s.group(2)) + int(s.group(3)) / 1000
    out = {"model_load_s": load_s}
    for k, (ms, n) in tot.items():
        name = "prompt" if k == "prompt eval" else "generated"
        out[f"{name}_tokens"] = n
        out[f"{name}_tok_per_s"] = round(n / ms * 1000, 1) if ms else None
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gguf", default=os.environ.get("LENSBENCH_GGUF"), help="GGUF model file (default $LENSBENCH_GGUF)")
    ap.add_argument("--data-dir", type=Path, default=DEFAULT_DATA, help="folder with if_bench.json")
    ap.add_argument("--limit", type=int, default=12, help="first N questions (x 2 languages x 4 rotations requests)")
    ap.add_argument("--out", type=Path, default=None, help="run folder (default: a new temporary folder)")
    ap.add_argument("--ctx", type=int, default=8192)
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    if not a.gguf:
        sys.exit("no GGUF model given: pass --gguf /path/model.gguf or set LENSBENCH_GGUF "
                 "(e.g. a Qwen2.5-0.5B-Instruct GGUF); nothing was run")
    if not Path(a.gguf).is_file():
        sys.exit(f"GGUF model file {a.gguf} does not exist; nothing was run")
    if not (a.data_dir / "if_bench.json").is_file() and not a.data_dir.is_file():
        sys.exit(f"no if_bench.json in {a.data_dir}; pass --data-dir")

    work = Path(tempfile.mkdtemp(prefix="llamacpp-parser-"))
    out = a.out or work / "run"
    json_path = a.data_dir / "if_bench.json" if a.data_dir.is_dir() else a.data_dir
    stand_in_images(json_path, work / "infrared_imgs")
    opts = IFBench.Options(image_dir=str(work / "infrared_imgs"))
    records, truth = wordy_replies(IFBench(opts), a.data_dir, a.limit, a.seed)
    replay = work / "wordy.jsonl"
    replay.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    log = work / "llama-server.log"
    query = f"ctx={a.ctx}&parallel={a.parallel}&log={log}" + (f"&threads={a.threads}" if a.threads else "")
    settings = RunSettings(model=f"replay:{replay}", out=out, data_dir=a.data_dir, judge_model=f"llamacpp:{a.gguf}?{query}",
                           limit=a.limit, concurrency=a.concurrency, timeout_s=600, progress=False, seed=a.seed)

    t0 = time.perf_counter()
    res = run_benchmark(IFBench(opts), settings)
    wall = time.perf_counter() - t0
    rows = [json.loads(x) for x in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    by_kind: dict[str, Counter] = {}
    examples = []
    for r in rows:
        t = truth[r["id"]]
        c = by_kind.setdefault(t["kind"], Counter())
        c["n"] += 1
        if r.get("judged_by") == "parser":
            v = r.get("parser_verdict")
            c["parser_calls"] += 1
            c["right" if v == t["meant"] else ("invalid" if v is None else "wrong")] += 1
            if v != t["meant"] and len(examples) < 6:
                examples.append((r["reply"], t["meant"], r.get("parser_reply")))
        elif r.get("judged_by") == "exact":
            c["exact_rule"] += 1
    calls = sum(c["parser_calls"] for c in by_kind.values())
    right = sum(c["right"] for c in by_kind.values())
    manifest = json.loads((out / "run.json").read_text(encoding="utf-8"))
    cnt = res.counts
    print(f"model (judge): llamacpp:{a.gguf}  [{manifest['judge_fingerprint']}]")
    print(f"questions {a.limit} -> requests {cnt['n_requests']}; judgment: {cnt['judge']}")
    print(f"exact-letter rule: {cnt['n_exact']}  parser calls: {cnt['n_parser_calls']}  parser F: {cnt['n_parser_F']}  "
          f"parser invalid: {cnt['n_parser_invalid']}  parser errors: {cnt['n_parser_error']}")
    for kind in ("letter", "none", "exact"):
        c = by_kind.get(kind, Counter())
        meant = "the letter named" if kind == "letter" else ("F" if kind == "none" else "-")
        print(f"  replies of kind {kind:6s}: {c['n']:4d}; parser calls {c['parser_calls']:4d}; parser gave {meant}: "
              f"{c['right']}; other letter: {c['wrong']}; invalid: {c['invalid']}; exact rule: {c['exact_rule']}")
    print(f"parser extracted what the reply meant: {right}/{calls} = {100 * right / max(calls, 1):.1f}%")
    lab = manifest["engine"]["by_label"].get("if-bench parser", {})
    sent = lab.get("unique", 0) - lab.get("cached", 0)
    print(f"parser requests: {lab.get('unique')} unique prompts (identical replies share one), "
          f"{sent} sent to llama.cpp ({lab.get('cached')} from the store), {lab.get('errors')} errors")
    print(f"IF-Bench Avg with this parser (wordy replay model): {res.metrics['Score'].get('Avg')}")
    figs = log_figures(log) if log.exists() else {}
    print(f"wall time {wall:.1f} s (model load {figs.get('model_load_s')} s); "
          f"{sent / max(wall, 1e-9):.2f} parser requests sent/s")
    if figs:
        print(f"llama.cpp: prompt {figs['prompt_tokens']} tokens at {figs['prompt_tok_per_s']} tok/s, "
              f"generated {figs['generated_tokens']} tokens at {figs['generated_tok_per_s']} tok/s")
    for reply, meant, got in examples:
        print(f"  miss: meant {meant}, parser said {got!r}: {reply[:100]!r}")

    t1 = time.perf_counter()
    run_benchmark(IFBench(opts), settings)
    again = json.loads((out / "run.json").read_text(encoding="utf-8"))["engine"]
    print(f"re-run of the same folder: {again['unique'] - again['cached']} calls sent, {time.perf_counter() - t1:.1f} s "
          f"(parser replies come from the store)")
    print(f"run folder: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
