"""GOBench Gen-1K filtering per scenario (issue 31.6): the release holds 333 scenarios x 3 generators, so a
scenario is dropped whole when any generator's image of it is missing, fails a quality rule or repeats an
earlier kept scenario; every generator then keeps the same scenarios (the per-generator table stays balanced)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from lensbench.cli.main import app
from lensbench.tools.gobench.filter import FilterSettings, filter_generations
from tests.tools.test_gobench_filter import _blocks

imagehash = pytest.importorskip("imagehash")

GENS = ("gpt4o", "seedream", "imagen")


def _release(root):
    """3 generators x 6 direct-light scenarios (``direct_light_images/<N>.png``) + 1 reflect scenario. Scenario 2:
    seedream's image is flat; scenario 4: imagen made none; scenario 5: gpt4o's image repeats scenario 1's;
    scenario 1: the three generators drew the SAME picture (one scenario's generations may be alike)."""
    seed = iter(range(100, 200))
    for g in GENS:
        for cat in ("direct_light_images", "reflect_light_images"):
            (root / g / cat).mkdir(parents=True)
    for g in GENS:
        _blocks(7).save(root / g / "direct_light_images" / "1.png")
        for n in (2, 3, 4, 5, 6):
            if (g, n) == ("imagen", 4):
                continue
            im = _blocks(7) if (g, n) == ("gpt4o", 5) else _blocks(next(seed))
            if (g, n) == ("seedream", 2):
                im = Image.fromarray(np.full((320, 320, 3), 90, np.uint8))
            im.save(root / g / "direct_light_images" / f"{n}.png")
        _blocks(next(seed)).save(root / g / "reflect_light_images" / "10.png")
    return [root / g for g in GENS]


def test_whole_scenarios_dropped_and_generators_balanced(tmp_path):
    folders = _release(tmp_path / "gen")
    checks, counts = filter_generations(folders, tmp_path / "out")
    kept = {c.scenario for c in checks if c.kept}
    assert kept == {"direct_light_images/1", "direct_light_images/3", "direct_light_images/6",
                    "reflect_light_images/10"}
    # balanced: each generator keeps exactly the kept scenarios, one image each
    assert counts["per_generator"] == {g: len(kept) for g in GENS}
    assert counts["scenarios"] == 7 and counts["scenarios_kept"] == 4 and counts["kept"] == 3 * 4
    for g in GENS:
        files = sorted(p.relative_to(tmp_path / "out" / g).as_posix() for p in (tmp_path / "out" / g).rglob("*.png"))
        assert files == ["direct_light_images/1.png", "direct_light_images/3.png", "direct_light_images/6.png",
                         "reflect_light_images/10.png"]
    fate = {c.image: (c.reason, c.cause, c.duplicate_of) for c in checks if not c.kept}
    assert fate["seedream/direct_light_images/2.png"] == ("flat", None, None)
    assert fate["gpt4o/direct_light_images/2.png"] == ("same scenario dropped", "seedream/direct_light_images/2.png",
                                                       None)
    assert fate["gpt4o/direct_light_images/4.png"] == ("scenario incomplete (missing in imagen)", None, None)
    assert fate["gpt4o/direct_light_images/5.png"] == ("near-duplicate (hash)", None, "gpt4o/direct_light_images/1.png")
    assert fate["imagen/direct_light_images/5.png"][:2] == ("same scenario dropped", "gpt4o/direct_light_images/5.png")
    assert len(fate) == 3 * 7 - 1 - 12  # 20 images in all, 12 kept
    log = [json.loads(x) for x in (tmp_path / "out" / "filter.jsonl").read_text().splitlines()]
    assert len(log) == 20 and {x["scenario"] for x in log if x["kept"]} == kept


def test_image_unit_keeps_the_earlier_behaviour_and_unbalances(tmp_path):
    folders = _release(tmp_path / "gen")
    checks, counts = filter_generations(folders, tmp_path / "out", FilterSettings(unit="image"))
    # scenario 1's three identical generations: only the first generator's survives the cross-image hash rule
    assert [c.kept for c in checks if c.scenario == "direct_light_images/1"] == [True, False, False]
    assert len(set(counts["per_generator"].values())) > 1


def test_cli_unit_option_and_bad_unit(tmp_path):
    folders = _release(tmp_path / "gen")
    args = ["gobench", "filter", *sum((["--images", str(f)] for f in folders), []), "--out", str(tmp_path / "o")]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    assert "7 scenarios: 4 kept" in r.output and "gpt4o: 4 kept" in r.output and "imagen: 4 kept" in r.output
    r = CliRunner().invoke(app, args[:-1] + [str(tmp_path / "o2"), "--unit", "prompt"])
    assert r.exit_code == 2 and "--unit must be one of scenario, image" in r.output
    assert "Traceback" not in r.output and not (tmp_path / "o2").exists()
