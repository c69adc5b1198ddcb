"""What every figure of ``workbench report`` shares: fonts sized for a talk, axes chosen by the
data's range with plain-decimal ticks, the 0.5 reference line of docs/paper.md §2 ("Error"),
and saving as PNG and SVG with the same bytes on every run."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from workbench.core.safe_files import write_file

DPI = 100
LOG_RATIO = 10.0  # a log y axis only when the data's max / min exceeds this
X_LOG_RATIO = 4.0  # a log2 x axis (ranks, heads, N: doublings) from this max / min on
STYLE: dict[str, Any] = {
    "font.size": 12, "axes.titlesize": 14, "axes.labelsize": 13, "xtick.labelsize": 11,
    "ytick.labelsize": 11, "legend.fontsize": 11, "figure.titlesize": 15,
    "svg.hashsalt": "workbench", "svg.fonttype": "none", "axes.grid": True, "grid.alpha": 0.3,
}
QUANTITY = "E‖f − A‖²"  # the error of docs/paper.md §2, summed over coordinates
MIDPOINT_LABEL = "0.5: always answering the midpoint (x₁ + x₂)/2 on D₂"
HALF_LABEL = "0.5: half the zero model's error (the zero model scores 1)"


def pyplot() -> Any:
    """matplotlib's pyplot on the file-only Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plain(v: float) -> str:
    """A tick label in plain decimals: ``0.25``, ``0.001``, ``64`` (never ``6×10⁻¹``)."""
    if v == 0:
        return "0"
    if abs(v) >= 1 and float(v).is_integer():
        return f"{int(v)}"
    digits = max(0, -math.floor(math.log10(abs(v))) + 1)
    return f"{v:.{digits}f}".rstrip("0").rstrip(".")


def use_log(values: Iterable[float]) -> bool:
    """Log scale when every value is positive and ``max / min > LOG_RATIO``."""
    vs = [float(v) for v in values if v is not None and math.isfinite(v)]
    return bool(vs) and min(vs) > 0 and max(vs) / min(vs) > LOG_RATIO


def set_y_axis(ax: Any, values: Iterable[float]) -> bool:
    """Linear or log y axis by the data's range (zeros and negatives force linear), with
    plain-decimal ticks; whether it is log."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    vs = [float(v) for v in values if v is not None and math.isfinite(v)]
    pos = [v for v in vs if v > 0]
    log = use_log(pos) and len(pos) == len(vs)
    if log:
        ax.set_yscale("log")
        wide = max(pos) / min(pos) > 1000  # over three decades: one tick per decade
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0,) if wide else (1.0, 2.0, 5.0)))
        ax.yaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: plain(v)))
    return log


def set_x_axis(ax: Any, xs: Sequence[float], log_wanted: bool) -> bool:
    """A numeric x axis with a tick at each data value (plain integers or decimals); log base 2
    when the preset asks for it and max / min >= ``X_LOG_RATIO`` (r = 1, 2, 4, 8 evenly
    spaced). Whether it is log."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    ticks = sorted(set(float(x) for x in xs))
    log = log_wanted and bool(ticks) and ticks[0] > 0 and ticks[-1] / ticks[0] >= X_LOG_RATIO
    if log:
        ax.set_xscale("log", base=2)
        ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: plain(v)))
    return log


def reference_line(ax: Any, on_d2: bool) -> None:
    """The 0.5 line: the midpoint's error on ``D_2``, else half the zero model's error."""
    ax.axhline(0.5, color="#555555", linestyle=":", linewidth=1.6,
               label=MIDPOINT_LABEL if on_d2 else HALF_LABEL, zorder=1)


def save(fig: Any, stem: Path, name: str = "--out") -> list[str]:
    """Write ``stem.png`` and ``stem.svg`` (no date in the SVG, fixed ids: the same bytes on
    every run) by ``safe_files.write_file`` (errors name ``name``); the file names written."""
    plt = pyplot()
    names = []
    try:
        with plt.rc_context(STYLE):
            for ext in ("png", "svg"):
                path = stem.with_suffix(f".{ext}")
                meta = {"Date": None} if ext == "svg" else {"Software": None}
                write_file(path, lambda fh: fig.savefig(
                    fh, format=ext, dpi=DPI, metadata=meta,  # noqa: B023 - called at once
                    bbox_inches="tight", pad_inches=0.15), name)
                names.append(path.name)
    finally:
        plt.close(fig)
    return names
