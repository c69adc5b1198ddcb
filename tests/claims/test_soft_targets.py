"""Claims of workbench/proofs/paper/soft_targets.py: each holds at quick scale, and each is
refuted by a realistic planted fault."""

from __future__ import annotations

from tests.claims.conftest import assert_module_holds, run_claim
from workbench.testing import mapped, plant


def test_soft_target_claims_hold_at_quick_scale(quick_results) -> None:  # type: ignore[no-untyped-def]
    assert_module_holds(quick_results, "workbench.proofs.paper.soft_targets")


def test_energies_refute_a_gegenbauer_off_by_two_percent() -> None:
    from workbench.core.bounds.profiles.profile_energy import clear_cache

    wrap = mapped(lambda v: v * 1.02)
    clear_cache()  # balls cached by an earlier run would hide the fault
    try:
        with plant("workbench.core.bounds.numerics.gegenbauer_ball:normalized_at", wrap):
            assert run_claim("targets.profile_energies")[0] == "violated"
    finally:
        clear_cache()


def test_bound_refutes_a_halved_degree_count() -> None:
    def wrap(f):  # type: ignore[no-untyped-def]
        def faulty(*a, **k):  # type: ignore[no-untyped-def]
            deg, Ns, Ds = f(*a, **k)
            return deg, Ns, [D // 2 for D in Ds]
        return faulty
    with plant("workbench.core.bounds.profiles.profile_harmonic:_tables", wrap):
        assert run_claim("targets.soft_harmonic_bound")[0] == "violated"


def test_full_rank_refutes_a_wrong_temperature_in_the_profile() -> None:
    from workbench.core import profiles

    orig = profiles.tanh_profile
    with plant("workbench.core.profiles:tanh_profile", lambda f: lambda b: orig(b * 1.05)):
        assert run_claim("targets.full_rank_soft_exact")[0] == "violated"


def test_trained_refutes_a_bound_three_times_too_high() -> None:
    def wrap(f):  # type: ignore[no-untyped-def]
        import dataclasses

        def faulty(*a, **k):  # type: ignore[no-untyped-def]
            b = f(*a, **k)
            return dataclasses.replace(b, enclosure=(3 * b.enclosure[0], 3 * b.enclosure[1]))
        return faulty
    with plant("workbench.core.bounds.profiles.profile_harmonic:profile_bound", wrap):
        assert run_claim("targets.trained_respect_soft_bound")[0] == "violated"


def test_one_head_witness_holds_and_refutes_eta_five_percent_off() -> None:
    from workbench.core.bounds.profiles.profile_energy import clear_cache

    verdict, ev = run_claim("targets.one_head_witness_exact")
    assert verdict == "holds" and len(ev) == 2
    clear_cache()
    try:  # every eta_l(psi) 5 % high: its square 10.25 % high
        with plant("workbench.core.bounds.numerics.gegenbauer_ball:normalized_at",
                   mapped(lambda v: v * 1.05)):
            assert run_claim("targets.one_head_witness_exact")[0] == "violated"
    finally:
        clear_cache()
