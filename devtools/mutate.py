"""A small deterministic mutation-testing driver for lensbench (dev tool; not part of the package).

Usage (from the repository root)::

    .venv/bin/python devtools/mutate.py --profile current -n 200 --seed 9 --out /tmp/mut_after.json
    .venv/bin/python devtools/mutate.py --profile base --root /work/base -n 200 --seed 9 --out /tmp/mut_before.json
    # re-run exactly the same mutants (e.g. after adding tests):
    .venv/bin/python devtools/mutate.py --profile current --replay /tmp/mut_after.json --out /tmp/mut_final.json

How it works
------------
* Each target module is parsed with :mod:`ast`; every single-point mutation site is enumerated in a fixed
  order (``ast.walk`` order): comparison swaps (``<``/``<=``, ``>``/``>=``, ``==``/``!=``, ``in``/``not in``,
  ``is``/``is not``), arithmetic swaps (``+``/``-``, ``*``/``/``, ``//``->``/``, ``%``->``*``, also in ``x += y``),
  integer/float constants (0<->1, otherwise +1), ``and``/``or``, removal of ``not``, ``True``/``False``,
  ``return <value>`` -> ``return None``, ``continue``/``break`` -> ``pass``, slice bounds (+1).
  Docstrings, string constants and annotations are never mutated.
* A seeded sample of ``n`` sites is drawn from the pooled sites of all targets (so each module gets a share
  proportional to its size in mutation sites).
* ``src/`` is copied ONCE per worker into a temp dir (``__pycache__`` left out); for each mutant the mutated
  module (``ast.unparse``) is written into that copy, the module's mapped tests run with
  ``PYTHONPATH=<copy>/src`` (``pytest -x -q -p no:cacheprovider``) under a timeout (a timeout counts as killed),
  and the original file is restored. The checked-out ``src/`` is never written.
* Before any mutant, each distinct test command runs once on the unmutated copy; a failing baseline aborts.

The result JSON holds the mutant list (so ``--replay`` re-runs the same set), per-module killed/total, the
overall kill rate and the survivors (``file:line``, mutation).
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# ---------------------------------------------------------------------------------------------- targets
sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutation_targets import BASE, BASE_FUNCTION_FILTER, CURRENT, CURRENT_EXTRA, _scoring_function_names  # noqa: E402  (beside this script)


# ---------------------------------------------------------------------------------------------- mutations
CMP_SWAP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
            ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
BIN_SWAP = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Div,
            ast.Mod: ast.Mult, ast.Pow: ast.Mult}
SYM = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=", ast.In: "in",
       ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not", ast.Add: "+", ast.Sub: "-", ast.Mult: "*",
       ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**"}


def _skip_ids(tree: ast.AST) -> set[int]:
    """ids of nodes never mutated: docstrings, annotations (and everything under them)."""
    skip: set[int] = set()

    def mark(n: ast.AST | None) -> None:
        if n is not None:
            for m in ast.walk(n):
                skip.add(id(m))

    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
                    and isinstance(body[0].value.value, str):
                mark(body[0])
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            mark(node.returns)
            for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs:
                mark(a.annotation)
            for a in (node.args.vararg, node.args.kwarg):
                if a is not None:
                    mark(a.annotation)
        if isinstance(node, ast.AnnAssign):
            mark(node.annotation)
    return skip


def _allowed_ids(tree: ast.AST, names: set[str] | None) -> set[int] | None:
    """ids of nodes inside functions named in ``names`` (None: everything allowed)."""
    if names is None:
        return None
    ok: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in names:
            for m in ast.walk(node):
                ok.add(id(m))
    return ok


def sites(tree: ast.AST, names: set[str] | None = None) -> list[tuple[int, str, str]]:
    """All mutation sites of a parsed module: ``(walk_index, kind, description)``, in ``ast.walk`` order.

    ``kind`` encodes the exact change (e.g. ``cmp:0`` = swap the first comparison operator); ``apply`` replays it.
    """
    skip = _skip_ids(tree)
    allowed = _allowed_ids(tree, names)
    out: list[tuple[int, str, str]] = []
    for i, node in enumerate(ast.walk(tree)):
        if id(node) in skip or (allowed is not None and id(node) not in allowed):
            continue
        if isinstance(node, ast.Compare):
            for j, op in enumerate(node.ops):
                if type(op) in CMP_SWAP:
                    out.append((i, f"cmp:{j}", f"{SYM[type(op)]} -> {SYM[CMP_SWAP[type(op)]]}"))
        elif isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in BIN_SWAP:
            out.append((i, "bin", f"{SYM[type(node.op)]} -> {SYM[BIN_SWAP[type(node.op)]]}"))
        elif isinstance(node, ast.Constant) and type(node.value) in (int, float):
            v = node.value
            new = 1 if v == 0 else (0 if v == 1 else v + 1)
            out.append((i, "const", f"{v!r} -> {type(v)(new)!r}"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
            out.append((i, "bool", f"{node.value} -> {not node.value}"))
        elif isinstance(node, ast.BoolOp):
            out.append((i, "boolop", "and -> or" if isinstance(node.op, ast.And) else "or -> and"))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            out.append((i, "not", "remove not"))
        elif isinstance(node, ast.Return) and node.value is not None and not (
                isinstance(node.value, ast.Constant) and node.value.value is None):
            out.append((i, "return", "return value -> return None"))
        elif isinstance(node, (ast.Continue, ast.Break)):
            out.append((i, "flow", f"remove {type(node).__name__.lower()}"))
        elif isinstance(node, ast.Slice):
            if node.lower is not None:
                out.append((i, "slice:lower", "slice lower bound +1"))
            if node.upper is not None:
                out.append((i, "slice:upper", "slice upper bound +1"))
    return out


class _Replace(ast.NodeTransformer):
    """Swap one node (by identity) for a replacement; statements (continue/break) become ``pass``."""

    def __init__(self, target: ast.AST, new: ast.AST) -> None:
        self.target, self.new = target, new

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if node is self.target:
            return self.new
        return super().generic_visit(node)


def apply(source: str, index: int, kind: str) -> tuple[str, int]:
    """Mutated source for site ``(index, kind)`` and the site's line number."""
    tree = ast.parse(source)
    node = list(ast.walk(tree))[index]
    line = getattr(node, "lineno", 0)
    if kind.startswith("cmp:"):
        j = int(kind.split(":")[1])
        node.ops[j] = CMP_SWAP[type(node.ops[j])]()
    elif kind == "bin":
        node.op = BIN_SWAP[type(node.op)]()
    elif kind == "const":
        v = node.value
        node.value = type(v)(1 if v == 0 else (0 if v == 1 else v + 1))
    elif kind == "bool":
        node.value = not node.value
    elif kind == "boolop":
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif kind == "not":
        tree = _Replace(node, node.operand).visit(tree)
    elif kind == "return":
        node.value = ast.Constant(value=None)
    elif kind == "flow":
        tree = _Replace(node, ast.Pass()).visit(tree)
    elif kind == "slice:lower":
        node.lower = ast.BinOp(left=node.lower, op=ast.Add(), right=ast.Constant(value=1))
    elif kind == "slice:upper":
        node.upper = ast.BinOp(left=node.upper, op=ast.Add(), right=ast.Constant(value=1))
    else:
        raise ValueError(kind)
    ast.fix_missing_locations(tree)
    return ast.unparse(tree), line


