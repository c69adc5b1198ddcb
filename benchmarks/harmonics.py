"""Benchmark: closed-form eta_l(d) vs per-coefficient adaptive quadrature.

Quadrature is scipy.integrate.quad with the algebraic weight (1-t)^((d-3)/2) on [0, 1] (the usual
approach). Reference: the closed form in mpmath at 50 digits, itself confirmed by 30-digit mpmath
tanh-sinh quadrature (d <= 64, l <= 41) and by float64 Gauss-Jacobi (400 nodes).
Note: scipy quad can report convergence (no warning, small error estimate) and still be wrong
(d = 1024, l >= 41): ``quad_rel_err`` is recorded for every row it accepts.
Writes benchmarks/results/harmonics.json.

    python benchmarks/harmonics.py
"""

from __future__ import annotations

import json
import math
import time
import warnings
from pathlib import Path

import mpmath
import numpy as np
from scipy import integrate
from scipy.special import betaln, roots_jacobi

from workbench.core.harmonics import (
    dim_harmonics,
    gegenbauer_transform,
    legendre_d,
    sign_coefficient_lgamma,
    sign_coefficient_mp,
    sign_coefficients,
)

DIMS = [5, 64, 1024, 4096]
DEGREES = [1, 3, 11, 41, 101, 201, 401]


def quad_eta(d: int, l: int) -> tuple[float, bool]:
    """eta_l by scipy quad; returns (value, converged)."""
    a = (d - 3) / 2

    def f(t: float) -> float:
        return legendre_d(d, l, np.array([t]))[l, 0] * (1 + t) ** a

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            val, abserr = integrate.quad(f, 0, 1, weight="alg", wvar=(0, a), limit=200)
        except (integrate.IntegrationWarning, RuntimeWarning, OverflowError):
            return float("nan"), False
    try:
        scale = math.sqrt(dim_harmonics(d, l))
    except OverflowError:
        return float("nan"), False
    val = 2 * val * scale * math.exp(-betaln(0.5, (d - 1) / 2))
    return val, bool(math.isfinite(val) and abserr * scale < 1e-8)


def gauss_jacobi_eta(d: int, l: int, n: int = 400) -> float | None:
    """Independent float64 check: Gauss-Jacobi on [0, 1] (t = (1+s)/2, weight (1-s)^a)."""
    a = (d - 3) / 2
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s, w = roots_jacobi(n, a, 0.0)
        t = (1 + s) / 2
        f = legendre_d(d, l, t)[l] * ((3 + s) / 2) ** a
        val = float((w * f).sum()) * 0.5 ** (a + 1)
    try:
        val *= 2 * math.sqrt(dim_harmonics(d, l)) * math.exp(-betaln(0.5, (d - 1) / 2))
    except OverflowError:
        return None
    return val if math.isfinite(val) else None


def main() -> None:
    rows = []
    for d in DIMS:
        t0 = time.perf_counter()
        reps = 20
        for _ in range(reps):
            from workbench.core.harmonics import _sign_coefficients_cached

            _sign_coefficients_cached.cache_clear()
            closed = sign_coefficients(d, max(DEGREES))
        t_closed = (time.perf_counter() - t0) / reps / ((max(DEGREES) + 1) // 2)
        t0 = time.perf_counter()
        lg = sign_coefficient_lgamma(d, np.arange(1, max(DEGREES) + 1, 2))
        t_lgamma = (time.perf_counter() - t0) / len(lg)
        for l in DEGREES:
            ref = sign_coefficient_mp(d, l, dps=50)
            conf = None
            if d <= 64 and l <= 41:
                conf = float(abs(gegenbauer_transform(lambda t: mpmath.sign(t), d, l, 30) - ref))
            gj = gauss_jacobi_eta(d, l)
            t0 = time.perf_counter()
            q, ok = quad_eta(d, l)
            t_quad = time.perf_counter() - t0

            def rel(v: float, ref: mpmath.mpf = ref) -> float | None:
                return float(abs((mpmath.mpf(v) - ref) / ref)) if math.isfinite(v) else None

            rows.append({
                "d": d, "degree": l, "reference": mpmath.nstr(ref, 20),
                "closed_form": float(closed[l]), "closed_form_rel_err": rel(closed[l]),
                "lgamma_rel_err": rel(float(sign_coefficient_lgamma(d, l)[0])),
                "quad": q if ok else None, "quad_converged": ok,
                "quad_rel_err": rel(q) if ok else None,
                "mp_quad_30_abs_diff_from_reference": conf,
                "gauss_jacobi_400_rel_diff_from_reference": rel(gj) if gj is not None else None,
                "time_closed_per_coeff_s": t_closed, "time_lgamma_per_coeff_s": t_lgamma,
                "time_quad_per_coeff_s": t_quad,
                "speedup": t_quad / t_closed,
            })
            print(rows[-1])
    conv = [r for r in rows if r["quad_converged"]]
    summary = {
        "max_closed_form_rel_err": max(r["closed_form_rel_err"] for r in rows),
        "max_closed_form_rel_err_where_quad_converges": max(r["closed_form_rel_err"] for r in conv),
        "max_gauss_jacobi_rel_diff": max(r["gauss_jacobi_400_rel_diff_from_reference"] or 0
                                         for r in rows),
        "max_quad_rel_err_where_converged": max(r["quad_rel_err"] for r in conv),
        "quad_failures": [(r["d"], r["degree"]) for r in rows if not r["quad_converged"]],
        "min_speedup": min(r["speedup"] for r in rows),
        "median_speedup": float(np.median([r["speedup"] for r in rows])),
        "goal": "closed form >= 100x faster, rel err <= 1e-12 where quad converges",
    }
    summary["goal_met"] = bool(summary["min_speedup"] >= 100 and
                               summary["max_closed_form_rel_err_where_quad_converges"] <= 1e-12)
    out = Path(__file__).parent / "results" / "harmonics.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=2))
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
