"""The error-against-N figure (``workbench/verifiers/n_figure.py``): one panel per rank, the
certified bound at N >= 3 (the registered ``certified-n``) dashed as the runs' own bound exactly
where it is proved for them (one layer, nearest neighbour, D_N), and under runs of another law
(the paper's sweep) only as a dotted reference labelled with its law; the report's findings
under it (``workbench/verifiers/orderings.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from workbench.commands.report import _findings
from workbench.plugins import get_bound
from workbench.testing import plant, replaced
from workbench.verifiers import presets
from workbench.verifiers.figures import preset_figure
from workbench.verifiers.n_figure import OTHER_LABEL, OWN_LABEL, reference_at

D = 8
VARY_N = presets.get_preset("vary_n")


def _rows(task: str, points: str, layers: int, Ns: tuple[int, ...],
          err: Any) -> list[dict[str, Any]]:
    """Stored-run rows of a hand-made grid: ranks 1 and d (H = d^2 / r), two seeds, held-out
    error ``err(r, N, seed)`` with a +-0.01 interval."""
    out = []
    for N in Ns:
        for r in (1, D):
            for seed in (0, 1):
                e = err(r, N, seed)
                out.append({
                    "preset": "vary_n", "scale": "quick", "kind": "train", "seed": seed,
                    "model_class": "standard", "labels": {"L": layers, "c": D, "r": r, "N": N},
                    "config": {"task": {"name": task, "d": D, "N": N, "points": points},
                               "spec": {"rank": r, "heads": D * D // r, "layers": layers},
                               "train": {"steps": 100}},
                    "heldout": e, "heldout_lo": e - 0.01, "heldout_hi": e + 0.01,
                    "heldout_n": 1000, "extra": {"ci_level": 0.95, "interval": "normal"}})
    return out


def _rising(r: int, N: int, seed: int) -> float:
    return (0.3 + 0.05 * N if r == 1 else 0.1) + 0.001 * seed


BOUND = "certified-n"  # the certified bound at N >= 3: every sequence-length bound, largest wins


def _line(ax: Any, label: str) -> Any:
    lines = [ln for ln in ax.get_lines() if ln.get_label() == label]
    return lines[0] if lines else None


def _check_on_dn(fig: Any) -> None:
    """On D_N at one layer: a panel per rank, the runs' own bound (dashed) at every N a bound
    covers with a positive value, with the registered bound's values; the caption names the
    points it is not drawn at with the bound's own reasons."""
    b = get_bound(BOUND)
    panels = [ax for ax in fig.axes if ax.get_title(loc="left")]
    assert [ax.get_title(loc="left") for ax in panels] == ["r = 1", "r = 8"]
    line = _line(panels[0], OWN_LABEL)  # rank 1, 64 heads
    want = [N for N in (3, 4, 6, 7) if b.outside(D, 1, D * D, N) is None
            and b.interval(D, 1, D * D, N)[0] > 0]
    assert list(line.get_xdata()) == want and 3 in want
    for N, y in zip(line.get_xdata(), line.get_ydata()):
        assert y == b.interval(D, 1, D * D, int(N))[0] > 0
    assert _line(panels[1], OWN_LABEL) is None  # rank 8 = d: the bound is 0, vacuous
    assert all(_line(ax, OTHER_LABEL) is None for ax in panels)
    assert "nearest, orthonormal keys, 1 layer" in panels[0].get_legend_handles_labels()[1][0]
    caption = fig.texts[-1].get_text().replace("\n", " ")
    assert "Dashed: the certified bound at each N (certified-n" in caption
    assert "proved for these runs' law" in caption and "0 (vacuous)" in caption
    why = b.outside(D, 1, D * D, 7)
    assert (why is None) or f"not drawn where {why}" in caption


