"""Theorem 2, the combination layer: the number every command prints for a value class (Eq. 2,
and value maps that depend on the query) is the larger of the harmonic count and the fiber bound
of that class, and each part is the class's own, checked against an evaluation that shares no
code with the library (docs/derivations/fiber_bound.md, Lemma F4 and its remark on
query-dependent value maps; docs/derivations/lower_bound.md, Lemma 6).

- The printed value: the registered bound (``certified``, ``certified-query-values``:
  ``bounds lower --bound``, ``falsify``, the sandwich's ``--bound``) and
  ``certified_lower_bound(...).bound_value`` (``bounds lower``, ``train``, the sandwich) give
  the same number, equal to the largest lower end of its parts.
- The harmonic-count part against the exact-factorial interval evaluation of its class
  (``proofs/support/exact_harmonics.independent_bound``) at the degrees it summed.
- The fiber part against a Monte Carlo over ``c ~ Beta`` with the direct-form spectrum of its
  class (``proofs/support/fiber_reference``), and 0 where the heads' keys span every direction.

A fault in how the parts are combined, or a class given another class's parts, is refuted here
even when each part's own code is sound.

Its test: ``tests/claims/test_thm2_combined.py``.
"""

from __future__ import annotations

from workbench.core.bounds import EQ2, QUERY_VALUES
from workbench.core.bounds.certified import certified_lower_bound
from workbench.plugins import get_bound
from workbench.proofs.claim import CheckContext, Evidence
from workbench.proofs.registry import claim
from workbench.proofs.support.exact_harmonics import independent_bound

REGISTERED = {EQ2: "certified", QUERY_VALUES: "certified-query-values"}
VALUE_RESOLUTION = 0.006  # a 2-3 % departure of a fiber bound of 0.2-0.4
FIBER = "derivations/fiber_bound.md"


def point_evidence(d: int, r: int, H: int, value_class: str, n: int, seed: int) -> list[Evidence]:
    """The printed value at one point and class, its combination and each of its parts."""
    from workbench.proofs.support.fiber_reference import fiber_monte_carlo
    p = {"d": d, "r": r, "H": H, "class": value_class}
    printed = get_bound(REGISTERED[value_class]).evaluate(d, r, H, 2)
    direct = certified_lower_bound(d, r, H, value_class).bound_value
    out = [Evidence(printed.value, direct.value, "==", "exact", {**p, "paths": 2},
                    note="registered bound vs certified_lower_bound: one printed number"),
           Evidence(printed.value, max(q.lower for q in printed.parts), "==", "exact",
                    {**p, "parts": [q.name for q in printed.parts]},
                    note="printed value vs the largest lower end of its parts")]
    harmonic = printed.part("harmonic count")
    assert harmonic.truncation is not None  # the harmonic count always sums a series
    lo, hi = independent_bound(d, r, H, harmonic.truncation.degrees_summed, value_class)
    out.append(Evidence(harmonic.lower, (lo + hi) / 2, "==", "interval",
                        {**p, "L": harmonic.truncation.degrees_summed, "independent": [lo, hi]},
                        ci=harmonic.enclosure, ci_level=1.0, tolerance=(hi - lo) / 2,
                        note="combined harmonic-count part vs exact-factorial interval sum"))
    fiber = printed.part("fiber")
    if H * r >= d:  # no fiber left: the part is 0 (arithmetic)
        out.append(Evidence(fiber.enclosure[1], 0.0, "==", "exact", p,
                            note="combined fiber part at H r >= d"))
    else:
        est = fiber_monte_carlo(d, r, H, value_class, n, seed)
        out.append(Evidence.estimate(est, "==", fiber.lower, params={**p, "n": n},
                                     resolution=VALUE_RESOLUTION,
                                     note="Monte Carlo of the class's fiber bound vs the "
                                     "combined fiber part"))
    return out


@claim(
    "thm2.combined_bound",
    "The bound printed for each value class is the larger of that class's harmonic count and "
    "fiber bound, each equal to an independent evaluation",
    "lemma",
    depends_on=("thm2.harmonic_bound", "thm2.fiber_value"),
    statement="certified(d, r, H, class) = max(LB_L(class), 1/2 (1 - E_c KyFan_class(c))) for "
    "class in {eq2, query-dependent-values}",
    ref=f"{FIBER}#lemma-f4-the-result-monotonicity-in-r",
    mark="ours",
)
def combined_bound_claim(ctx: CheckContext) -> list[Evidence]:
    n = ctx.pick(60_000, 400_000)
    # fiber chosen (H r < d) and harmonic count chosen (H r >= d), in both classes
    quick = ((6, 1, 2), (12, 2, 4), (16, 1, 8), (6, 1, 6), (8, 2, 4))
    full = (*quick, (8, 1, 3), (16, 2, 2), (10, 1, 4), (32, 1, 40))
    out: list[Evidence] = []
    for i, (d, r, H) in enumerate(ctx.pick(quick, full)):
        for j, vc in enumerate((EQ2, QUERY_VALUES)):
            out += point_evidence(d, r, H, vc, n, ctx.seed + 1310 + 2 * i + j)
    return out
