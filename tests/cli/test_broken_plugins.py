"""Issue 30 item 5: a plugin cannot take the tool down. Throwaway installed distributions (a ``.dist-info``
naming entry points, its modules beside it on ``sys.path``, as tests/benchmarks/test_sixth_benchmark.py and
tests/backends/test_backend_entry_points.py install them) add benchmarks and model backends that break at
every step: raising at import, at construction, at load, at score, at aggregate, wrong types, a wrong
class; backends raising at construction or on a call, returning None, no text, a non-str, a non-Completion.
Each case is one row: the command, the exit code, the one named line; never a traceback, and what is not
broken goes on (``list`` lists the rest, ``report A B`` reports B, ``eval`` runs the other cells).
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lensbench.cli.main import app
from contract import TOY_DIR as TOY
from contract import toy_data as _data

BENCH_MODULE = '''
from toy_count.benchmark import ToyCount


class AtInit(ToyCount):
    name = "bad-init"

    def __init__(self, options=None):
        raise RuntimeError("boom at construction")


class AtLoad(ToyCount):
    name = "bad-load"

    def load(self, data_dir):
        raise RuntimeError("boom at load")


class AtScore(ToyCount):
    name = "bad-score"

    def scored(self, sample, request, reply, ctx):
        raise RuntimeError("boom at score")


class AtAggregate(ToyCount):
    name = "bad-aggregate"

    def aggregate(self, records, noted=None):
        raise RuntimeError("boom at aggregate")


class WrongTypes(ToyCount):
    name = "bad-types"

    def expand(self, samples, ctx=None):
        return 42


class WrongName(ToyCount):
    name = "not-its-entry-point"


not_a_class = 42
'''

FLAKY_MODULE = '''
import os

if os.environ.get("LB_FLAKY_BROKEN"):
    raise RuntimeError("boom at import (flaky)")

from toy_count.benchmark import ToyCount


class Flaky(ToyCount):
    name = "flaky"
'''

BACKEND_MODULE = '''
from lensbench.backends.base import Backend
from lensbench.core.types import Completion


class Fixed(Backend):
    def __init__(self, result):
        self.result = result
        self.fingerprint = f"fixed:{result!r}"
        self.display_name = "fixed"

    async def generate(self, request):
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


def make_good(arg, config):
    return Fixed(Completion(text="2", finish_reason="stop"))


def make_none(arg, config):
    return Fixed(None)


def make_notext(arg, config):
    return Fixed(Completion(text=None, finish_reason="stop"))


def make_nonstr(arg, config):
    return Fixed(Completion(text=2, finish_reason="stop"))


def make_plainstr(arg, config):
    return Fixed("2")


def make_badfields(arg, config):
    return Fixed(Completion(text="2", finish_reason=7, usage="lots"))


def make_raising(arg, config):
    return Fixed(RuntimeError("boom on the call"))


def make_badmake(arg, config):
    raise RuntimeError("boom at backend construction")


def make_notbackend(arg, config):
    return "not a backend"
'''

ENTRY_POINTS = """
[lensbench.benchmarks]
toy-count = toy_count.benchmark:ToyCount
bad-import = lbp_import:Anything
bad-init = lbp_bench:AtInit
bad-load = lbp_bench:AtLoad
bad-score = lbp_bench:AtScore
bad-aggregate = lbp_bench:AtAggregate
bad-types = lbp_bench:WrongTypes
bad-name = lbp_bench:WrongName
bad-notclass = lbp_bench:not_a_class
flaky = lbp_flaky:Flaky

[lensbench.backends]
good = lbp_backend:make_good
none = lbp_backend:make_none
notext = lbp_backend:make_notext
nonstr = lbp_backend:make_nonstr
plainstr = lbp_backend:make_plainstr
badfields = lbp_backend:make_badfields
raising = lbp_backend:make_raising
badmake = lbp_backend:make_badmake
notbackend = lbp_backend:make_notbackend
badimport = lbp_import:make
"""

MODULES = ("lbp_import", "lbp_bench", "lbp_flaky", "lbp_backend", "toy_count", "toy_count.benchmark")


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The plugins installed on ``sys.path`` and a ToyCount data folder."""
    site = tmp_path_factory.mktemp("site")
    dist = site / "lbp-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: lbp\nVersion: 0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(ENTRY_POINTS, encoding="utf-8")
    (site / "lbp_import.py").write_text('raise RuntimeError("boom at import")\n', encoding="utf-8")
    for name, text in (("lbp_bench", BENCH_MODULE), ("lbp_flaky", FLAKY_MODULE), ("lbp_backend", BACKEND_MODULE)):
        (site / f"{name}.py").write_text(textwrap.dedent(text), encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(TOY))
        mp.syspath_prepend(str(site))
        yield _data(tmp_path_factory.mktemp("toy-data") / "data")
    for m in MODULES:
        sys.modules.pop(m, None)