def _check_iid(fig: Any) -> None:
    """The paper's sweep (farthest task, i.i.d. keys, two layers): never its own bound; the D_N
    bound only as a dotted reference labelled with its law, and the caption says why."""
    b = get_bound(BOUND)
    panels = [ax for ax in fig.axes if ax.get_title(loc="left")]
    assert all(_line(ax, OWN_LABEL) is None for ax in panels)
    ref = _line(panels[0], OTHER_LABEL)
    assert ref is not None and ref.get_linestyle() == ":"
    for N, y in zip(ref.get_xdata(), ref.get_ydata()):
        assert y == b.interval(D, 1, D * D, int(N))[0] > 0
    assert "farthest, iid keys, 2 layers" in panels[0].get_legend_handles_labels()[1][0]
    caption = fig.texts[-1].get_text().replace("\n", " ")
    for part in ("drawn only for reference", "another law than the trained curves'",
                 "the farthest task, not nearest neighbour", "iid keys, not orthonormal (D_N)",
                 "2 layers, not one", "no bound exists for i.i.d. keys at N >= 3",
                 "different theorems"):
        assert part in caption, part


def test_bound_is_drawn_under_each_rank_where_it_is_proved() -> None:
    rows = _rows("nearest", "orthonormal", 1, (3, 4, 6, 7), _rising)
    _check_on_dn(preset_figure(VARY_N, rows, "quick", get_bound(BOUND)))


def test_papers_sweep_gets_the_dn_bound_only_as_a_reference_of_another_law() -> None:
    rows = _rows("farthest", "iid", 2, (4, 6, 8), _rising)
    _check_iid(preset_figure(VARY_N, rows, "quick", get_bound(BOUND)))


def test_the_checks_fail_when_the_bound_ignores_the_law_of_the_keys() -> None:
    """Planted: a law test that accepts any run (the D_N bound drawn as the i.i.d. runs' own)."""
    rows = _rows("farthest", "iid", 2, (4, 6), _rising)
    with plant("workbench.verifiers.n_figure:law_mismatch", replaced(lambda row: None)):
        fig = preset_figure(VARY_N, rows, "quick", get_bound(BOUND))
    with pytest.raises(AssertionError):
        _check_iid(fig)


def test_the_checks_fail_when_the_reference_is_not_the_registered_bound() -> None:
    """Planted: the reference drawn 3 % high."""
    rows = _rows("farthest", "iid", 2, (4, 6), _rising)
    real = reference_at
    with plant("workbench.verifiers.n_figure:reference_at",
               replaced(lambda row, b: None if real(row, b) is None else
                        (real(row, b)[0] * 1.03, *real(row, b)[1:]))):
        fig = preset_figure(VARY_N, rows, "quick", get_bound(BOUND))
    with pytest.raises(AssertionError):
        _check_iid(fig)


def test_report_findings_hold_on_rising_rows_and_fail_on_flat_ones() -> None:
    p = presets.get_preset("vary_n")
    md = _findings(p, _rows("farthest", "iid", 2, (4, 8, 16), _rising))
    assert sum("**holds**" in line for line in md) == 2 + 3
    # low rank flat in N (0.5 + 0.001 seed): the rises are unresolved, not claimed
    flat = _findings(p, _rows("farthest", "iid", 2, (4, 8, 16),
                              lambda r, N, s: (0.5 if r == 1 else 0.1) + 0.001 * s))
    assert sum("rises" in line and "**unresolved**" in line for line in flat) == 2
    # full rank that grows to rank 1's level at the longest N is not "small"
    grows = _findings(p, _rows("farthest", "iid", 2, (4, 8, 16),
                               lambda r, N, s: 0.3 + 0.05 * N if r == 1 else 0.05 * N))
    assert any("full rank small" in line and "**contradicted**" in line for line in grows)


def test_report_text_says_which_law_each_curve_is_under() -> None:
    from workbench.commands.report import _certified_n_bound, _laws

    md = " ".join(_laws(VARY_N, _rows("farthest", "iid", 2, (4, 6), _rising),
                        _certified_n_bound()))
    assert "Trained curves: farthest, iid keys, 2 layers." in md
    assert "another law than the trained curves'" in md and "different theorems" in md
    md = " ".join(_laws(VARY_N, _rows("nearest", "orthonormal", 1, (4, 6), _rising),
                        _certified_n_bound()))
    assert "nearest, orthonormal keys, 1 layer" in md and "proved for these runs' law" in md
