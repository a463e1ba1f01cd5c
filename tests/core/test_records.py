"""SampleRecord serialisation (the samples.jsonl line)."""


def test_json_line_is_the_line_dict_as_json():
    """samples.jsonl lines (pydantic-core serialiser) parse to exactly line(): NaN/Infinity kept (as
    json.dumps wrote them before), non-ASCII text kept, unknown types as str, floats round-trip."""
    import json
    import math
    from pathlib import Path

    from lensbench.core.records import JudgeCall, SampleRecord

    r = SampleRecord(benchmark="b", sample_id="s/1", outcome="scored", reply="h\u00e9llo \u2603 \"q\"\n",
                     scores={"nan": math.nan, "inf": math.inf, "tiny": 1e-05, "third": 1 / 3},
                     extra={"path": Path("/x/y.jpg"), "nested": [{"a": (1, 2)}]},
                     judge=[JudgeCall(kind="parser", request_id="r", reply="A", verdict="A", note="extra field")])
    line = r.json_line()
    assert "\n" not in line and "\u2603" in line
    expect = r.line()
    expect["extra"]["path"] = "/x/y.jpg"
    got = json.loads(line)
    assert math.isnan(got["scores"].pop("nan")) and math.isnan(expect["scores"].pop("nan"))
    assert got == expect and got["scores"]["inf"] == math.inf
    assert '"nan":NaN' in line and '"inf":Infinity' in line
    assert json.loads(line)["scores"]["third"] == 1 / 3
