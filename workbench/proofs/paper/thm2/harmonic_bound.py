"""Theorem 2, Lemma 6: the harmonic count (a certified lower bound; models are confronted with
the larger of it and the fiber bound), re-evaluated independently in interval arithmetic
(docs/derivations/lower_bound.md), for both model classes: Eq. 2 (``D'_l``) and query-dependent
value maps (``d(d+1)/2 D'_l``).

Its test: ``tests/claims/test_thm2_harmonic_bound.py``.
"""

from __future__ import annotations

import numpy as np

import workbench.core.bounds.harmonic_count.harmonic as harmonic
from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.registry import claim
from workbench.proofs.support.exact_harmonics import (
    harmonic_count,
    independent_bound,
)


# --------------------------------------------------------------------------- Lemma 6
@claim(
    "thm2.harmonic_bound",
    "Harmonic count, a certified lower bound for N = 2 on D_2: "
    "err >= 1/2 sum_l eta_l^2 (1 - min(1, H D_l/N))",
    "theorem",
    depends_on=("thm2.projection_reduction", "thm2.odd_reduction", "thm2.conditional_law",
                "thm2.isotropy", "thm2.degree_dimension", "thm2.fixed_form_dimension",
                "harmonics.sign_coefficients", "harmonics.dimension"),
    statement="err >= LB_L = 1/2 sum_{l odd <= L} eta_l^2 (1 - min(1, H D_l / N(d,l))), "
    "D_l = D'_l (Eq. 2) or d(d+1)/2 D'_l (query-dependent value maps)",
    ref="derivations/lower_bound.md#lemma-6-result-truncation-evaluation",
    mark="ours",
)
def harmonic_bound_claim(ctx: CheckContext) -> list[Evidence]:
    from workbench.proofs.support.eq2_models import TINY
    bound = harmonic.harmonic_bound
    out: list[Evidence] = []
    # (1) the library's enclosure contains an independent interval evaluation
    quick = ((5, 1, 2, 41), (6, 2, 3, 41), (8, 1, 16, 101), (16, 3, 5, 61))
    cases = ctx.pick(quick, (*quick, (5, 1, 1, None), (8, 2, 4, None), (12, 5, 64, None),
                             (64, 1, 1, None)))
    classes = ("eq2", "query-dependent-values")
    for (d, r, H, L), vc in ((c, v) for c in cases for v in classes):
        lb = bound(d, r, H, max_degree=L, value_class=vc)
        lo, hi = independent_bound(d, r, H, lb.degrees_summed, vc)
        p = {"d": d, "r": r, "H": H, "L": lb.degrees_summed, "class": vc, "independent": [lo, hi]}
        out.append(Evidence((lo + hi) / 2, lb.value, "==", "interval", p, ci=(lo, hi),
                            ci_level=1.0,
                            note="library value inside the exact-factorial interval evaluation "
                            "of the full series (the tail counted)"))
    # the Eq. 2 bound is never below the query-dependent one (D'_l <= d(d+1)/2 D'_l)
    for d, r, H in ctx.pick(((6, 2, 3), (16, 1, 16)), ((6, 2, 3), (16, 1, 16), (32, 30, 1))):
        wide = bound(d, r, H, value_class="query-dependent-values").enclosure[1]
        out.append(Evidence(wide, bound(d, r, H).enclosure[0], "<=", "interval",
                            {"d": d, "r": r, "H": H},
                            note="query-dependent-values bound <= Eq. 2 bound"))
    # (2) monotone: non-increasing in H and in r
    for d in ctx.pick((6,), (6, 8, 12, 16)):
        Hs = ctx.pick([1, 3, 64, 10**5], [1, 2, 3, 8, 64, 1000, 10**5, 10**9])
        v = np.array([[bound(d, r, H).enclosure[0] for H in Hs] for r in range(1, d + 1)])
        rise = max(float(np.max(np.diff(v, axis=1))), float(np.max(np.diff(v, axis=0))))
        out.append(Evidence(rise, 0.0, "<=", "exact", {"d": d, "H": Hs},
                            note="largest increase of the bound along H or along r"))
    # (3) zero for r >= d-1. This is arithmetic, not a measurement: at r = d-1,
    # D'_l - N(d,l) = C(l+d-4, d-2) + C(l+d, d-2) - C(l+d-3, d-2) >= 0 (Lemma 6); the check
    # recomputes that difference from the independent homogeneous-polynomial count of N(d,l).
    for d in ctx.pick((5, 8, 16, 64), (3, 5, 8, 16, 32, 64, 128)):
        zeros = max(bound(d, r, 1).enclosure[1] for r in (d - 1, d))
        out.append(Evidence(zeros, 0.0, "==", "exact", {"d": d, "r": [d - 1, d]}))
        slack = min(harmonic.degree_dimension_bound(d, d - 1, l) - harmonic_count(d, l)
                    for l in range(1, 402, 2))
        out.append(Evidence(slack, 0, ">=", "exact",
                            {"d": d, "r": d - 1, "l_max": 401, "class": "eq2"},
                            note="arithmetic: min_l D'_l - N(d,l) at r = d-1 (every degree is "
                            "captured)"))
    # (3b) the truncation reaches the first contributing degree: r = d-2 is positive for d >= 32
    for d in ctx.pick((32, 64), (32, 48, 64, 128)):
        out.append(Evidence(bound(d, d - 2, 1).enclosure[0], TINY, ">=", "interval",
                            {"d": d, "r": d - 2, "H": 1, "class": "eq2"},
                            note="r = d-2 is not truncated to 0"))
    # (4) positive for r <= d-2 at H = 1
    for d in ctx.pick((5, 6, 8), (5, 6, 8, 10, 16)):
        low = min(bound(d, r, 1).enclosure[0] for r in range(1, d - 1))
        out.append(Evidence(low, TINY, ">=", "interval", {"d": d, "r": f"1..{d - 2}", "H": 1},
                            note="smallest harmonic count over r <= d-2 is > 0"))
    # (5) the counted tail: the enclosure tightens as L grows, and the default is settled
    for d, r, H in ctx.pick(((8, 1, 4),), ((8, 1, 4), (16, 2, 16), (64, 1, 1))):
        full = bound(d, r, H)
        prev = 0.0
        for L in (1, 41, 201):
            part = bound(d, r, H, max_degree=L)
            p = {"d": d, "r": r, "H": H, "L": L, "L_full": full.degrees_summed}
            out.append(Evidence(prev, part.enclosure[0], "<=", "interval", p,
                                note="lower end at the previous L <= lower end at L"))
            out.append(Evidence(full.enclosure[0], part.enclosure[1], "<=", "interval", p,
                                note="the default's lower end inside L's enclosure"))
            prev = part.enclosure[0]
        tr = full.truncation
        out.append(Evidence(float(tr is not None and tr.settled), 1.0, "==", "exact",
                            {"d": d, "r": r, "H": H, "L": full.degrees_summed},
                            note="the default truncation is settled to the printed digits"))
    # (6) the values docs/paper.md quotes at d = 64, r = 1: query-dependent values (the original
    # count) about 0.17 at H = 1 and 0.09 at H = 16384; Eq. 2 (D'_l) 0.489, 0.339 (H = 16), 0.124
    quotes = ((1, 0.17, "query-dependent-values"), (16384, 0.09, "query-dependent-values"),
              (1, 0.489, "eq2"), (16, 0.339, "eq2"), (16384, 0.124, "eq2"))
    for H, quoted, vc in quotes:
        lb = bound(64, 1, H, value_class=vc)
        out.append(Evidence(lb.value, quoted, "==", "interval",
                            {"d": 64, "r": 1, "H": H, "class": vc}, ci=lb.enclosure,
                            ci_level=1.0, tolerance=0.01,
                            note="docs/paper.md's rounded value ('about'), tolerance 0.01"))
    return out