def anchor(source: str, index: int, kind: str, desc: str) -> dict:
    """Where a site is, independent of its walk index: the stripped source line and the site's ordinal among
    the sites with the same (kind, mutation, line text). Lets ``--replay`` find it in an edited module."""
    tree = ast.parse(source)
    nodes, lines = list(ast.walk(tree)), source.splitlines()
    text = lines[nodes[index].lineno - 1].strip()
    same = [i for i, k, d in sites(tree) if k == kind and d == desc and lines[nodes[i].lineno - 1].strip() == text]
    return {"line_text": text, "ordinal": same.index(index) if index in same else 0}


def relocate(source: str, kind: str, desc: str, line_text: str, ordinal: int) -> int | None:
    """The walk index of the site anchored by ``(kind, desc, line_text, ordinal)`` in ``source``, or None."""
    tree = ast.parse(source)
    nodes, lines = list(ast.walk(tree)), source.splitlines()
    same = [i for i, k, d in sites(tree) if k == kind and d == desc and lines[nodes[i].lineno - 1].strip() == line_text]
    return same[ordinal] if ordinal < len(same) else None


# ---------------------------------------------------------------------------------------------- running
def _tests_for(root: Path, targets: dict, module: str, extras: dict[str, list[str]]) -> tuple[tuple[str, ...], ...]:
    """The pytest calls for a module: the extra mutant-killing files (when present) first, then the mapped calls."""
    extra = [f for prefix, files in extras.items() if module.startswith(prefix) for f in files if (root / f).is_file()]
    # the mapped calls never pick the extra files up through a folder (e.g. tests/scoring): with --no-extra they
    # must not run at all, with extras they already ran first
    ignore = [f"--ignore={f}" for fs in CURRENT_EXTRA.values() for f in fs] if targets is CURRENT else []
    calls = ([extra] if extra else []) + [list(c) + ignore for c in targets[module]]
    out = []
    for c in calls:  # leave out test paths that do not exist (moved files would make pytest fail: a false kill)
        keep = [a for a in c if not a.startswith("tests/") or (root / a.split("::")[0]).exists()]
        for a in c:
            if a not in keep:
                print(f"warning: {a} does not exist; left out of the plan for {module}", file=sys.stderr)
        if any(a.startswith("tests/") for a in keep):
            out.append(tuple(keep))
    return tuple(out)


