"""The report's figures (``workbench/verifiers/figures.py``,
``workbench/verifiers/sandwich_figure.py``, ``workbench/verifiers/figure_style.py``): what each
states, the interval it shades, the bound it draws."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from matplotlib.collections import PolyCollection
from scipy.stats import t as t_dist

from workbench.core.bounds.fiber_bound.fiber import fiber_bound
from workbench.core.bounds.harmonic_count.harmonic import harmonic_bound
from workbench.testing import edited, plant, replaced
from workbench.verifiers import figure_style, presets, sweep
from workbench.verifiers.figures import preset_figure
from workbench.verifiers.sandwich_figure import (
    BOUND,
    GAP,
    INHERITED,
    MEASURED,
    draw_sandwich,
    sandwich_figure,
)
from workbench.verifiers.sandwich_store import best_witnesses


@pytest.fixture(scope="module")
def tiny_rows() -> list[dict[str, Any]]:
    """The one-layer runs of the tiny preset (2 widths, 3 ranks, 2 seeds), in memory."""
    runs = [r for r in presets.plan("tiny", "quick") if r.label_dict()["L"] == 1]
    return sweep.compute(runs, threads=1)


@pytest.fixture(scope="module")
def rf_rows() -> list[dict[str, Any]]:
    """Random features at d = 8, H in {1, 4, 16}, two seeds (exact errors)."""
    runs = [r for r in presets.plan("random_features", "quick")
            if r.label_dict()["d"] == 8 and r.label_dict()["H"] <= 16]
    return sweep.compute(runs, threads=1)


def _legend(ax: Any) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def _line(ax: Any, label: str) -> Any:
    (line,) = [ln for ln in ax.get_lines() if ln.get_label() == label]
    return line


def test_plain_ticks_and_the_axis_rule() -> None:
    assert [figure_style.plain(v) for v in (0.25, 0.6, 64, 0.001, 1.0, 0)] == [
        "0.25", "0.6", "64", "0.001", "1", "0"]
    assert not figure_style.use_log([0.25, 0.65])  # the range of a tiny sweep: linear
    assert figure_style.use_log([0.001, 0.5]) and not figure_style.use_log([0.0, 0.5])


def _check_tiny(fig: Any, rows: list[dict[str, Any]]) -> None:
    ax = fig.axes[0]
    fig.canvas.draw()
    assert ax.get_title(loc="left").startswith("Smoke preset (seconds)")
    assert "tiny" not in ax.get_title(loc="left")
    assert ax.get_xlabel() == "rank r" and "E‖f − A‖²" in ax.get_ylabel()
    assert ax.get_yscale() == "linear"  # errors of 0.8 to 1: no log axis
    ticks = [t.get_text() for t in ax.get_yticklabels() + ax.get_xticklabels()]
    assert ticks and all(t.replace(".", "").isdigit() for t in ticks if t)
    caption = fig.texts[0].get_text().replace("\n", " ")
    for part in ("E‖f − A‖²", "farthest task", "i.i.d. uniform keys", "standard attention",
                 "d = 4", "N = 4", "L = 1", "steps = 60", "2 seeds", "best of 2 seeds",
                 "95% Monte Carlo interval"):
        assert part in caption
    legend = _legend(ax)
    assert legend == ["L = 1, c = 1, H·r = 4", "L = 1, c = 2, H·r = 8", figure_style.HALF_LABEL]
    assert _line(ax, figure_style.HALF_LABEL).get_ydata()[0] == 0.5
    for b in sweep.best_of_seeds(rows):  # the line is the best seed's held-out error
        lab = b["labels"]
        line = _line(ax, f"L = 1, c = {lab['c']}, H·r = {4 * lab['c']}")
        i = list(line.get_xdata()).index(lab["r"])
        assert line.get_ydata()[i] == b["heldout"]
    bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
    lo = min(r["heldout_lo"] for r in sweep.best_of_seeds(rows))
    assert len(bands) == 2 and min(p.vertices[:, 1].min() for c in bands
                                   for p in c.get_paths()) == pytest.approx(lo)


def test_preset_figure_states_what_it_plots(tiny_rows: list[dict[str, Any]]) -> None:
    _check_tiny(preset_figure(presets.get_preset("tiny"), tiny_rows, "quick"), tiny_rows)


def test_preset_figure_check_fails_when_the_worst_seed_is_plotted(
        tiny_rows: list[dict[str, Any]]) -> None:
    with plant("workbench.verifiers.figures:point",
               edited('best = min(rows, key', 'best = max(rows, key')):
        fig = preset_figure(presets.get_preset("tiny"), tiny_rows, "quick")
    with pytest.raises(AssertionError):
        _check_tiny(fig, tiny_rows)


def _check_rf(fig: Any, rows: list[dict[str, Any]]) -> None:
    ax = fig.axes[0]
    assert ax.get_title(loc="left").startswith("Exact error of random rank-1 hardmax heads")
    assert ax.get_xlabel() == "heads H"
    assert _legend(ax) == ["d = 8", "certified lower bound, d = 8", figure_style.MIDPOINT_LABEL]
    caption = fig.texts[0].get_text().replace("\n", " ")
    for part in ("on D₂ (N = 2 orthonormal keys", "generalized attention", "r = 1", "2 seeds",
                 "95% Student-t interval over seeds", "larger of the harmonic count and the fiber"):
        assert part in caption
    bound = _line(ax, "certified lower bound, d = 8")
    for H, y in zip(bound.get_xdata(), bound.get_ydata()):  # the larger of the two bounds
        assert y == max(harmonic_bound(8, 1, int(H)).enclosure[0],
                        fiber_bound(8, 1, int(H)).enclosure[0])
    mean = _line(ax, "d = 8")
    for H, y in zip(mean.get_xdata(), mean.get_ydata()):  # the mean over the two draws
        draws = [r["heldout"] for r in rows if r["labels"]["H"] == H]
        assert len(draws) == 2 and y == pytest.approx(sum(draws) / 2)
    # the band: the Student-t interval of two draws, cut at 0, computed here from scipy
    top = max(sum(ds) / 2 + t_dist.ppf(0.975, 1) * abs(ds[0] - ds[1]) / math.sqrt(2)
              / math.sqrt(2) for ds in ([r["heldout"] for r in rows if r["labels"]["H"] == H]
                                        for H in (1, 4, 16)))
    (band,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert band.get_paths()[0].vertices[:, 1].max() == pytest.approx(top)


def test_random_features_figure_draws_the_certified_bound_and_seed_interval(
        rf_rows: list[dict[str, Any]]) -> None:
    _check_rf(preset_figure(presets.get_preset("random_features"), rf_rows, "quick"), rf_rows)


def test_random_features_check_fails_on_the_weaker_bound(rf_rows: list[dict[str, Any]]) -> None:
    def harmonic_only(d: int, r: int, H: int, *args: Any, **kw: Any) -> Any:
        return SimpleNamespace(value=harmonic_bound(d, r, H).enclosure[0])

    with plant("workbench.core.bounds.certified:certified_lower_bound", replaced(harmonic_only)):
        fig = preset_figure(presets.get_preset("random_features"), rf_rows, "quick")
    with pytest.raises(AssertionError):
        _check_rf(fig, rf_rows)


def _cells() -> list[Any]:
    pts = [{"d": d, "r": r, "heads": H, "certified": c, "best_error": e, "best_ci": [e, e],
            "method": "m"} for d, r, H, c, e in (
        (3, 1, 1, 0.33, 0.36), (3, 1, 2, 0.05, 0.29), (3, 1, 4, 0.02, 0.31),
        (4, 1, 1, 0.4, 0.42), (4, 2, 1, 0.2, 0.3), (4, 2, 4, 0.0, 0.2))]
    return best_witnesses(pts)


def _check_sandwich(fig: Any) -> None:
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in panels] == ["d = 3", "d = 4"]
    assert all(ax.get_xlabel() == "heads H" for ax in panels)
    assert _legend(panels[1]) == ["r = 1", "r = 2"]
    (spare,) = [ax for ax in fig.axes if not ax.get_title() and ax.get_legend()]
    assert _legend(spare) == [BOUND, MEASURED, INHERITED, GAP, figure_style.MIDPOINT_LABEL]
    assert "between the certified lower bound and the best witness" in fig._suptitle.get_text()
    hollow = {(ax.get_title(), float(ln.get_xdata()[0])) for ax in panels for ln in ax.get_lines()
              if ln.get_marker() == "o" and ln.get_markerfacecolor() == "white"}
    assert hollow == {("d = 3", 4.0)}  # (3, 1, 4) is worse than (3, 1, 2): inherited
    assert panels[0].get_yscale() == "log"  # positive values from 0.02 to 0.42: over 10x


def test_sandwich_figure_marks_inherited_witnesses(tmp_path: Path) -> None:
    _check_sandwich(sandwich_figure(_cells()))
    assert draw_sandwich(_cells(), tmp_path / "s") == ["s.png", "s.svg"]
    svg = (tmp_path / "s.svg").read_text()
    assert "not a new measurement" in svg and "d = 4" in svg
    draw_sandwich(_cells(), tmp_path / "t")
    assert (tmp_path / "t.svg").read_text() == svg  # the same bytes on every run


def test_sandwich_check_fails_when_inherited_points_look_measured() -> None:
    with plant("workbench.verifiers.sandwich_figure:sandwich_figure",
               edited('markerfacecolor=colour if own else "white"', "markerfacecolor=colour")):
        fig = sandwich_figure(_cells())
    with pytest.raises(AssertionError):
        _check_sandwich(fig)
