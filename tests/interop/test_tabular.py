"""VLMEvalKit-style tables (lensbench.core.tabular): cells read back as written, header faults named, .xlsx
optional (openpyxl, the 'interop' extra)."""

from __future__ import annotations

import importlib.util

import pytest

from lensbench.core.errors import DataError, LensbenchError
from lensbench.core.tabular import cell_text, read_table, write_table

HAS_XLSX = importlib.util.find_spec("openpyxl") is not None
ODD = ["plain", "two\nlines", "a\ttab", 'say "yes"', "sep\u2028arator", "", "  spaced  ", "comma, here"]


@pytest.mark.parametrize("suffix", [".tsv", ".csv", ".xlsx"])
def test_cells_read_back_as_written(tmp_path, suffix):
    if suffix == ".xlsx" and not HAS_XLSX:
        pytest.skip("openpyxl is not installed")
    path = tmp_path / f"p{suffix}"
    rows = [{"index": i, "prediction": text} for i, text in enumerate(ODD)]
    write_table(path, ["index", "prediction"], rows)
    got = read_table(path)
    nonblank = [(i, t) for i, t in enumerate(ODD)]  # a row whose prediction is "" still has its index: kept
    assert [r for _w, r in got] == [{"index": str(i), "prediction": t} for i, t in nonblank]
    assert got[0][0] == "row 1"


def test_cell_text():
    assert cell_text(None) == "" and cell_text(float("nan")) == ""
    assert cell_text(5.0) == "5" and cell_text(2.5) == "2.5" and cell_text(7) == "7" and cell_text("x") == "x"


def test_header_faults_are_named(tmp_path):
    dup = tmp_path / "dup.tsv"
    dup.write_text("index\tprediction\tindex\n1\ta\t2\n", encoding="utf-8")
    with pytest.raises(DataError, match="'index' appears twice"):
        read_table(dup)
    empty = tmp_path / "empty.tsv"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(DataError, match="no header row"):
        read_table(empty)
    latin = tmp_path / "latin.tsv"
    latin.write_bytes("index\tprediction\n1\tcaf\xe9\n".encode("latin-1"))
    with pytest.raises(DataError, match="not UTF-8"):
        read_table(latin)


@pytest.mark.skipif(HAS_XLSX, reason="openpyxl is installed")
def test_xlsx_without_openpyxl_names_the_extra(tmp_path):
    with pytest.raises(LensbenchError, match=r"lensbench\[interop\]"):
        write_table(tmp_path / "p.xlsx", ["index"], [])
    (tmp_path / "q.xlsx").write_bytes(b"PK")
    with pytest.raises(LensbenchError, match=r"lensbench\[interop\]"):
        read_table(tmp_path / "q.xlsx")


@pytest.mark.skipif(not HAS_XLSX, reason="openpyxl is not installed")
def test_a_control_character_is_refused_in_xlsx_not_stripped(tmp_path):
    with pytest.raises(DataError, match="row 1: column 'prediction' holds a control character"):
        write_table(tmp_path / "p.xlsx", ["index", "prediction"], [{"index": 0, "prediction": "a\x01b"}])
