"""Secret-looking keys and unknown-key suggestions (lensbench.core.configcheck)."""

from __future__ import annotations

import json

import pytest

from lensbench.core.configcheck import find_secrets, is_secret_key, unknown_key

SECRET = ["auth", "credentials", "creds", "passwd", "password", "token", "api_key", "apiKey", "APIKey", "api-key",
          "X-Api-Key", "x_api_key", "secret", "client_secret", "access_token", "refresh_token", "hf_token", "HF_TOKEN",
          "Authorization", "bearer", "private_key", "cookie", "key", "apikey", "openai_api_key", "auth_header", "jwt"]
NOT_SECRET = ["max_token", "max_tokens", "max_new_tokens", "max_completion_tokens", "api_key_env", "judge_api_key_env",
              "hf_token_env", "stop_token_ids", "skip_special_tokens", "eos_token", "top_k", "author", "monkey",
              "sort_key", "tokens", "chat_template_kwargs", "enable_thinking", "model", "base_url"]


@pytest.mark.parametrize("key", SECRET)
def test_secret_keys(key):
    assert is_secret_key(key)


@pytest.mark.parametrize("key", NOT_SECRET)
def test_not_secret_keys(key):
    assert not is_secret_key(key)


def test_find_secrets_walks_lists_dicts_and_extra_body_json():
    doc = {"model": [{"name": "a", "settings": {"extra_body": json.dumps({"x": [{"passwd": 1}], "max_token": 3})}}],
           "benchmark": [{"options": {"deep": {"token": "t"}}}], "api_key_env": "K"}
    assert find_secrets(doc) == ["model[0].settings.extra_body.x[0].passwd", "benchmark[0].options.deep.token"]
    assert find_secrets({"extra_body": "{not json"}) == []


def test_unknown_key_names_the_nearest():
    assert unknown_key("a.", "limt", ["limit", "seed"]) == "a.limt: unknown key (did you mean 'limit'?)"
    assert unknown_key("", "zzz", ["limit"]) == "zzz: unknown key"
