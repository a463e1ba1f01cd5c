"""Model backend providers: spec prefix -> lazy factory, in one explicit table.

A model is named by a spec ``PREFIX[:ARG]`` (``openai:gpt-4o``, ``replay:results.json``,
``random``, ``constant:Yes``, ``llamacpp:model.gguf``). Each entry names the module and the
factory ``make(arg, config) -> Backend`` inside it; the module is imported only when a spec
with that prefix is built, so heavy optional dependencies load only when used.

Adding a backend = one module in this package with a ``make`` function + one line below. Another
installed package adds one without editing lensbench, through the entry-point group
``lensbench.backends`` (the way inspect's ``@modelapi`` extends inspect): its factory, marked with
:func:`model_backend`, is named under the spec prefix in the package's metadata,

    [project.entry-points."lensbench.backends"]
    mymodel = "mypkg.backend:make"

and ``--model mymodel:ARG`` builds it (the package is imported only then, or by ``lensbench list``).
A built-in prefix is never taken over by a package.

A package's backend cannot take a run down (issue 30 item 5): one that cannot be imported or built
is a one-line ConfigError naming it; what it builds is wrapped (:class:`PluginBackend`) so that a
call returning None, no text, a non-str text or anything but a
:class:`~lensbench.core.types.Completion`, or raising an exception that is not a TransportError, is
a server failure of that request (a retryable TransportError: retried, then an ``error`` outcome).

Model arguments (``--model-arg KEY=VALUE`` / ``-M``, ``model_args`` in an eval config; like
lmms-eval's ``--model_args`` and inspect's ``-M``): a backend that takes them names its settings
model in ``args`` (``"module:Model"``, whose fields are the keys); :func:`apply_model_args` puts
them on the spec's query string (``hf:PATH`` + ``-M dtype=bfloat16`` = ``hf:PATH?dtype=bfloat16``),
where the backend validates them as any spec key. :func:`model_args_doc` lists every backend's keys.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import Any, NamedTuple
from urllib.parse import parse_qsl, urlencode

from pydantic import BaseModel

from lensbench.backends.base import Backend, BackendConfig
from lensbench.backends.plugin import PluginBackend
from lensbench.core.configcheck import type_text
from lensbench.core.errors import ConfigError

__all__ = ["Provider", "PluginBackend", "PROVIDERS", "ENTRY_POINT_GROUP", "model_backend", "provider", "providers", "make_backend",
           "apply_model_args", "model_args_of", "model_args_doc"]


class Provider(NamedTuple):
    """One backend family: ``target`` is ``"module:function"``; ``help`` is shown by ``lensbench list``;
    ``args`` is ``"module:Model"`` of the pydantic model whose fields are its model arguments (None: none);
    ``error``: why an installed package's backend cannot be loaded (``"RuntimeError: boom"``), else None."""

    target: str
    help: str
    args: str | None = None
    error: str | None = None


PROVIDERS: dict[str, Provider] = {
    "openai": Provider("lensbench.backends.openai_compat:make",
                       "OpenAI-compatible chat completions: openai:MODEL [--base-url URL ...]"),
    "replay": Provider("lensbench.backends.replay:make",
                       "recorded replies: replay:PATH (lensbench export JSONL or RGB-Th-Bench result files)"),
    "predictions": Provider("lensbench.backends.replay:make",
                            "another harness's predictions: predictions:PATH (VLMEvalKit .xlsx/.tsv, lmms-eval "
                            "--log_samples .jsonl; docs/interop.md)"),
    "llamacpp": Provider("lensbench.backends.llamacpp:make",
                         "local GGUF model via llama.cpp (xllamacpp): llamacpp:PATH.gguf[?ctx=8192&parallel=2&threads=N]",
                         "lensbench.backends.llamacpp:LlamaCppSettings"),
    "vllm": Provider("lensbench.backends.engines:make_vllm",
                     "vLLM server launched for you: vllm:MODEL_OR_PATH[?KEY=VALUE&...], keys: tp dp max_len dtype "
                     "gpu_mem revision args exe startup_timeout_s log (docs/cluster.md)",
                     "lensbench.backends.engines:EngineSettings"),
    "sglang": Provider("lensbench.backends.engines:make_sglang",
                       "SGLang server launched for you: sglang:MODEL_OR_PATH[?KEY=VALUE&...], same keys as vllm:",
                       "lensbench.backends.engines:EngineSettings"),
    "hf": Provider("lensbench.backends.hf:make",
                   "local image-text model in-process via transformers: hf:PATH_OR_ID[?dtype=bfloat16&device=cuda&attn=sdpa&batch=16]",
                   "lensbench.backends.hf_spec:HFSettings"),
    "random": Provider("lensbench.backends.baselines:make_random",
                       "seeded uniform answers over the benchmark's answer space (use --seed)"),
    "constant": Provider("lensbench.backends.baselines:make_constant", "always the same answer: constant:ANSWER"),
}


