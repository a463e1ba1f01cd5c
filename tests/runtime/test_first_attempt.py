"""Issue 32.1: a first attempt that stored nothing never blocks the corrected command; transport settings
never block a resume; a setting that changes replies is named with both values."""

from __future__ import annotations

import pytest

import lensbench
from lensbench.core.errors import ConfigError
from lensbench.runtime.engine import EndpointDown
from lensbench.testing.server import FakeOpenAIServer


def test_a_wrong_url_then_the_right_one_reuses_the_folder(rgbth_gen, tmp_path):
    out = tmp_path / "run"
    with pytest.raises(EndpointDown, match="connection refused at .* cannot be reached"):
        lensbench.run("rgb-th-bench", model="openai:m", base_url=["http://127.0.0.1:9/v1"], data_dir=rgbth_gen,
                      out=out, limit=5)
    assert (out / "run.json").exists()
    with FakeOpenAIServer(lambda body: "Yes") as srv:
        res = lensbench.run("rgb-th-bench", model="openai:m", base_url=[srv.url], data_dir=rgbth_gen, out=out,
                            limit=5, temperature=0.3)  # nothing stored: even a reply-changing setting reuses it
        assert res.counts.get("n_error", 0) == 0 and sum(srv.answered.values()) == 20


def test_transport_settings_never_block_a_resume_and_reply_settings_are_named(rgbth_gen, tmp_path):
    out = tmp_path / "run"
    with FakeOpenAIServer(lambda body: "Yes") as a, FakeOpenAIServer(lambda body: "Yes") as b:
        lensbench.run("rgb-th-bench", model="openai:m", base_url=[a.url], data_dir=rgbth_gen, out=out, limit=5)
        res = lensbench.run("rgb-th-bench", model="openai:m", base_url=[b.url, a.url], data_dir=rgbth_gen, out=out,
                            limit=8, concurrency=3, timeout_s=42.0)
        assert res.counts.get("n_error", 0) == 0 and sum(b.answered.values()) + sum(a.answered.values()) == 32  # 20 cached, 12 sent
        with pytest.raises(ConfigError, match=r"temperature=0.5 \(the folder's run: unset\)"):
            lensbench.run("rgb-th-bench", model="openai:m", base_url=[b.url], data_dir=rgbth_gen, out=out,
                          temperature=0.5)


def test_a_folder_whose_replies_were_deleted_still_asks(rgbth_gen, tmp_path):
    out = tmp_path / "run"
    with FakeOpenAIServer(lambda body: "Yes") as srv:
        lensbench.run("rgb-th-bench", model="openai:m", base_url=[srv.url], data_dir=rgbth_gen, out=out, limit=4)
        for p in out.glob("responses.sqlite*"):
            p.unlink()
        with pytest.raises(ConfigError, match=r"holds an earlier run with replies .* is missing.*yes=True"):
            lensbench.run("rgb-th-bench", model="openai:m", base_url=[srv.url], data_dir=rgbth_gen, out=out, limit=4)
