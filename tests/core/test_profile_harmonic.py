"""Targets as objects and the harmonic count for any profile (workbench/core/profiles.py,
workbench/core/bounds/profiles/profile_energy.py, profile_harmonic.py;
docs/derivations/soft_targets.md)."""

from __future__ import annotations

import numpy as np
import pytest

from workbench import plugins
from workbench.core.bounds.harmonic_count.exact_energy import eta2_enclosures, to_float
from workbench.core.bounds.harmonic_count.harmonic import harmonic_bound, heads_needed_search
from workbench.core.bounds.profiles.profile_energy import profile_energies
from workbench.core.bounds.profiles.profile_harmonic import profile_bound, profile_heads_needed
from workbench.core.profiles import Profile, check_profile, sign_profile, tanh_profile


@pytest.mark.parametrize("vc", ["eq2", "query-dependent-values"])
def test_nearest_is_todays_bound_bit_for_bit(vc: str) -> None:
    prof = plugins.get("target", "nearest").profile_at()
    for d, r, H in ((3, 1, 1), (8, 2, 4), (16, 1, 16), (12, 11, 1)):
        new, old = profile_bound(prof, d, r, H, value_class=vc), harmonic_bound(d, r, H,
                                                                               value_class=vc)
        assert (new.value, new.enclosure, new.tail, new.degrees_summed) == (
            old.value, old.enclosure, old.tail, old.degrees_summed)
        assert new.rigorous
    a, b = profile_heads_needed(prof, 8, 1, 0.1), heads_needed_search(8, 1, 0.1)
    assert (a.heads, a.max_degree, a.tail) == (b.heads, b.max_degree, b.tail)


def test_general_path_on_sign_contains_the_exact_energies() -> None:
    """The arb integrals (never used for nearest) against the exact ratio recurrence."""
    generic = Profile("sign via arb", np.sign, arb=lambda z, an: z * 0 + 1, key=("test-sign",))
    e = profile_energies(generic, 6, 21)
    lo, hi = eta2_enclosures(6, 21, 128)
    for i in range(len(lo)):
        assert e.lo[i] <= to_float(hi[i], 128) and to_float(lo[i], 128) <= e.hi[i]
        assert e.hi[i] - e.lo[i] < 1e-15
    assert e.rigorous and e.total[0] <= 1.0 <= e.total[1]
    off = profile_energies(Profile("0.97 sign", lambda t: 0.97 * np.sign(t),
                                   arb=lambda z, an: z * 0 + 0.97, key=("test-sign-97",)), 6, 3)
    assert off.hi[0] < to_float(lo[0], 128)  # a planted 3 % scale is visible


def test_quadrature_profile_is_flagged_not_rigorous() -> None:
    q = profile_energies(Profile("tanh numpy", tanh_profile(4.0).psi), 8, 21)
    a = profile_energies(tanh_profile(4.0), 8, 21)
    assert not q.rigorous and a.rigorous
    assert max(abs(x - y) for x, y in zip(q.lo, a.lo)) < 1e-13
    b = profile_bound(Profile("tanh numpy", tanh_profile(4.0).psi), 8, 1, 2, max_degree=21)
    assert b.rigorous is False


def test_bound_grows_towards_hardmax_and_heads_needed_with_beta() -> None:
    d, r = 8, 1
    soft = [profile_bound(tanh_profile(b), d, r, 2, max_degree=31).value for b in (1.0, 4.0, 16.0)]
    hard = profile_bound(sign_profile(), d, r, 2, max_degree=31).value
    assert soft[0] < soft[1] < soft[2] < hard
    heads = [profile_heads_needed(tanh_profile(b), d, r, 0.05).heads for b in (4.0, 16.0)]
    assert heads[0] < heads[1]
    assert profile_bound(tanh_profile(4.0), d, d - 1, 3).value == 0.0


@pytest.mark.parametrize(("psi", "why"), [
    (np.cos, "odd"), (lambda t: 2 * np.sin(t), "<= 1"), (lambda t: t ** 2, "odd"),
    (lambda t: np.ones(3), "shape"), (lambda t: np.where(t == 0, np.nan, np.sign(t)), "finite"),
])
def test_bad_profiles_are_refused_with_one_line(psi, why: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=why) as e:
        check_profile(psi, "m:f")
    assert "\n" not in str(e.value)


def test_registry_holds_the_builtin_targets_and_plain_functions() -> None:
    known = plugins.available("target")
    assert {"nearest", "soft-nearest", "farthest", "theorem3-biased"} <= set(known)
    assert known["farthest"].profile_at().label == "-sign(t)"
    assert known["theorem3-biased"].profile is None
    t = plugins.get("target", "numpy:tanh")
    assert t.profile_at().has_exact_form is False and t.N == (2,)
    with pytest.raises(ValueError, match="odd"):
        plugins.get("target", "numpy:cos")
    with pytest.raises(ValueError, match="not a parameter"):
        known["soft-nearest"].resolve({"temp": "1"})
    with pytest.raises(ValueError, match="must be a float"):
        known["soft-nearest"].resolve({"beta": "hot"})


def test_a_sympy_form_with_a_branch_cut_is_rigorous_and_agrees_with_quadrature() -> None:
    import sympy as sp

    def psi(t: np.ndarray) -> np.ndarray:
        return t / np.sqrt(1 / 16 + t * t)

    exact = Profile("algebraic", psi, sympy=lambda t: t / sp.sqrt(sp.Rational(1, 16) + t**2),
                    key=("test-algebraic",))
    a, q = profile_energies(exact, 7, 15), profile_energies(Profile("q", psi), 7, 15)
    assert a.rigorous and max(h - lo for lo, h in zip(a.lo, a.hi)) < 1e-14
    assert all(lo - 1e-13 <= v <= h + 1e-13 for lo, h, v in zip(a.lo, a.hi, q.lo))
    with pytest.raises(ValueError, match="may use"):
        profile_energies(Profile("atan", np.arctan, sympy=sp.atan, key=("test-atan",)), 5, 3)


def test_the_proved_monotone_parts_in_beta() -> None:
    """eta_1(psi_beta) and E psi_beta^2 are non-decreasing in beta (docs/derivations/
    soft_targets.md, "Monotonicity in beta"): strictly, with disjoint enclosures."""
    es = [profile_energies(tanh_profile(b), 8, 1) for b in (0.5, 1.0, 4.0, 16.0, 64.0)]
    for a, b in zip(es, es[1:]):
        assert a.hi[0] < b.lo[0] and a.total[1] < b.total[0]
