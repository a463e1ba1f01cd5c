"""Every lensbench plot is drawn in the one shared style (report/plotstyle.py): the viewer's figures, the
IV-Bench sweep plot, the dataset statistics plots and GroundingME's Fig. 6, each checked at the moment it
saves, starting from matplotlib's own defaults."""

from __future__ import annotations

import pytest

matplotlib = pytest.importorskip("matplotlib")

from lensbench.report.plotstyle import PALETTE, STYLE  # noqa: E402
from lensbench.testing.runs import craft_run  # noqa: E402


@pytest.fixture
def saved(monkeypatch):
    """The style in force at every savefig: (first series colour, top spine shown, title weight, font size)."""
    from matplotlib.figure import Figure

    matplotlib.rcdefaults()  # as a fresh process: nothing styled yet
    seen = []
    real = Figure.savefig

    def spy(self, *args, **kw):
        rc = matplotlib.rcParams
        seen.append((rc["axes.prop_cycle"].by_key()["color"][0], rc["axes.spines.top"], rc["axes.titleweight"],
                     rc["font.size"]))
        return real(self, *args, **kw)

    monkeypatch.setattr(Figure, "savefig", spy)
    yield seen
    matplotlib.rcdefaults()


def _styled(seen, n_min=1):
    want = (PALETTE[0], STYLE["axes.spines.top"], STYLE["axes.titleweight"], STYLE["font.size"])
    assert len(seen) >= n_min and all(s == want for s in seen), seen


def test_viewer_figures(saved, tmp_path):
    from lensbench.views.figures import make_figures
    from lensbench.views.runs import read_run

    runs = [read_run(craft_run(tmp_path / b, b, "m", n=24, seed=1)) for b in ("rgb-th-bench", "if-bench", "groundingme")]
    figs = make_figures(runs)
    assert len(figs) >= 4 and all(png.startswith(b"\x89PNG") for _t, png in figs)
    _styled(saved, len(figs))


def test_ivbench_sweep_plot(saved, tmp_path):
    from lensbench.benchmarks.ivbench.plot import plot_sweep

    sweep = [{"frames": f, "resolution": None, "label": f"{f}f", "accuracy": {"Overall": 40.0 + f, "P-Avg": 30.0,
                                                                              "R-Avg": 50.0}} for f in (4, 8, 16)]
    assert plot_sweep(sweep, tmp_path / "sweep.png").is_file()
    _styled(saved)


def test_dataset_statistics_plots(saved, tmp_path):
    from lensbench.report.datastats import DatasetStats, StatTable

    st = DatasetStats("demo", "data", tables=[StatTable("per_task", "Per task", "Fig. 2", ["task", "n", "Paper"],
                                                        [["A", 3, 4], ["B", 5, 6], ["Total", 8, 10]], plot="bar")],
                      distributions={"length": [1.0, 2.0, 2.5, 3.0, 8.0]})
    from lensbench.report.datastats import plot_stats

    assert len(plot_stats(st, tmp_path)) == 2
    _styled(saved, 2)


def test_groundingme_fig6(saved, tmp_path):
    from lensbench.tools.groundingme.sft_table import plot_fig6

    assert plot_fig6({}, tmp_path / "fig6.png").is_file()
    _styled(saved)
