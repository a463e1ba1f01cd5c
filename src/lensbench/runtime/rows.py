"""One row of the run store: its checks before it is queued, and a read-only count of a store's replies.

A row is checked field by field when it is queued (:func:`make_row`), so one that SQLite could not
store as its column means it (a list as reply text from a broken replay file, a string latency,
usage that is not JSON) is refused alone (:class:`BadRow`) and never reaches a transaction with
other replies (issue 20: one such row lost a whole commit batch).
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from lensbench.core.types import StoredResponse

__all__ = ["BadRow", "make_row", "count_ok"]


class BadRow(ValueError):
    """A response whose fields SQLite cannot store (e.g. a list as reply text); names the request and field."""


#: what each field of a row may be (exact types: bool is not a number here); anything else is a BadRow
_STR, _OPT_STR, _OPT_NUM = frozenset({str}), frozenset({str, type(None)}), frozenset({int, float, type(None)})
_FIELDS = ("key", "request id", "role", "status", "reply text", "reasoning", "error", "attempts", "latency_s",
           "finish_reason", "usage", "request", "created")
_WANT = (_STR, _STR, _STR, _STR, _OPT_STR, _OPT_STR, _OPT_STR, frozenset({int}), _OPT_NUM, _OPT_STR, _OPT_STR,
         _OPT_STR, frozenset({float}))
_WANT_TEXT = {_STR: "a string", _OPT_STR: "a string", _OPT_NUM: "a number", frozenset({int}): "an integer",
              frozenset({float}): "a number"}


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def make_row(resp: StoredResponse, role: str, request_json: str | None) -> tuple:
    """The store row of ``resp`` (the columns of ``responses`` in order, ``created`` now); raises
    :class:`BadRow` naming the request and the field SQLite would not store as its column means it."""
    try:
        usage = json.dumps(resp.usage, allow_nan=False) if resp.usage else None
    except (TypeError, ValueError) as exc:
        raise BadRow(f"request {resp.request_id!r}: its usage is not JSON ({exc}); the reply cannot be "
                     "stored") from None
    row = (resp.key, resp.request_id, role, resp.status, resp.text, resp.reasoning, resp.error, resp.attempts,
           resp.latency_s, resp.finish_reason, usage, request_json, time.time())
    for name, v, want in zip(_FIELDS, row, _WANT):
        if type(v) not in want:
            raise BadRow(f"request {resp.request_id!r}: its {name} is {type(v).__name__} ({_short(v)}), not "
                         f"{_WANT_TEXT[want]}; the reply cannot be stored")
    if resp.status not in ("ok", "error"):
        raise BadRow(f"request {resp.request_id!r}: status {resp.status!r} is neither 'ok' nor 'error'")
    return row


def count_ok(run_dir: str | Path) -> int | None:
    """Replies (``ok`` rows) in ``run_dir``'s store, read without writing anything; None when unreadable."""
    try:
        con = sqlite3.connect(f"file:{Path(run_dir) / 'responses.sqlite'}?mode=ro", uri=True)
        try:
            return con.execute("SELECT COUNT(*) FROM responses WHERE status = 'ok'").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return None
