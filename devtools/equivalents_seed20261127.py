"""Checks behind the "equivalent" verdicts on the survivors of the held-out draw of seed 20261127
(devtools/MUTATION.md): each mutant is built with mutate.apply and compared with the original on inputs.
Run from the repository root: .venv/bin/python devtools/equivalents_seed20261127.py"""
import ast, importlib.util, json, random, sys, tempfile, shutil, pathlib
sys.path.insert(0, "devtools"); import mutate
res = json.load(open("devtools/mutation_results/heldout_seed20261127_n100.json"))
def mutant_module(module, line_text, mutation, name):
    src = open("src/" + module).read()
    m = next(m for m in res["mutants"] if m["module"] == module and m["line_text"] == line_text and m["mutation"] == mutation)
    idx = mutate.relocate(src, m["kind"], m["mutation"], m["line_text"], m["ordinal"])
    code, _ = mutate.apply(src, idx, m["kind"])
    p = pathlib.Path(tempfile.mkdtemp()) / (name + ".py"); p.write_text(code)
    spec = importlib.util.spec_from_file_location("lensbench_mut_" + name, p); mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod); return mod
# metrics _ranks
from lensbench.scoring import metrics
mm = mutant_module("lensbench/scoring/metrics.py", "ranks = [0.0] * len(values)", "0.0 -> 1.0", "metrics")
rng = random.Random(0)
ok = all(metrics._ranks(v) == mm._ranks(v) for v in ([rng.choice([1, 2, 3, 2.5]) for _ in range(rng.randint(0, 12))] for _ in range(5000)))
print("metrics _ranks identical on 5000 random lists with ties:", ok)
# store get_many chunks
from lensbench.runtime.store import RunStore
from lensbench.core.types import StoredResponse
for lt, mu in [("chunk = keys[i: i + 500]", "slice upper bound +1"), ("chunk = keys[i: i + 500]", "500 -> 501")]:
    sm = mutant_module("lensbench/runtime/store.py", lt, mu, "store")
    d = tempfile.mkdtemp()
    with RunStore(d) as s:
        for i in range(1203):
            s.put(StoredResponse(key=f"k{i}", request_id=f"r{i}", status="ok" if i % 3 else "error", text=f"t{i}" if i % 3 else None, error=None if i % 3 else "e"))
    keys = [f"k{i}" for i in range(1300)]
    with RunStore(d) as a, sm.RunStore(d) as b:
        ga, gb = a.get_many(keys), b.get_many(keys)
    print(f"store get_many {mu}: same result on 1300 keys (1203 stored):", ga == gb and len(ga) == 1203)
# parse_paper: the question number comes from ([1-9])
import re
print("parse_paper: 1 <= i and 0 <= i agree for every i the ([1-9]) group yields:", all((1 <= int(c)) == (0 <= int(c)) for c in "123456789"))
# paired: after pair_tables one side is None exactly when the other is
import numpy as np
from lensbench.scoring.bootstrap import UnitTable
from lensbench.scoring.paired import pair_tables
agree = True
for t in range(3000):
    U, C = rng.randint(1, 4), rng.randint(1, 3)
    mk = lambda: UnitTable("m", [f"u{i}" for i in range(U)], [f"c{j}" for j in range(C)],
                           np.array([[rng.randint(0, 1) for _ in range(C)] for _ in range(U)], float),
                           np.array([[rng.randint(0, 1) for _ in range(C)] for _ in range(U)], float),
                           [rng.randint(0, 1) for _ in range(C)], pool=rng.choice(["micro", "macro"]),
                           categories={"all": list(range(C)), "c0": [0]})
    a, b = pair_tables(mk(), mk())
    for cat in ("all", "c0"):
        agree &= (a.value(cat) is None) == (b.value(cat) is None)
print("paired: after pair_tables, A's value is None exactly when B's is (3000 random table pairs):", agree)
class NoSize: pass
print("engine: getattr(x, 'batch_size', 0) > 1 == getattr(x, 'batch_size', 1) > 1 for an object without the attribute:",
      (getattr(NoSize(), "batch_size", 0) > 1) == (getattr(NoSize(), "batch_size", 1) > 1))