_LAST_OUT = threading.local()


def _pytest(root: Path, src: Path, calls, timeout: float) -> tuple[str, float]:
    """Run the pytest calls in order with PYTHONPATH=src: 'killed' / 'survived' / 'timeout', and seconds."""
    env = dict(os.environ, PYTHONPATH=str(src), PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")
    t0 = time.monotonic()
    for call in calls:
        left = timeout - (time.monotonic() - t0)
        if left <= 0:
            return "timeout", time.monotonic() - t0
        cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *call]
        try:
            r = subprocess.run(cmd, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=left, start_new_session=True)
        except subprocess.TimeoutExpired:
            return "timeout", time.monotonic() - t0
        # pytest exit codes: 0 passed, 1 tests failed, 2 interrupted (e.g. a collection/import error),
        # 3 internal error, 4 usage error (bad path/option: says nothing about the mutant), 5 nothing collected
        if r.returncode:
            lines = r.stdout.decode(errors="replace").strip().splitlines()
            _LAST_OUT.tail = [ln[:200] for ln in lines if ln.startswith(("FAILED", "ERROR"))][:1] or lines[-1:]
        if r.returncode == 4:
            return "invalid", time.monotonic() - t0
        if r.returncode not in (0, 5):
            return "killed", time.monotonic() - t0
    return "survived", time.monotonic() - t0


