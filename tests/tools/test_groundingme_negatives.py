"""GroundingME rejection negatives (Sec. 5.3): source reading, the LLM edit round, NEG:POS mixing
and ``lensbench groundingme negatives`` through the engine and a fake server."""

from __future__ import annotations

import asyncio
import json

import pytest
from typer.testing import CliRunner

from lensbench.cli.main import app
from lensbench.core.errors import ConfigError, DataError
from lensbench.core.types import StoredResponse
from lensbench.testing.server import FakeOpenAIServer
from lensbench.tools.groundingme import negatives as gm




def test_negative_prompt_and_source_errors(tmp_path):
    t = gm.negative_template()
    assert "{description}" in t and "{attribute}" in t and not t.startswith("GroundingME rejection")
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps([{"bbox": [1, 2, 3, 4]}]))
    with pytest.raises(DataError, match="no description"):
        gm.read_refexp_source(bad)
    with pytest.raises(DataError, match="not found"):
        gm.read_refexp_source(tmp_path / "missing.json")