#: the entry-point group through which other installed packages add model backends (``PREFIX = "module:make"``)
ENTRY_POINT_GROUP = "lensbench.backends"


def model_backend(*, help: str = "", args: type[BaseModel] | None = None) -> Callable:
    """Mark ``make(arg: str, config: BackendConfig) -> Backend`` as the factory of a model backend that
    another package adds through the ``lensbench.backends`` entry points (see the module docstring).

    ``help``: one line for ``lensbench list``; ``args``: the pydantic model whose fields are the backend's
    model arguments (``-M KEY=VALUE``, put on the spec's query string like the built-in ones). A factory
    named in the entry points without this mark works too, with no help and no model arguments.
    """
    def mark(make: Callable) -> Callable:
        make.lensbench_provider = Provider(f"{make.__module__}:{make.__qualname__}", help,
                                           f"{args.__module__}:{args.__qualname__}" if args is not None else None)
        return make

    return mark


def _installed() -> dict[str, EntryPoint]:
    """Backends other packages add (prefix -> entry point); a built-in prefix is not taken over."""
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name not in PROVIDERS}


def _load(ep: EntryPoint) -> Provider:
    """The :class:`Provider` of an installed backend (its module imported). Raises ConfigError naming the
    package when it cannot be loaded."""
    try:
        make = ep.load()
    except Exception as exc:  # noqa: BLE001 - another package's import error, reported as a bad setting
        why = f"{type(exc).__name__}: {exc}"
        err = ConfigError(f"model backend {ep.name!r} of the package {_dist(ep)!r} cannot be loaded from {ep.value} "
                          f"({why})")
        err.reason = why
        raise err from None
    return getattr(make, "lensbench_provider", None) or Provider(ep.value, f"(from {ep.value})")


def provider(prefix: str) -> Provider | None:
    """The provider of spec prefix ``prefix``: built in, or added by an installed package (None: neither).
    Raises ConfigError when an installed one cannot be loaded."""
    if prefix in PROVIDERS:
        return PROVIDERS[prefix]
    ep = _installed().get(prefix) if prefix else None
    return _load(ep) if ep is not None else None


def providers() -> dict[str, Provider]:
    """Every provider: the built-in table, then the installed packages' backends (imported now) by prefix;
    one that cannot be loaded says so in its help."""
    out = dict(PROVIDERS)
    for name, ep in sorted(_installed().items()):
        try:
            out[name] = _load(ep)
        except ConfigError as exc:
            out[name] = Provider(ep.value, f"cannot be loaded: {exc}", error=getattr(exc, "reason", str(exc)))
    return out


def _dist(ep: EntryPoint) -> str:
    return ep.dist.name if ep.dist is not None else "?"


def make_backend(spec: str, config: BackendConfig | None = None) -> Backend:
    """Build the backend for ``spec`` (``PREFIX[:ARG]``).

    Raises:
        ConfigError: unknown prefix (lists the known ones), a bad argument, or an installed package's
        backend that cannot be loaded or does not build a :class:`~lensbench.backends.base.Backend`.
    """
    prefix, _, arg = spec.partition(":")
    prov = provider(prefix)
    if prov is None:
        head, sep, rest = spec.partition("/")  # lmms-eval / litellm write provider/model: openai/gpt-4o
        hint = f" (did you mean {head}:{rest}?)" if sep and ":" not in head and provider(head) is not None else ""
        raise ConfigError(f"unknown model backend {prefix!r} in --model {spec!r}{hint}; known: "
                          f"{', '.join(sorted([*PROVIDERS, *_installed()]))}")
    mod, _, fn = prov.target.partition(":")
    make = getattr(importlib.import_module(mod), fn)
    if prefix in PROVIDERS:
        backend = make(arg, config or BackendConfig())
    else:
        try:
            backend = make(arg, config or BackendConfig())
        except ConfigError:
            raise
        except Exception as exc:  # noqa: BLE001 - another package's factory failing: one line, no traceback
            ep = _installed()[prefix]
            raise ConfigError(f"model backend {prefix!r} of the package {_dist(ep)!r} cannot be built: "
                              f"{type(exc).__name__}: {exc}") from None
    if not isinstance(backend, Backend):
        raise ConfigError(f"--model {spec!r}: {prov.target} returned {type(backend).__name__}, not a lensbench "
                          "Backend (lensbench.backends.base.Backend)")
    return backend if prefix in PROVIDERS else PluginBackend(backend, prefix)