def _copy_src(root: Path, dest: Path) -> Path:
    shutil.copytree(root / "src", dest / "src", ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
    return dest / "src"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile", choices=["current", "base"], default="current")
    ap.add_argument("--root", type=Path, default=Path.cwd(), help="repository root holding src/ and tests/")
    ap.add_argument("-n", type=int, default=200, help="mutants to sample")
    ap.add_argument("--seed", type=int, default=9)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=0, help="per-mutant seconds (0: 3x baseline + 30; 300 without)")
    ap.add_argument("--no-baseline", action="store_true", help="skip the unmutated runs (when known to pass)")
    ap.add_argument("--no-extra", action="store_true", help="leave the *_mutants.py test files out (the 'before tests' figure)")
    ap.add_argument("--replay", type=Path, help="re-run the mutants listed in a previous result JSON")
    ap.add_argument("--replay-survivors", action="store_true", help="with --replay: only the mutants that survived")
    ap.add_argument("--only", default="", help="only mutants whose module contains this text")
    ap.add_argument("--list", action="store_true", help="print the sampled mutants and exit")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    root = a.root.resolve()
    targets = CURRENT if a.profile == "current" else BASE
    extras = CURRENT_EXTRA if a.profile == "current" and not a.no_extra else {}
    names = _scoring_function_names(Path(__file__).resolve().parents[1] / "src") if a.profile == "base" else None

    sources = {m: (root / "src" / m).read_text() for m in targets}
    gone: list[str] = []
    if a.replay:
        chosen = []
        for m in json.loads(a.replay.read_text())["mutants"]:
            if a.replay_survivors and m["status"] != "survived":
                continue
            idx = m["index"]
            if "line_text" in m:  # the module may have been edited since: find the same site again
                idx = relocate(sources[m["module"]], m["kind"], m["mutation"], m["line_text"], m.get("ordinal", 0))
            if idx is None:
                gone.append(f"{m['module']}:{m['line']}  {m['mutation']}  ({m['line_text']})")
                continue
            chosen.append((m["module"], idx, m["kind"], m["mutation"]))
        if gone:
            print(f"{len(gone)} mutants no longer exist in the edited modules:", *gone, sep="\n  ", flush=True)
    else:
        pool = []
        for m in targets:
            filt = names if any(m.startswith(p) for p in BASE_FUNCTION_FILTER) and names is not None else None
            pool += [(m, i, k, d) for i, k, d in sites(ast.parse(sources[m]), filt)]
        rng = random.Random(a.seed)
        chosen = sorted(rng.sample(pool, min(a.n, len(pool))), key=lambda t: (t[0], t[1], t[2]))
        print(f"{len(pool)} mutation sites in {len(targets)} modules; sampled {len(chosen)}", flush=True)
    if a.only:
        chosen = [c for c in chosen if a.only in c[0]]
    if a.list:
        for c in chosen:
            print(*c, sep="\t")
        return 0

    tmp = Path(tempfile.mkdtemp(prefix="lensbench-mut-"))
    workers = max(1, min(2, a.workers))
    slots = [_copy_src(root, tmp / f"w{i}") for i in range(workers)]
    free = list(range(workers))
    lock = threading.Lock()

    # baseline: every distinct test command must pass on the unmutated copy
    plan = {m: _tests_for(root, targets, m, extras) for m in {c[0] for c in chosen}}  # frozen for the whole run
    cmds = sorted(set(plan.values())) if not a.no_baseline else []
    base_t: dict[tuple, float] = {}

    def baseline(c) -> tuple[str, float]:
        with lock:
            w = free.pop()
        try:
            return _pytest(root, slots[w], c, 3600)
        finally:
            with lock:
                free.append(w)

    with ThreadPoolExecutor(workers) as ex:
        for c, (st, dt) in zip(cmds, ex.map(baseline, cmds)):
            print(f"baseline {st:8s} {dt:6.1f}s  {c}", flush=True)
            base_t[c] = dt
            if st != "survived":
                print("baseline tests fail on the unmutated code; fix that first", file=sys.stderr)
                return 2

    results: list[dict] = []

    def one(c: tuple[str, int, str, str]) -> dict:
        module, index, kind, desc = c
        with lock:
            w = free.pop()
        try:
            mutated, line = apply(sources[module], index, kind)
            path = slots[w] / module
            path.write_text(mutated)
            args = plan[module]
            limit = a.timeout or (3 * base_t[args] + 30 if args in base_t else 300)
            _LAST_OUT.tail = []
            st, dt = _pytest(root, slots[w], args, limit)
            path.write_text(sources[module])
        finally:
            with lock:
                free.append(w)
        r = {"module": module, "index": index, "kind": kind, "mutation": desc, "line": line,
             **anchor(sources[module], index, kind, desc), "status": st, "seconds": round(dt, 1),
             "evidence": getattr(_LAST_OUT, "tail", []) if st != "survived" else []}
        print(f"{st:8s} {dt:6.1f}s  {module}:{line}  {desc}", flush=True)
        return r

    t0 = time.monotonic()
    with ThreadPoolExecutor(workers) as ex:
        results = list(ex.map(one, chosen))
    shutil.rmtree(tmp, ignore_errors=True)

    per: dict[str, dict[str, int]] = {}
    for r in results:
        if r["status"] == "invalid":
            continue
        d = per.setdefault(r["module"], {"killed": 0, "total": 0})
        d["total"] += 1
        d["killed"] += r["status"] != "survived"
    killed = sum(d["killed"] for d in per.values())
    total = sum(d["total"] for d in per.values())
    doc = {
        "profile": a.profile, "root": str(root), "seed": a.seed, "n": len(results),
        "killed": killed, "total": total, "kill_rate": round(killed / total, 4) if total else None,
        "per_module": per, "minutes": round((time.monotonic() - t0) / 60, 1),
        "survivors": [f"{r['module']}:{r['line']}  {r['mutation']}  ({r['line_text']})" for r in results
                      if r["status"] == "survived"],
        "gone": gone,
        "invalid": [f"{r['module']}:{r['line']}  {r['mutation']}" for r in results if r["status"] == "invalid"],
        "mutants": results,
    }
    a.out.write_text(json.dumps(doc, indent=1))
    for m, d in sorted(per.items()):
        print(f"{d['killed']:4d}/{d['total']:<4d} {m}")
    print(f"overall {killed}/{total} = {100 * killed / max(total, 1):.1f}% killed  ({doc['minutes']} min) -> {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
