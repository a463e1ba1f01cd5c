"""IF-Bench Fig. 15 (issue 31.7): ``lensbench genvip grid`` draws infrared | editor 1 | editor 2 rows for the same
infrared images across editors. The PNG itself is checked: every synthetic image is one flat colour, so each cell
is found in the picture as the largest patch of its colour, and the patches must form the rows x columns grid."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from lensbench.cli.main import app

pytest.importorskip("matplotlib")
ndimage = pytest.importorskip("scipy.ndimage")

GREYS = [60, 140, 190, 100]  # infrared rows (grey images, mode L)
EDITOR_A = [(230, 30, 30), (30, 200, 30), (30, 30, 230), (120, 60, 10)]
EDITOR_B = [(230, 200, 20), (200, 30, 200), (20, 200, 200)]  # no translation of the 4th image


def _folders(root):
    ir, a, b = root / "infrared", root / "qwen_edit", root / "gpt_image"
    for d in (ir, a, b):
        d.mkdir(parents=True)
    for i, g in enumerate(GREYS):
        Image.new("L", (96, 64), g).save(ir / f"ir_{i}.jpg", quality=100)
        Image.new("RGB", (128, 128), EDITOR_A[i]).save(a / f"ir_{i}.png")  # another extension, another size
        if i < len(EDITOR_B):
            Image.new("RGB", (96, 64), EDITOR_B[i]).save(b / f"ir_{i}.png")
    (a / "translate_report.json").write_text(json.dumps({"editor": "diffusers:Qwen-Image-Edit-2509"}))
    return ir, a, b


def _patch(px, colour, tol=6):
    """Centre (x, y) and area of the largest connected patch of ``colour`` in an RGB array."""
    mask = np.all(np.abs(px.astype(int) - np.array(colour)) <= tol, axis=-1)
    lab, n = ndimage.label(mask)
    assert n, f"colour {colour} not in the figure"
    sizes = ndimage.sum(mask, lab, range(1, n + 1))
    k = int(np.argmax(sizes)) + 1
    ys, xs = np.nonzero(lab == k)
    return xs.mean(), ys.mean(), int(sizes[k - 1])


def test_grid_png_has_rows_by_columns_of_the_same_images(tmp_path):
    ir, a, b = _folders(tmp_path)
    out = tmp_path / "fig15.png"
    r = CliRunner().invoke(app, ["genvip", "grid", "--infrared", str(ir), "--translated", str(a),  # label: report
                                 "--translated", f"GPT-Image={b}", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "3 rows x 3 columns (Infrared, diffusers:Qwen-Image-Edit-2509, GPT-Image)" in r.output
    assert "GPT-Image: 1 infrared image(s) not translated, left out" in r.output
    px = np.asarray(Image.open(out).convert("RGB"))
    cells = [[(g, g, g), EDITOR_A[i], EDITOR_B[i]] for i, g in enumerate(GREYS[:3])]
    centres = [[_patch(px, c) for c in row] for row in cells]
    areas = [c[2] for row in centres for c in row]
    assert min(areas) > 0.5 * max(areas)  # every cell drawn at a comparable size (aspect kept: 96x64 vs 128x128)
    xs = np.array([[c[0] for c in row] for row in centres])
    ys = np.array([[c[1] for c in row] for row in centres])
    assert np.all(np.diff(ys, axis=0) > 40) and np.all(np.ptp(ys, axis=1) < 5)  # 3 rows, top to bottom
    assert np.all(np.diff(xs, axis=1) > 40) and np.all(np.ptp(xs, axis=0) < 5)  # 3 columns, left to right
    for colour in (EDITOR_A[3], (100, 100, 100)):  # the image only one editor translated is not drawn
        mask = np.all(np.abs(px.astype(int) - np.array(colour)) <= 6, axis=-1)
        lab, n = ndimage.label(mask)  # at most a few anti-aliased text pixels of a similar grey, never a cell
        assert n == 0 or ndimage.sum(mask, lab, range(1, n + 1)).max() < 0.02 * min(areas)


def test_named_rows_in_order_and_errors(tmp_path):
    from lensbench.tools.ifbench.genvip.grid import editor_column, plan_grid

    ir, a, b = _folders(tmp_path)
    plan = plan_grid(ir, [editor_column(str(a)), editor_column(f"B={b}")], names=["ir_2.jpg", "ir_0"])
    assert [f.name for f, _t in plan.rows] == ["ir_2.jpg", "ir_0.jpg"]
    assert [[t.name for t in ts] for _f, ts in plan.rows] == [["ir_2.png", "ir_2.png"], ["ir_0.png", "ir_0.png"]]
    assert len(plan_grid(ir, [editor_column(str(a))], n=2).rows) == 2
    base = ["genvip", "grid", "--infrared", str(ir), "--translated", str(a), "--translated", str(b)]
    r = CliRunner().invoke(app, base + ["--out", str(tmp_path / "x.png"), "--image", "ir_3.jpg"])
    assert r.exit_code == 2 and "no translation of ir_3.jpg" in r.output and str(b) in r.output
    assert "Traceback" not in r.output and not (tmp_path / "x.png").exists()
    r = CliRunner().invoke(app, ["genvip", "grid", "--infrared", str(ir), "--translated", str(tmp_path / "nope"),
                                 "--out", str(tmp_path / "y.png")])
    assert r.exit_code == 2 and "not a folder of translated images" in r.output


def test_a_genvip_run_folder_gives_its_translated_dir(tmp_path):
    from lensbench.testing.runs import write_run
    from lensbench.tools.ifbench.genvip.grid import editor_column

    _ir, a, _b = _folders(tmp_path)
    run = write_run(tmp_path / "run", "if-bench", "m", [], {"Score": {"Avg": 50.0}})
    doc = json.loads((run / "result.json").read_text())
    (run / "result.json").write_text(json.dumps({**doc, "options": {"input": "if+rgb+text", "translated_dir": str(a)}}))
    col = editor_column(str(run))
    assert col.folder == a and col.label == "diffusers:Qwen-Image-Edit-2509"
    assert editor_column(f"Mine={run}").label == "Mine"
    bare = write_run(tmp_path / "run2", "if-bench", "m", [], {"Score": {"Avg": 50.0}})
    with pytest.raises(Exception, match="not an IF-Bench GenViP run"):
        editor_column(str(bare))
