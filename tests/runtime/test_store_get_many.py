"""RunStore.get_many reads rows back without holding copies of what the caller has (issue 11 memory)."""

from __future__ import annotations

from lensbench.core.types import Message, Request, StoredResponse, TextPart
from lensbench.runtime.store import RunStore


def _req(i: int) -> Request:
    return Request(id=f"q{i}", messages=(Message(parts=(TextPart(text=f"question {i}"),)),))


def test_rows_read_back_equal_and_share_strings(tmp_path):
    reqs = {f"{i:064x}": _req(i) for i in range(3)}
    long = "x" * 65
    with RunStore(tmp_path) as st:
        for n, (k, r) in enumerate(reqs.items()):
            st.put(StoredResponse(key=k, request_id=r.id, status="ok", text=long if n == 2 else "Yes",
                                  attempts=2, latency_s=0.25, finish_reason="stop",
                                  usage={"prompt_tokens": 10 + n, "total_tokens": 11 + n}))
        # keys built again: equal strings, other objects than the mapping's keys
        asked = {"".join(list(k)): r for k, r in reqs.items()}
        got = st.get_many(asked)
        plain = st.get_many(list(reqs))
    assert set(got) == set(reqs)
    for n, (k, r) in enumerate(reqs.items()):
        g = got[k]
        assert (g.key, g.request_id, g.status, g.text, g.attempts, g.latency_s, g.finish_reason, g.usage) == \
            (k, f"q{n}", "ok", long if n == 2 else "Yes", 2, 0.25, "stop",
             {"prompt_tokens": 10 + n, "total_tokens": 11 + n})
        assert g == plain[k]
        mine = next(a for a in asked if a == k)
        assert g.key is mine  # the caller's key string, not a copy from SQLite
        assert g.request_id is r.id  # the request's id string
    a, b, c = (got[k] for k in reqs)
    assert a.text is b.text and a.finish_reason is b.finish_reason  # one string per distinct short value
    assert c.text is not got[next(iter(reqs))].text
    assert a.usage is not b.usage  # usage dicts are not shared (callers may keep and change them)
    ka, kb = list(a.usage), list(b.usage)
    assert all(x is y for x, y in zip(ka, kb))  # but their key strings are


def test_request_id_differs_from_mapping(tmp_path):
    # the row was stored by another request with the same content: its own id is kept
    k = "f" * 64
    with RunStore(tmp_path) as st:
        st.put(StoredResponse(key=k, request_id="first-asker", status="error", text=None, error="HTTP 500"))
        got = st.get_many({k: _req(9)})
    assert got[k].request_id == "first-asker" and got[k].status == "error" and got[k].error == "HTTP 500"
    assert got[k].usage == {} and not got[k].ok
