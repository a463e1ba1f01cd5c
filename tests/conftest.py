"""Shared fixtures: the real data beside the checkout (``../shared/data``), skipped when absent."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

# A suite started in the background by a non-interactive shell (`cmd &`, nohup) inherits SIGINT ignored, and
# so would every lensbench process the tests start: the Ctrl-C tests would then see a run that cannot be
# interrupted. Handle SIGINT here so that children start with the default disposition, as from a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

SHARED_DATA = Path(os.environ.get("LENSBENCH_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` (or $LENSBENCH_SHARED_DATA); skips the test when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def rgbth_data(shared_data) -> Path:
    """The RGB-Th-Bench release folder (``Source */<scene>/questions.json``)."""
    p = shared_data / "RGB-Th-Bench" / "RGB-Th-Bench" / "Data"
    if not p.is_dir():
        pytest.skip(f"RGB-Th-Bench data not found at {p}")
    return p


@pytest.fixture(scope="session")
def rgbth_gen(tmp_path_factory) -> Path:
    """A generated RGB-Th-Bench ``Data`` folder (6 scenes x 8 skills x 4 questions = 192 questions, 48 units):
    core tests run on it, never on ../shared/data."""
    from lensbench.benchmarks.rgbth.demo import write_release as make_rgbth_release

    return make_rgbth_release(tmp_path_factory.mktemp("rgbth-gen"), n_scenes=6, questions_per_unit=4)


@pytest.fixture(scope="session")
def cli():
    """``cli("run", ..., env=None, cwd=None, input=None, columns=None)``: run ``lensbench`` in this process and get a
    :class:`subprocess.CompletedProcess` (``returncode``, ``stdout``, ``stderr``) as from a real process
    (``tests/clirun.py`` says what is kept equal and what is put back); ``clirun.real_cli`` starts a real one."""
    from clirun import run_cli

    return run_cli


@pytest.fixture
def contract_bench(request, tmp_path_factory):
    """``(name, class)`` of the benchmark a contract test is parametrized with (``tests/contract.py``:
    ``parametrize("contract_bench", contract_names(), indirect=True)``); the toy plugin is installed while
    the test runs."""
    from contract import TOY, toy_installed

    from lensbench.benchmarks.registry import get_benchmark

    name = request.param
    if name == TOY:
        with toy_installed(tmp_path_factory.mktemp("site")):
            yield name, get_benchmark(name)
    else:
        yield name, get_benchmark(name)
