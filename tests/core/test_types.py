"""core/types: the request value types as slotted frozen dataclasses (issue 11 memory).

They replaced pydantic models; these tests pin what must not change (request keys: the identity
of stored replies) and the validation pydantic did that __post_init__ now does.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import pickle
from pathlib import Path

import pytest

from lensbench.core.types import Completion, GenParams, ImagePart, Message, Request, StoredResponse, TextPart

SHA = "ab" * 32


def fixed_request() -> Request:
    img = ImagePart(path="/data/a.jpg", sha256=SHA)
    return Request(id="s1", messages=(Message(role="system", parts=(TextPart(text="Be brief."),)),
                                      Message(role="user", parts=(img, TextPart(text="Is it hot? — “yes”")))),
                   params=GenParams(temperature=0.0, max_tokens=16, extra_body={"seed_note": 1}), repeat=1,
                   meta={"x": 1})


def test_key_unchanged_for_a_fixed_request():
    # the canonical JSON the key hashes, written out by hand (params: every GenParams field)
    canon = {"model": "openai:m@http://x",
             "messages": [{"role": "system", "parts": [{"t": "Be brief."}]},
                          {"role": "user", "parts": [{"img": SHA}, {"t": "Is it hot? — “yes”"}]}],
             "params": {"temperature": 0.0, "top_p": None, "max_tokens": 16, "seed": None,
                        "extra_body": {"seed_note": 1}},
             "repeat": 1}
    want = hashlib.sha256(json.dumps(canon, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()
    got = fixed_request().key_for("openai:m@http://x")
    assert got == want
    # the digest the pydantic implementation gave for this request (commit f1c4ac3)
    assert got == "be981ff34fe9354b558b322469aca45da4b569327a4423dd7c2368c82dba891d"
    plain = Request(id="s2", messages=(Message(parts=(TextPart(text="hi"),)),))
    assert plain.key_for("fp") == "b1abe22411aad495dd938148b4a50c49646306322ffe8c6c25475b73c13e8083"


def test_key_ignores_id_meta_path_and_list_vs_tuple():
    r = fixed_request()
    moved = Request(id="other", messages=[Message(role="system", parts=[TextPart(text="Be brief.")]),
                                          Message(parts=[ImagePart(path="/elsewhere/a.jpg", sha256=SHA),
                                                         TextPart(text="Is it hot? — “yes”")])],
                    params=r.params, repeat=1)
    assert moved.key_for("fp") == r.key_for("fp")
    assert dataclasses.replace(r, repeat=0).key_for("fp") != r.key_for("fp")


def test_lists_become_tuples_and_compare_equal():
    m = Message(parts=[TextPart(text="a"), ImagePart(path="p", sha256=SHA)])
    assert type(m.parts) is tuple
    assert m == Message(parts=(TextPart(text="a"), ImagePart(path="p", sha256=SHA)))
    assert hash(m) == hash(Message(parts=(TextPart(text="a"), ImagePart(path="p", sha256=SHA))))
    r = Request(id="r", messages=[m])
    assert type(r.messages) is tuple and r.messages[0] is m


def test_dicts_read_back_as_parts_messages_and_params():
    r = Request(id="r", messages=[{"role": "user", "parts": [{"type": "image", "path": "p", "sha256": SHA},
                                                             {"text": "q"}]}],
                params={"temperature": 0.7, "seed": 3})
    assert r.messages == (Message(parts=(ImagePart(path="p", sha256=SHA), TextPart(text="q"))),)
    assert r.params == GenParams(temperature=0.7, seed=3)


@pytest.mark.parametrize("make, field", [
    (lambda: Message(role="bot", parts=()), "Message.role"),
    (lambda: Request(id="r", messages=(), role="critic"), "Request.role"),
    (lambda: Request(id="r", messages=(), repeat=-1), "Request.repeat"),
    (lambda: Request(id="r", messages=(), repeat="2"), "Request.repeat"),
    (lambda: Request(id="r", messages=(), repeat=1.5), "Request.repeat"),
    (lambda: Request(id=7, messages=()), "Request.id"),
    (lambda: Request(id="r", messages="hello"), "Request.messages"),
    (lambda: Request(id="r", messages=("hello",)), "Request.messages"),
    (lambda: Request(id="r", messages=(), meta=["x"]), "Request.meta"),
    (lambda: Request(id="r", messages=(), params=0.5), "Request.params"),
    (lambda: TextPart(text=3), "TextPart.text"),
    (lambda: TextPart(type="image", text="x"), "TextPart.type"),
    (lambda: ImagePart(path=Path("a.jpg")), "ImagePart.path"),
    (lambda: ImagePart(type="text", path="a.jpg"), "ImagePart.type"),
    (lambda: ImagePart(path="a.jpg", sha256=None), "ImagePart.sha256"),
    (lambda: ImagePart(path="a.jpg", video=1), "ImagePart.video"),
    (lambda: ImagePart(path="a.jpg", t_s="soon"), "ImagePart.t_s"),
    (lambda: Message(parts=("plain string",)), "Message.parts"),
    (lambda: Message(parts="abc"), "Message.parts"),
])
def test_bad_values_raise_naming_the_field(make, field):
    with pytest.raises(ValueError, match=field.replace(".", r"\.")):
        make()


def test_bad_params_raise_pydantic_error():
    with pytest.raises(ValueError, match="temperature"):
        Request(id="r", messages=(), params={"temperature": -1})


def test_required_and_keyword_only():
    with pytest.raises(TypeError):
        TextPart()  # text is required
    with pytest.raises(TypeError):
        Request("r", ())  # keyword-only, as the pydantic models were


def test_coercions_and_defaults():
    assert ImagePart(path="a.jpg", t_s=2).t_s == 2.0 and type(ImagePart(path="a.jpg", t_s=2).t_s) is float
    assert Request(id="r", messages=(), repeat=2.0).repeat == 2
    a, b = Request(id="a", messages=()), Request(id="b", messages=())
    assert a.params is b.params and a.params == GenParams()
    assert a.role == "model" and a.repeat == 0 and TextPart(text="x").type == "text"


def test_default_meta_is_one_read_only_empty_dict():
    a, b = Request(id="a", messages=()), Request(id="b", messages=())
    assert a.meta is b.meta and a.meta == {} and isinstance(a.meta, dict)
    assert json.dumps(a.meta) == "{}" and {**a.meta, "k": 1} == {"k": 1} and a.meta.get("k") is None
    for mutate in (lambda m: m.__setitem__("k", 1), lambda m: m.update(k=1), lambda m: m.setdefault("k", 1),
                   lambda m: m.pop("k"), lambda m: m.clear()):
        with pytest.raises(TypeError, match="read-only"):
            mutate(a.meta)
    assert a.meta == {}
    assert pickle.loads(pickle.dumps(a)).meta is a.meta and copy.deepcopy(a).meta is a.meta


def test_given_meta_is_copied():
    m = {"answer": "B"}
    r = Request(id="r", messages=(), meta=m)
    m["answer"] = "C"
    assert r.meta == {"answer": "B"}
    assert Request(id="r", messages=(), meta={}).meta is Request(id="s", messages=()).meta


def test_frozen_slotted_and_replace_revalidates():
    r = fixed_request()
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.id = "x"  # type: ignore[misc]
    for obj in (r, r.messages[0], r.messages[1].parts[0], r.messages[1].parts[1],
                Completion(text="t"), StoredResponse(key="k", request_id="r", status="ok", text="t")):
        assert not hasattr(obj, "__dict__")
    j = dataclasses.replace(r, id="j", role="judge")
    assert (j.id, j.role, j.messages, j.key_for("fp")) == ("j", "judge", r.messages, r.key_for("fp"))
    with pytest.raises(ValueError, match="Request.role"):
        dataclasses.replace(r, role="critic")
    assert pickle.loads(pickle.dumps(r)) == r


def test_message_user_images_text():
    img = ImagePart(path="p", sha256=SHA, video="v.mp4", t_s=1.5)
    r = Request(id="r", messages=(Message.user(img, "first", TextPart(text="second")),))
    assert r.messages[0].role == "user"
    assert r.images == [img] and r.text == "first\nsecond"


def test_params_dump_is_computed_once_per_params_object():
    from lensbench.core.types import GenParams, params_dump

    a = GenParams(temperature=0.5, max_tokens=10)
    d = params_dump(a)
    assert d == a.model_dump(mode="json") and params_dump(a) is d
    assert params_dump(a, exclude_defaults=True) == {"temperature": 0.5, "max_tokens": 10}
    b = GenParams(temperature=0.7)
    assert params_dump(b)["temperature"] == 0.7  # another object, its own dump


def _key_by_dump(r, fp):
    import hashlib
    import json

    return hashlib.sha256(json.dumps({"model": fp, **r.content()}, sort_keys=True,
                                     ensure_ascii=False).encode("utf-8")).hexdigest()


def test_key_for_equals_the_sorted_dump_of_content_for_varied_requests():
    """key_for writes the canonical JSON itself; it must hash the very bytes json.dumps(sort_keys) gives."""
    import random

    from lensbench.core.types import GenParams, ImagePart, Message, Request, TextPart

    rng = random.Random(5)
    alphabet = ['a', 'Z', ' ', '"', '\\\\', '\n', '\t', '\u00e9', '\u4e2d', '\U0001f600', '\x00', '/', '}', ',']
    text = lambda: "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))  # noqa: E731
    for i in range(300):
        parts = []
        for _ in range(rng.randint(1, 4)):
            parts.append(TextPart(text=text()) if rng.random() < 0.5 else
                         ImagePart(path=f"/x/{i}.jpg", sha256=rng.choice(["", "ab" * 32, text()])))
        msgs = [Message(role=rng.choice(["system", "user", "assistant"]), parts=parts)
                for _ in range(rng.randint(1, 3))]
        params = GenParams(temperature=rng.choice([0.0, 0.7, None, 1e-05]), top_p=rng.choice([None, 0.9]),
                           max_tokens=rng.choice([None, 16]), seed=rng.choice([None, 3]),
                           extra_body=rng.choice([{}, {"z": 1, "a": {"y": [1, 2.5, text()], "b": None}}]))
        r = Request(id=str(i), messages=msgs, params=params, repeat=rng.choice([0, 0, 1, 7]))
        fp = rng.choice(["openai:m|img=passthrough", "replay:\u00e9", text()])
        assert r.key_for(fp) == _key_by_dump(r, fp)
