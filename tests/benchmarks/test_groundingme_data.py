"""GroundingME loaders (HF parquet, Arrow, VLMEvalKit TSV), image preparation and the prompt."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from groundingme_fixture import ITEMS, fixture_dir, jpeg  # noqa: F401  (module-scoped fixture)
from lensbench.benchmarks.groundingme.data import ImageSource, load_groundingme
from lensbench.benchmarks.groundingme.images import prepare_images
from lensbench.benchmarks.groundingme.prompts import build_prompt
from lensbench.benchmarks.groundingme.taxonomy import L1_ORDER, L2_ORDER
from lensbench.core.errors import DataError
from lensbench.media.images import downscale_image_bytes, fit_budget


def test_parquet_loader(fixture_dir):  # noqa: F811
    ss = load_groundingme(fixture_dir / "hf")
    assert [s.id for s in ss] == [it[0] for it in ITEMS]
    assert ss[1].subtask_l2 == "State"  # "Discriminative_State" canonicalised
    assert ss[4].bbox is None and ss[4].is_rejection
    assert ss[5].width == 3000 and ss[5].height == 2000
    assert ss[0].bbox == (180.0, 50.0, 330.0, 230.0)


def test_tsv_loader_matches_parquet(fixture_dir):  # noqa: F811
    a = load_groundingme(fixture_dir / "hf")
    b = load_groundingme(fixture_dir / "tsv")
    strip = lambda s: (s.description, s.bbox, s.subtask_l1, s.subtask_l2, s.width, s.height)  # noqa: E731
    assert [strip(s) for s in a] == [strip(s) for s in b]
    assert [s.id for s in b] == ["0", "1", "2", "3", "4", "5"]  # VLMEvalKit has no id column: index


def test_images_identical_from_both_layouts(fixture_dir, tmp_path):  # noqa: F811
    a = load_groundingme(fixture_dir / "hf")
    b = load_groundingme(fixture_dir / "tsv")
    pa_ = prepare_images(a, tmp_path / "a", None)
    pb = prepare_images(b, tmp_path / "b", None)
    for sa, sb in zip(a, b):
        assert Path(pa_[sa.id].path).read_bytes() == Path(pb[sb.id].path).read_bytes()
    # the referenced image (gm-1 -> row 0) is the astronaut photo
    assert Path(pb["1"].path).read_bytes() == Path(pb["0"].path).read_bytes()


def test_datasets_save_to_disk_layout(fixture_dir, tmp_path):  # noqa: F811
    """A ``datasets`` save_to_disk folder (Arrow stream files) loads like the parquet shards."""
    datasets = pytest.importorskip("datasets")
    ds = datasets.Dataset.from_parquet(str(fixture_dir / "hf" / "data" / "test-00000-of-00001.parquet"))
    ds.save_to_disk(str(tmp_path / "saved"))
    a = load_groundingme(fixture_dir / "hf")
    b = load_groundingme(tmp_path / "saved")
    assert [(s.id, s.bbox, s.subtask_l2) for s in a] == [(s.id, s.bbox, s.subtask_l2) for s in b]
    ia, ib = prepare_images(a, tmp_path / "a", None), prepare_images(b, tmp_path / "b", None)
    assert all(Path(ia[s.id].path).read_bytes() == Path(ib[s.id].path).read_bytes() for s in a)


def test_real_release_if_present(shared_data):
    """The real release (if a copy lies in shared data): 1,005 items, Sec. 3.3.1's counts."""
    root = shared_data / "GroundingME"
    if not root.exists():
        pytest.skip(f"GroundingME release not found at {root}")
    ss = load_groundingme(root)
    counts = {l1: sum(s.subtask_l1 == l1 for s in ss) for l1 in L1_ORDER}
    assert len(ss) == 1005
    assert counts == {"Discriminative": 204, "Spatial": 300, "Limited": 300, "Rejection": 201}
    assert all(s.subtask_l2 in L2_ORDER[s.subtask_l1] for s in ss)


def test_loader_errors(tmp_path):
    good = {"id": "x", "image": {"bytes": b"", "path": None}, "description": "d", "bbox": [1, 2, 3, 4],
            "subtask_l1": "Spatial", "subtask_l2": "Counting", "width": 10, "height": 10}
    f = tmp_path / "a" / "test.parquet"
    f.parent.mkdir()
    pq.write_table(pa.Table.from_pylist([{k: v for k, v in good.items() if k != "height"}]), f)
    with pytest.raises(DataError, match="height"):
        load_groundingme(f.parent)
    pq.write_table(pa.Table.from_pylist([{**good, "bbox": None}]), f)
    with pytest.raises(DataError, match="null is allowed only for Rejection"):
        load_groundingme(f)
    pq.write_table(pa.Table.from_pylist([{**good, "subtask_l1": "Weird"}]), f)
    with pytest.raises(DataError, match="subtask_l1"):
        load_groundingme(f)
    pq.write_table(pa.Table.from_pylist([{**good, "bbox": [5, 5, 1, 1]}]), f)
    with pytest.raises(DataError, match="x2 < x1"):
        load_groundingme(f)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataError, match="no GroundingME data"):
        load_groundingme(empty)


def test_prepared_images_are_reused(fixture_dir, tmp_path):  # noqa: F811
    samples = load_groundingme(fixture_dir / "hf")
    first = prepare_images(samples, tmp_path, 1_000_000)
    # a resumed run reads no source: point every sample at a file that does not exist
    gone = [dataclasses.replace(s, image=ImageSource("file", str(tmp_path / "missing.jpg"))) for s in samples]
    assert prepare_images(gone, tmp_path, 1_000_000) == first
    with pytest.raises(DataError, match="not found"):
        prepare_images(gone, tmp_path / "other", 1_000_000)


def test_fit_budget_and_draft_downscale():
    assert fit_budget(3000, 2000, None) == (3000, 2000)
    w, h = fit_budget(3000, 2000, 1_000_000)
    # sqrt(1e6 / 6e6) = 0.408248..; floor(3000 * s) = 1224, floor(2000 * s) = 816; 1224 * 816 = 998,784
    assert (w, h) == (1224, 816)
    im, orig = downscale_image_bytes(jpeg("coffee", (3000, 2000)), 1_000_000)
    assert orig == (3000, 2000) and im.size == (w, h)
    with pytest.raises(ValueError):
        fit_budget(10, 10, 0)


def test_prompt_is_table9_verbatim():
    p = build_prompt("A DESCRIPTION")
    # the official evaluate.py PROMPT_TEMPLATE, byte for byte, with the description filled in
    want = ("All spatial relationships are defined from the viewer's perspective, where 'front' means closer to the "
            "viewer and 'back' means farther from the viewer. Please provide the bounding box coordinate of the "
            "object the following statement describes:\nA DESCRIPTION\nEnsure that all details mentioned about the "
            "object are accurate. Provide at most one bounding box. If a matching object is found, provide its "
            "bounding box as a JSON in the format {\"bbox_2d\": [x1, y1, x2, y2]}. If no matching object is found, "
            "output {\"bbox_2d\": null}.")
    assert p.encode("utf-8") == want.encode("utf-8")
    assert build_prompt("d", "yxyx1000") == build_prompt("d").replace("[x1, y1, x2, y2]", "[y1, x1, y2, x2]")
