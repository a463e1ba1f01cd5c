"""Golden outputs: every benchmark x option, re-run against the installed code and compared with
``expected/<scenario>.json`` (recorded from the pre-restructure code by ``record.py``).

See ``harness.py`` for what a document holds and how it is normalised, ``scenarios.py`` for the
scenarios. All scenarios selected in a session run up front, concurrently (``GOLDEN_WORKERS``,
default 2-4), against one fake OpenAI server; each test then compares its own document.
``GOLDEN_ISOLATED=1`` runs every CLI call in its own process (slower).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
from scenarios import BY_NAME, SCENARIOS  # noqa: E402

NAMES = [s.name for s in SCENARIOS]


@pytest.fixture(scope="session")
def golden_docs(request, tmp_path_factory):
    selected = []
    for item in request.session.items:
        cs = getattr(item, "callspec", None)
        if cs is not None and getattr(item, "originalname", "") == "test_golden" and "name" in cs.params:
            selected.append(cs.params["name"])
    selected = list(dict.fromkeys(selected)) or NAMES
    workers = int(os.environ.get("GOLDEN_WORKERS", max(2, min(4, os.cpu_count() or 2))))
    root = tmp_path_factory.mktemp("golden")
    return harness.run_many([BY_NAME[n] for n in selected], python=sys.executable, env=harness.driver_env(),
                            root=root, workers=workers)


def test_every_scenario_has_a_golden():
    missing = [n for n in NAMES if not (harness.EXPECTED / f"{n}.json").is_file()]
    assert not missing, f"no expected document for {missing}: run tests/golden/record.py"
    extra = sorted(p.stem for p in harness.EXPECTED.glob("*.json") if p.stem not in NAMES)
    assert not extra, f"expected documents without a scenario: {extra}"


def test_fixtures_are_small_and_committed():
    files = [p for p in harness.FIXTURES.rglob("*") if p.is_file()]
    total = sum(p.stat().st_size for p in files)
    assert files and total < 1.5 * 1024 * 1024, f"fixtures are {total} bytes"


@pytest.mark.parametrize("name", NAMES)
def test_golden(name, golden_docs):
    path = harness.EXPECTED / f"{name}.json"
    if not path.is_file():
        pytest.fail(f"no golden for {name}: run tests/golden/record.py --only {name}")
    doc, err = golden_docs[name]
    assert doc is not None, f"scenario {name} did not run:\n{err}"
    expected = json.loads(path.read_text(encoding="utf-8"))
    diffs = harness.diff(expected, doc)
    if diffs:
        shown = "\n".join(diffs[:80]) + (f"\n... {len(diffs) - 80} more" if len(diffs) > 80 else "")
        ran = sorted(harness.LAST_RUN_INFO.get("lensbench_files", []))
        pytest.fail(f"{name}: {len(diffs)} difference(s) from {path.name} (lensbench run: {ran})"
                    + (f"\n(stderr of failed steps:\n{err[-4000:]})" if err else "") + f"\n{shown}", pytrace=False)
    assert not err, f"{name}: {err[-4000:]}"