def cli(*args: str, env: dict | None = None):
    base = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    r = CliRunner().invoke(app, list(args), env={**base, **(env or {})})
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise AssertionError(f"traceback for {args}: {type(r.exception).__name__}: {r.exception}\n{r.output}")
    assert "Traceback" not in r.output, r.output
    return r


def flat(text: str) -> str:
    return " ".join(text.split())


def _run(data: Path, out: Path, bench: str, model: str = "constant:2", *extra: str):
    return cli("run", bench, "--data-dir", str(data), "--model", model, "--out", str(out), "--no-progress",
               "--max-retries", "1", *extra)


# --------------------------------------------------------------------------- lensbench list
def test_list_names_each_broken_plugin_in_one_line_and_lists_the_rest(installed):
    r = cli("list")
    assert r.exit_code == 0, r.output
    out = flat(r.output)
    for name, why in (("bad-import", "RuntimeError: boom at import"), ("bad-init", "RuntimeError: boom at construction"),
                      ("bad-name", "not a lensbench Benchmark subclass named 'bad-name'"),
                      ("bad-notclass", "not a lensbench Benchmark subclass named 'bad-notclass'")):
        line = next((x for x in r.output.splitlines() if x.startswith(f"plugin {name}: cannot be loaded: ")), None)
        assert line is not None and why in line, (name, r.output)
    for name in ("rgb-th-bench", "gobench", "toy-count", "bad-load", "bad-score", "flaky"):  # the rest, listed
        assert f"{name}:" in out, name
    assert "plugin badimport: cannot be loaded: " in out and "plugin badmake" not in out  # backends: import only
    doc = json.loads(cli("list", "--json").stdout)
    errs = {b["name"]: b["error"] for b in doc["benchmarks"] if "error" in b}
    assert set(errs) == {"bad-import", "bad-init", "bad-name", "bad-notclass"}
    assert "toy-count" in {b["name"] for b in doc["benchmarks"] if "error" not in b}


# --------------------------------------------------------------------------- lensbench run, one table row per case
RUN_CASES = [
    # (benchmark, model, exit code, the named line)
    ("bad-import", "constant:2", 2, "plugin 'bad-import' (lbp_import:Anything) cannot be loaded: RuntimeError: boom at import"),
    ("bad-init", "constant:2", 2, "plugin 'bad-init' (lbp_bench:AtInit): __init__ raised RuntimeError: boom at construction"),
    ("bad-load", "constant:2", 2, "plugin 'bad-load' (lbp_bench:AtLoad): load raised RuntimeError: boom at load"),
    ("bad-score", "constant:2", 2, "plugin 'bad-score' (lbp_bench:AtScore): scored raised RuntimeError: boom at score"),
    ("bad-aggregate", "constant:2", 2, "plugin 'bad-aggregate' (lbp_bench:AtAggregate): aggregate raised RuntimeError: "
                                       "boom at aggregate"),
    ("bad-types", "constant:2", 2, "plugin 'bad-types' (lbp_bench:WrongTypes): expand"),
    ("bad-name", "constant:2", 2, "is not a lensbench Benchmark subclass named 'bad-name'"),
    ("bad-notclass", "constant:2", 2, "is not a lensbench Benchmark subclass named 'bad-notclass'"),
    ("toy-count", "badmake:", 2, "model backend 'badmake' of the package 'lbp' cannot be built: RuntimeError: boom at "
                                 "backend construction"),
    ("toy-count", "badimport:", 2, "model backend 'badimport' of the package 'lbp' cannot be loaded"),
    ("toy-count", "notbackend:", 2, "returned str, not a lensbench Backend"),
]


@pytest.mark.parametrize("bench,model,code,line", RUN_CASES, ids=[f"{b}-{m}" for b, m, _c, _l in RUN_CASES])
def test_a_broken_plugin_is_one_named_line(installed, tmp_path, bench, model, code, line):
    r = _run(installed, tmp_path / "run", bench, model)
    assert r.exit_code == code, r.output
    assert line in flat(r.output), r.output
    assert sum(1 for x in r.output.splitlines() if x.startswith("error:")) == 1, r.output


