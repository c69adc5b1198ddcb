"""The error-against-N figure (``workbench/verifiers/n_figure.py``): one panel per rank, and the
bound beyond two keys drawn exactly where it is proved (one layer, nearest neighbour, D_N,
3 <= N <= d - 2), with its values from the registered ``n-keys`` bound; the report's findings
under it (``workbench/verifiers/orderings.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from workbench.commands.report import _findings
from workbench.plugins import get_bound
from workbench.testing import plant, replaced
from workbench.verifiers import presets
from workbench.verifiers.figures import preset_figure

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


def _dashed(ax: Any) -> Any:
    lines = [ln for ln in ax.get_lines() if ln.get_label() == "B_N (n-keys)"]
    return lines[0] if lines else None


def _check_on_dn(fig: Any) -> None:
    """On D_N at one layer: a panel per rank, B_N at N = 3, 4, 6 (<= d - 2) and not at 7."""
    panels = [ax for ax in fig.axes if ax.get_title(loc="left")]
    assert [ax.get_title(loc="left") for ax in panels] == ["r = 1", "r = 8"]
    for ax, r in zip(panels, (1, D)):
        line = _dashed(ax)
        assert list(line.get_xdata()) == [3, 4, 6]
        for N, y in zip(line.get_xdata(), line.get_ydata()):
            assert y == get_bound("n-keys").interval(D, r, D * D // r, int(N))[0]
    assert max(_dashed(panels[0]).get_ydata()) > 0  # rank 1, 64 heads: a positive bound
    caption = fig.texts[-1].get_text().replace("\n", " ")
    why = get_bound("n-keys").outside(D, 1, D * D, 7)  # N = 7 > d - 2: the bound's own reason
    assert "dashed: B_N (n-keys" in caption and f"not drawn where {why}" in caption


def _check_iid(fig: Any) -> None:
    """The paper's sweep (farthest task, i.i.d. keys, two layers): no B_N, and why."""
    assert all(_dashed(ax) is None for ax in fig.axes)
    caption = fig.texts[-1].get_text().replace("\n", " ")
    for part in ("B_N (n-keys) is not drawn", "the farthest task, not nearest neighbour",
                 "iid keys, not orthonormal (D_N)", "2 layers, not one"):
        assert part in caption


def test_bound_is_drawn_under_each_rank_where_it_is_proved() -> None:
    rows = _rows("nearest", "orthonormal", 1, (3, 4, 6, 7), _rising)
    _check_on_dn(preset_figure(VARY_N, rows, "quick", get_bound("n-keys")))


def test_bound_is_not_drawn_for_the_papers_sweep_and_the_caption_says_why() -> None:
    rows = _rows("farthest", "iid", 2, (4, 8, 16), _rising)
    _check_iid(preset_figure(VARY_N, rows, "quick", get_bound("n-keys")))


def test_the_checks_fail_when_the_bound_ignores_the_law_of_the_keys() -> None:
    """Planted: a coverage test that accepts any run (B_N drawn on i.i.d. keys)."""
    rows = _rows("farthest", "iid", 2, (4, 6), _rising)
    with plant("workbench.verifiers.n_figure:why_no_bound", replaced(lambda row, bound: None)):
        fig = preset_figure(VARY_N, rows, "quick", get_bound("n-keys"))
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
