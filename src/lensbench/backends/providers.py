"""Model backend providers: spec prefix -> lazy factory, in one explicit table.

A model is named by a spec ``PREFIX[:ARG]`` (``openai:gpt-4o``, ``replay:results.json``,
``random``, ``constant:Yes``, ``llamacpp:model.gguf``). Each entry names the module and the
factory ``make(arg, config) -> Backend`` inside it; the module is imported only when a spec
with that prefix is built, so heavy optional dependencies load only when used.

Adding a backend = one module in this package with a ``make`` function + one line below.
"""

from __future__ import annotations

import importlib
from typing import NamedTuple

from lensbench.backends.base import Backend, BackendConfig
from lensbench.core.errors import ConfigError

__all__ = ["Provider", "PROVIDERS", "make_backend"]


class Provider(NamedTuple):
    """One backend family: ``target`` is ``"module:function"``; ``help`` is shown by ``lensbench list``."""

    target: str
    help: str


PROVIDERS: dict[str, Provider] = {
    "openai": Provider("lensbench.backends.openai_compat:make",
                       "OpenAI-compatible chat completions: openai:MODEL [--base-url URL ...]"),
    "replay": Provider("lensbench.backends.replay:make",
                       "recorded replies: replay:PATH (lensbench export JSONL or RGB-Th-Bench result files)"),
    "llamacpp": Provider("lensbench.backends.llamacpp:make",
                         "local GGUF model via llama.cpp (xllamacpp): llamacpp:PATH.gguf[?ctx=8192&parallel=2&threads=N]"),
    "vllm": Provider("lensbench.backends.engines:make_vllm",
                     "vLLM server launched for you: vllm:MODEL_OR_PATH[?KEY=VALUE&...], keys: tp dp max_len dtype "
                     "gpu_mem revision args exe startup_timeout_s log (docs/cluster.md)"),
    "sglang": Provider("lensbench.backends.engines:make_sglang",
                       "SGLang server launched for you: sglang:MODEL_OR_PATH[?KEY=VALUE&...], same keys as vllm:"),
    "hf": Provider("lensbench.backends.hf:make",
                   "local image-text model in-process via transformers: hf:PATH_OR_ID[?dtype=bfloat16&device=cuda&attn=sdpa&batch=16]"),
    "random": Provider("lensbench.backends.baselines:make_random",
                       "seeded uniform answers over the benchmark's answer space (use --seed)"),
    "constant": Provider("lensbench.backends.baselines:make_constant", "always the same answer: constant:ANSWER"),
}


def make_backend(spec: str, config: BackendConfig | None = None) -> Backend:
    """Build the backend for ``spec`` (``PREFIX[:ARG]``).

    Raises:
        ConfigError: unknown prefix (lists the known ones) or a bad argument.
    """
    prefix, _, arg = spec.partition(":")
    prov = PROVIDERS.get(prefix)
    if prov is None:
        raise ConfigError(f"unknown model backend {prefix!r} in --model {spec!r}; known: {', '.join(sorted(PROVIDERS))}")
    mod, _, fn = prov.target.partition(":")
    return getattr(importlib.import_module(mod), fn)(arg, config or BackendConfig())