BACKEND_CASES = [
    # (backend, what the error outcome says)
    ("none", "returned NoneType, not a Completion"),
    ("notext", "returned no text (text=None; a server failure)"),
    ("nonstr", "returned text of type int"),
    ("plainstr", "returned str, not a Completion"),
    ("badfields", "finish_reason of type int"),
    ("raising", "raised RuntimeError: boom on the call"),
]


@pytest.mark.parametrize("model,why", BACKEND_CASES, ids=[m for m, _w in BACKEND_CASES])
def test_a_backend_without_text_is_a_server_failure_of_that_request(installed, tmp_path, model, why):
    r = _run(installed, tmp_path / "run", "toy-count", f"{model}:")
    assert r.exit_code != 0 and r.exit_code != 1, r.output  # an incomplete run, not a crash
    rows = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    assert len(rows) == 12 and {d["outcome"] for d in rows} == {"error"}, rows[:1]
    res = json.loads((tmp_path / "run" / "result.json").read_text())
    assert res["counts"]["n_error"] == 12
    with _replies(tmp_path / "run") as replies:  # the server failure, stored with its reason, after the retry
        assert replies and all(rep["status"] == "error" and why in rep["error"] and rep["attempts"] == 2
                               for rep in replies), replies[:1]
    good = _run(installed, tmp_path / "good", "toy-count", "good:")  # the control: a backend that answers
    assert good.exit_code == 0, good.output


class _replies:
    """The stored replies of a run folder (as dicts), from its SQLite store."""

    def __init__(self, run: Path):
        self.run = run

    def __enter__(self):
        import sqlite3

        db = next(self.run.glob("*.sqlite"))
        con = sqlite3.connect(db)
        con.row_factory = sqlite3.Row
        try:
            return [dict(r) for r in con.execute("SELECT * FROM responses")]
        finally:
            con.close()

    def __exit__(self, *exc):
        return False


# --------------------------------------------------------------------------- report A B
def test_report_reports_the_healthy_run_and_names_the_broken_plugin(installed, tmp_path):
    assert _run(installed, tmp_path / "a", "flaky").exit_code == 0
    assert _run(installed, tmp_path / "b", "toy-count").exit_code == 0
    from lensbench.benchmarks import registry

    def forget():  # as in a new process: the plugin imported afresh
        sys.modules.pop("lbp_flaky", None)
        registry._plugin_class.cache_clear()

    forget()
    r = cli("report", str(tmp_path / "a"), str(tmp_path / "b"), env={"LB_FLAKY_BROKEN": "1"})
    forget()
    assert r.exit_code == 0, r.output
    out = flat(r.output)
    qs = json.loads((installed / "questions.json").read_text())
    acc = 100 * sum(q["answer"] == "2" for q in qs) / len(qs)  # constant:2 is right where the answer is 2
    assert f"| Constant '2' | {acc:.1f} [" in out and "ToyCount (release size unknown) accuracy all" in out  # B, reported
    assert "plugin 'flaky' (lbp_flaky:Flaky) cannot be loaded: RuntimeError: boom at import (flaky)" in out, out


# --------------------------------------------------------------------------- eval
def test_eval_goes_on_after_a_raising_cell_and_names_it(installed, tmp_path):
    cfg = tmp_path / "m.toml"
    cfg.write_text(textwrap.dedent(f"""
        out = "{tmp_path / 'm'}"
        [[model]]
        name = "const"
        spec = "constant:2"
        [[benchmark]]
        name = "bad-score"
        data_dir = "{installed}"
        [[benchmark]]
        name = "bad-init"
        data_dir = "{installed}"
        [[benchmark]]
        name = "bad-import"
        data_dir = "{installed}"
        options = {{ anything = 1 }}
        [[benchmark]]
        name = "toy-count"
        data_dir = "{installed}"
    """), encoding="utf-8")
    r = cli("eval", str(cfg), "--no-progress")
    assert r.exit_code == 3, r.output
    out = flat(r.output)
    assert json.loads((tmp_path / "m" / "const" / "toy-count" / "result.json").read_text())["counts"]["n"] == 12
    assert "const/bad-score" in out and "scored raised RuntimeError: boom at score" in out, out
    assert "const/bad-init" in out and "__init__ raised RuntimeError: boom at construction" in out, out
    assert "const/bad-import" in out and "cannot be loaded: RuntimeError: boom at import" in out, out
    assert "3 cell(s) failed" in out