def model_args_of(prefix: str, prov: Provider | None = None) -> dict[str, Any] | None:
    """The model-argument fields (name -> pydantic FieldInfo) of backend ``prefix`` (whose provider ``prov`` is,
    when already looked up); None when it takes none."""
    prov = prov or provider(prefix)
    if prov is None or prov.args is None:
        return None
    mod, _, cls = prov.args.partition(":")
    return dict(getattr(importlib.import_module(mod), cls).model_fields)


def apply_model_args(spec: str, args: list[str], flag: str = "--model-arg") -> str:
    """``spec`` with the ``KEY=VALUE`` items of ``args`` added to its query string.

    Raises ConfigError when the backend takes no arguments, an item is not ``KEY=VALUE``, a key is
    given twice (also in the spec's own query) or is unknown (the known keys are listed).
    """
    if not args:
        return spec
    prefix, _, arg = spec.partition(":")
    known = model_args_of(prefix)
    if known is None:
        takes = ", ".join(f"{p}:" for p, v in providers().items() if v.args)
        raise ConfigError(f"{flag}: the {prefix}: backend takes no model arguments (backends that do: {takes})"
                          + ("; request fields go in --extra-body" if prefix == "openai" else ""))
    _src, sep, query = arg.partition("?")
    have = {k for k, _v in parse_qsl(query, keep_blank_values=True)} if sep else set()
    pairs: list[tuple[str, str]] = []
    for item in args:
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ConfigError(f"{flag} {item!r}: give KEY=VALUE")
        if key not in known:
            raise ConfigError(f"{flag} {key}: unknown argument of {prefix}:; known: {', '.join(known)}")
        if key in have or any(k == key for k, _ in pairs):
            raise ConfigError(f"{flag} {key}: given twice (in the spec and as an argument, or twice)")
        pairs.append((key, value))
    return spec + ("&" if sep else "?") + urlencode(pairs)


def model_args_doc() -> str:
    """Markdown: per backend that takes model arguments, each key with its type, default and description."""
    lines = ["# Model arguments (`--model-arg KEY=VALUE`, `-M KEY=VALUE`)", "",
             "Generated from the backends' settings models (`lensbench.backends.providers.model_args_doc`; a test "
             "keeps this file in step). The same keys can ride on the spec (`hf:PATH?dtype=bfloat16`); in a "
             "`lensbench eval` config they are a model's `model_args` table. `openai:`, `replay:`, `random` and "
             "`constant:` take none (request fields go in `--extra-body`).", "",
             "A judge or answer parser takes its backend's keys the same way: `--judge-model-arg KEY=VALUE` (e.g. "
             "`--judge-model llamacpp:judge.gguf --judge-model-arg ctx=4096`; in a `lensbench eval` config the "
             "`judge_model_arg` table or list, beside `judge_model`). Like the other judge flags it is refused "
             "where the benchmark has no judge round.", ""]
    for prefix, prov in PROVIDERS.items():
        fields = model_args_of(prefix)
        if fields is None:
            continue
        lines += [f"## `{prefix}:`", "", prov.help, "", "| key | type | default | what |", "|---|---|---|---|"]
        for name, f in fields.items():
            ann = type_text(f.annotation).replace("|", "/")
            default = "" if f.is_required() else repr(f.default)
            lines.append(f"| `{name}` | {ann} | {default} | {(f.description or '').replace('|', '/')} |")
        lines.append("")
    return "\n".join(lines)
