"""Checks on user-written config documents: unknown keys (with the nearest valid one) and secrets.

Two rules every config reader applies before anything is sent (docs/protocol.md: bad input is refused naming
the file and field; DESIGN: secrets come from the environment, never written to run folders):

* :func:`unknown_key` — a key that is not a field is refused with the closest field name
  (``difflib``), so ``limt = 2`` is never silently dropped.
* :func:`find_secrets` — a key that names a credential (``api_key``, ``token``, ``password``,
  ``auth``, ``credentials`` ...) anywhere in a document, including inside a JSON ``extra_body``
  string, is refused. Names of environment variables (``api_key_env``) and token counts
  (``max_tokens``, ``max_token``, ``stop_token_ids``) are not secrets.
"""

from __future__ import annotations

import difflib
import json
import re
import types
import typing
from collections.abc import Iterable
from typing import Any

__all__ = ["unknown_key", "is_secret_key", "find_secrets", "SECRET_HINT", "type_text"]

#: the advice every secret refusal ends with
SECRET_HINT = ("secrets never go in the config or a run folder; put the key in an environment variable and name "
               "it with api_key_env")

#: words that name a credential wherever they appear in a key (whole words, case-insensitive)
_SECRET_WORDS = frozenset({
    "apikey", "accesskey", "privatekey", "secretkey", "auth", "authorization", "authentication", "oauth", "bearer",
    "cookie", "cookies", "credential", "credentials", "creds", "passwd", "password", "passphrase", "pwd", "secret",
    "secrets", "token", "jwt"})
#: a word before ``token`` that makes it a count or a vocabulary entry, not a credential (``max_token``)
_TOKEN_QUALIFIERS = frozenset({"max", "min", "num", "n", "new", "stop", "eos", "bos", "pad", "unk", "sep", "cls",
                               "mask", "special", "start", "end", "prompt", "completion", "total", "per", "image",
                               "video", "vision", "thinking", "reasoning"})
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def unknown_key(path: str, key: Any, known: Iterable[str]) -> str:
    """``"<path><key>: unknown key (did you mean 'x'?)"`` with the nearest of ``known`` (difflib), if any."""
    near = difflib.get_close_matches(str(key), sorted(known), n=1, cutoff=0.6)
    return f"{path}{key}: unknown key" + (f" (did you mean {near[0]!r}?)" if near else "")


def is_secret_key(key: Any) -> bool:
    """True when ``key`` names a credential (``api_key``, ``apiKey``, ``X-Api-Key``, ``hf_token``,
    ``Authorization``, ``passwd``, ``client_secret`` ...); False for environment-variable names
    (``*_env``) and token counts or vocabulary entries (``max_tokens``, ``max_token``, ``eos_token``)."""
    words = [w.lower() for w in _WORD.findall(str(key))]
    if not words or words[-1] == "env":
        return False
    joined = "".join(words)
    if joined in _SECRET_WORDS or words[-1] == "key" and (len(words) == 1 or words[-2] in {"api", "access", "private",
                                                                                          "secret", "client", "x"}):
        return True
    for i, w in enumerate(words):
        if w == "token" and any(q in _TOKEN_QUALIFIERS for q in words[:i]):
            continue
        if w in _SECRET_WORDS or w == "api" and i + 1 < len(words) and words[i + 1] == "key":
            return True
    return False


def find_secrets(doc: Any, where: str = "") -> list[str]:
    """Key paths in ``doc`` (dicts / lists, as read from TOML, YAML or JSON) that hold a secret.

    A string value under a key named ``extra_body`` is read as JSON and searched too (it is merged
    into every request body, so it reaches the store and ``run.json``). Paths look like
    ``model[0].settings.extra_body.api_key``.
    """
    found: list[str] = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            path = f"{where}.{k}" if where else str(k)
            if is_secret_key(k):
                found.append(path)
                continue
            if str(k) == "extra_body" and isinstance(v, str):
                try:
                    v = json.loads(v)
                except ValueError:
                    continue  # not JSON: the field's own validation says so
            found.extend(find_secrets(v, path))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            found.extend(find_secrets(v, f"{where}[{i}]"))
    return found


def type_text(ann: Any) -> str:
    """A field annotation in words for generated references: ``int``, ``int or none``, ``a|b|c``,
    ``list of str``, ``table``, ``path``."""
    origin = typing.get_origin(ann)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(ann) if a is not type(None)]
        inner = " or ".join(type_text(a) for a in args)
        return inner + " or none" if len(args) < len(typing.get_args(ann)) else inner
    if origin is typing.Literal:
        return "|".join(map(str, typing.get_args(ann)))
    if origin is list:
        args = typing.get_args(ann)
        return "list of " + (type_text(args[0]) if args else "values")
    if origin is dict or ann is dict:
        return "table"
    if getattr(ann, "__name__", "") in ("Path", "PosixPath", "WindowsPath"):
        return "path"
    return getattr(ann, "__name__", None) or str(ann).replace("typing.", "")
