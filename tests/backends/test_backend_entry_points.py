"""Model backends added by other installed packages, through the entry-point group ``lensbench.backends``
(issue 21; the way inspect's ``@modelapi`` extends inspect). A throwaway distribution (a ``.dist-info`` with
``entry_points.txt`` beside its module, in a temporary folder on ``sys.path``) adds the ``echo:`` backend."""

from __future__ import annotations

import json
import os
import sys
import textwrap

import pytest

from clirun import run_cli
from lensbench.backends.base import BackendConfig
from lensbench.backends.providers import (PROVIDERS, PluginBackend, apply_model_args, make_backend, provider,
                                         providers)
from lensbench.core.errors import ConfigError

MODULE = '''
from urllib.parse import parse_qsl

from pydantic import BaseModel

from lensbench.backends.base import Backend
from lensbench.backends.providers import model_backend
from lensbench.core.types import Completion


class EchoSettings(BaseModel):
    suffix: str = ""


class Echo(Backend):
    def __init__(self, answer, settings):
        self.answer, self.settings = answer, settings
        self.fingerprint = f"echo:{answer}:{settings.suffix}"
        self.display_name = "echo"

    async def generate(self, request):
        return Completion(text=self.answer + self.settings.suffix, finish_reason="stop")


@model_backend(help="always answers ARG: echo:ARG", args=EchoSettings)
def make(arg, config):
    answer, _, query = arg.partition("?")
    return Echo(answer, EchoSettings(**dict(parse_qsl(query))))


def make_plain(arg, config):  # named in the entry points without the mark
    return Echo(arg or "plain", EchoSettings())


def make_wrong(arg, config):
    return "not a backend"
'''

ENTRY_POINTS = """
[lensbench.backends]
echo = {mod}:make
plain = {mod}:make_plain
wrong = {mod}:make_wrong
broken = {mod}_missing:make
openai = {mod}:make
"""


@pytest.fixture
def plugin(tmp_path, monkeypatch, request):
    """The folder holding the throwaway distribution (on sys.path) and its module name (one per test)."""
    mod = f"lensbench_echo_{request.node.name.replace('[', '_').replace(']', '').replace('-', '_')}"
    (tmp_path / f"{mod}.py").write_text(textwrap.dedent(MODULE))
    info = tmp_path / f"{mod}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {mod}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS.format(mod=mod))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path, mod
    sys.modules.pop(mod, None)


def test_an_installed_backend_is_built_from_its_prefix(plugin):
    _folder, mod = plugin
    b = make_backend("echo:Yes", BackendConfig())
    # held to the Backend contract at every call (issue 30 item 5), the package's own backend inside
    assert isinstance(b, PluginBackend) and type(b.inner).__module__ == mod and b.fingerprint == "echo:Yes:"
    assert make_backend("plain:").answer == "plain"
    # its model arguments ride on the spec as the built-in ones do
    spec = apply_model_args("echo:Yes", ["suffix=!"])
    assert spec == "echo:Yes?suffix=%21" and make_backend(spec).settings.suffix == "!"
    with pytest.raises(ConfigError, match="unknown argument of echo:; known: suffix"):
        apply_model_args("echo:Yes", ["colour=red"])


def test_listed_with_help_and_arguments_and_the_built_ins_keep_their_prefix(plugin):
    _folder, mod = plugin
    every = providers()
    assert list(every)[:len(PROVIDERS)] == list(PROVIDERS)  # built-ins first, as they are
    assert every["echo"].help == "always answers ARG: echo:ARG" and every["echo"].args == f"{mod}:EchoSettings"
    assert every["plain"].help == f"(from {mod}:make_plain)"
    assert "cannot be loaded" in every["broken"].help
    assert provider("openai") is PROVIDERS["openai"]  # a package cannot take over a built-in prefix
    with pytest.raises(ConfigError, match=r"unknown model backend 'nope'.*\becho\b.*\bplain\b"):
        make_backend("nope:x")


def test_a_broken_or_wrong_package_backend_is_a_clear_error(plugin):
    _folder, mod = plugin
    with pytest.raises(ConfigError, match=rf"model backend 'broken' of the package '{mod}' cannot be loaded from "
                                          rf"{mod}_missing:make \(ModuleNotFoundError"):
        make_backend("broken:x")
    with pytest.raises(ConfigError, match=rf"--model 'wrong:x': {mod}:make_wrong returned str, not a lensbench Backend"):
        make_backend("wrong:x")


def test_nothing_installed_nothing_added():
    assert provider("echo") is None and set(providers()) >= set(PROVIDERS)


def test_a_run_and_the_list_through_an_installed_backend(plugin, rgbth_gen, tmp_path):
    folder, _mod = plugin
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])}
    r = run_cli("run", "rgb-th-bench", "--data-dir", str(rgbth_gen), "--model", "echo:Yes", "-M", "suffix=.", "--limit",
                "3", "--out", str(tmp_path / "run"), "--no-progress", "--format", "json", env=env)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["model"] == "echo" and res["counts"]["n_error"] == 0
    replies = {json.loads(x)["reply"] for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()}
    assert replies == {"Yes."}
    r = run_cli("list", "--json", env=env)
    listed = {b["prefix"]: b for b in json.loads(r.stdout)["backends"]}
    assert listed["echo"]["model_args"] == ["suffix"] and listed["echo"]["help"] == "always answers ARG: echo:ARG"
