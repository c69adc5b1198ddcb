"""The workbench's own bounds, constructions, presets and targets, registered through
``workbench.plugins`` like any package's (docs/extending.md). The package's ``__init__`` hands
:func:`register_builtins` to the registry (``workbench.plugins.add_builtins``), which never
imports this module. Every function imports the mathematics only when called."""

from __future__ import annotations

from typing import Any

from workbench.core.bounds.value import (
    FIBER,
    HARMONIC_COUNT,
    N_KEYS,
    THEOREM3_LOWER,
    BoundValue,
)
from workbench.core.profiles import Profile, Target, sign_profile, tanh_profile
from workbench.plugins import (
    Bound,
    Construction,
    ParamRange,
    _extra_params,
    add_builtins,
    register,
)

# --------------------------------------------------------------------------------- bounds
_N2_D2 = "N = 2 on D_2 (two orthonormal keys, uniform queries), generalized attention (Eq. 2)"


def _value_only(evaluate: Any) -> Any:
    """A bound's value function, for the ``fn`` of a built-in (its labels come from
    ``evaluate``)."""
    return lambda d, r, H, N: evaluate(d, r, H, N).value


def _certified(value_class: str) -> Bound:
    def evaluate(d: int, r: int, H: int, N: int) -> BoundValue:
        from workbench.core.bounds.certified import certified_lower_bound

        return certified_lower_bound(d, r, H, value_class).bound_value

    suffix = "" if value_class == "eq2" else "-query-values"
    return Bound(f"certified{suffix}", _value_only(evaluate), value_class=value_class,
                 parts=(HARMONIC_COUNT, FIBER), evaluator=evaluate,
                 encoding=f"n2.harmonic_bound{suffix.replace('-', '_')}",
                 ref="paper.md#4-the-certified-lower-bound-for-n--2-ours",
                 description=f"the larger of the harmonic count and the fiber bound; {_N2_D2}")


def _harmonic(value_class: str) -> Bound:
    def evaluate(d: int, r: int, H: int, N: int) -> BoundValue:
        from workbench.core.bounds.harmonic_count.harmonic import harmonic_bound

        return BoundValue((harmonic_bound(d, r, H, value_class=value_class).part(),))

    suffix = "" if value_class == "eq2" else "-query-values"
    return Bound(f"harmonic{suffix}", _value_only(evaluate), value_class=value_class,
                 parts=(HARMONIC_COUNT,), evaluator=evaluate,
                 encoding=f"n2.harmonic_bound{suffix.replace('-', '_')}",
                 ref="derivations/lower_bound.md#lemma-6-result-truncation-evaluation",
                 description=f"the harmonic count (Theorem 2's D'_l count); {_N2_D2}")


def _fiber(value_class: str) -> Bound:
    def evaluate(d: int, r: int, H: int, N: int) -> BoundValue:
        from workbench.core.bounds.fiber_bound.fiber import fiber_bound

        return BoundValue((fiber_bound(d, r, H, value_class).part(),))

    suffix = "" if value_class == "eq2" else "-query-values"
    return Bound(f"fiber{suffix}", _value_only(evaluate), value_class=value_class,
                 parts=(FIBER,), evaluator=evaluate, encoding="n2.fiber_bound",
                 ref="derivations/fiber_bound.md#lemma-f4-the-result-monotonicity-in-r",
                 description=f"the fiber bound (0 when H r >= d); {_N2_D2}")


def _theorem3_lower() -> Bound:
    """Theorem 3's lower side for the documented reading of its biased target (Gaussian
    queries): ``ci[0]`` of ``biased_lower_bound``, a Hoeffding interval at 99.9 % over the
    stratified chi_d average (quick-scale energies: degrees <= 300, 1000 strata)."""

    def evaluate(d: int, r: int, H: int, N: int) -> BoundValue:
        from workbench.core.bounds.biased import biased_lower_bound
        from workbench.proofs.claim import CheckContext
        from workbench.proofs.support.theorem3 import target_energies

        return BoundValue((biased_lower_bound(target_energies(d, CheckContext()), r, H).part(),))

    return Bound("theorem3-lower", _value_only(evaluate), target="theorem3-biased",
                 value_class="query-dependent-values", parts=(THEOREM3_LOWER,),
                 evaluator=evaluate,
                 ref="derivations/biased_lower_bound.md#what-the-claims-assert",
                 description="Theorem 3's lower side on its biased target (reading; Gaussian "
                 "queries, D_2 keys), valid with probability 0.999 (Hoeffding over the strata)")


def _n_keys(value_class: str) -> Bound:
    """The bound beyond two keys (3 <= N <= d-2 on D_N), ``n_keys_bound``."""

    def evaluate(d: int, r: int, H: int, N: int) -> BoundValue:
        from workbench.core.bounds.sequence_length.n_keys import n_keys_bound

        return n_keys_bound(d, r, H, N, value_class)

    def domain(d: int, r: int, H: int, N: int) -> str | None:
        from workbench.core.bounds.sequence_length.n_keys import covered

        return covered(d, N)

    suffix = "" if value_class == "eq2" else "-query-values"
    return Bound(f"n-keys{suffix}", _value_only(evaluate), N=None, N_text="3..d-2",
                 domain=domain, value_class=value_class, parts=(N_KEYS,), evaluator=evaluate,
                 encoding=f"nkeys.bound{suffix.replace('-', '_')}",
                 ref="derivations/beyond_two_keys.md#result",
                 description="the bound beyond two keys: 3 <= N <= d-2 on D_N (N orthonormal "
                 "keys, uniform queries), generalized attention (Eq. 2)"
                 + ("" if value_class == "eq2" else " with query-dependent value maps"))


def _certified_n(value_class: str) -> Bound:
    """The certified bound at N >= 3 on D_N: every sequence-length bound that covers the point,
    as one value whose largest proved part decides (``certified_n_bound``)."""
    from workbench.core.bounds.sequence_length import certified_n as cn

    def evaluate(d: int, r: int, H: int, N: int) -> BoundValue:
        return cn.certified_n_bound(d, r, H, N, value_class)

    def domain(d: int, r: int, H: int, N: int) -> str | None:
        return cn.not_covered(d, N, value_class)

    suffix = "" if value_class == "eq2" else "-query-values"
    each = ", ".join(f"{e.name}: {e.N_text}" for e in cn.entries(value_class))
    return Bound(f"{cn.NAME}{suffix}", _value_only(evaluate), N=None,
                 N_text=f"3..d where a part covers ({each})", domain=domain,
                 value_class=value_class, parts=cn.part_kinds(value_class), evaluator=evaluate,
                 ref="derivations/beyond_two_keys.md#result",
                 description="the certified bound at N >= 3 on D_N (N orthonormal keys, uniform "
                 "queries): the largest of the sequence-length bounds that cover the point "
                 f"({each})"
                 + ("" if value_class == "eq2" else ", value maps that may depend on the query"))


def _bounds() -> list[Bound]:
    return [make(vc) for make in (_certified, _harmonic, _fiber, _n_keys, _certified_n)
            for vc in ("eq2", "query-dependent-values")] + [_theorem3_lower()]



# --------------------------------------------------------------------------- constructions
def full_rank(d: int, rank: int, heads: int, N: int, seed: int, *, beta: float = 0.0,
              eps: float = 0.01, points: str = "orthonormal") -> tuple[Any, Any]:
    """Fact 1: one full-rank head X softmax(beta X^T y) (beta = 0: beta_for(eps))."""
    from workbench.constructions import full_rank as fr

    b = beta if beta > 0 else fr.beta_for(eps, d, N, points)
    return fr.full_rank(d, b, N, points, generator=seed)


def random_features(d: int, rank: int, heads: int, N: int, seed: int, *,
                    law: str = "cosine_uniform", solver: str = "auto") -> tuple[Any, Any]:
    """Random rank-1 hardmax heads with least-squares values (C a = b); exact D_2 error."""
    from workbench.constructions import random_features as rf

    return rf.random_features(d, heads, law, solver, generator=seed)


def majority_vote(d: int, rank: int, heads: int, N: int, seed: int, *,
                  points: str = "orthonormal", copy_style: str = "generalized") -> tuple[Any, Any]:
    """Theorem 5: two layers of rank-1 majority voting (a tournament for N >= 3)."""
    from workbench.constructions import majority_vote as mv

    return mv.majority_vote(d, heads, N, points, copy_style, generator=seed)


def biased(d: int, rank: int, heads: int, N: int, seed: int, *, normalizer: str = "hardmax",
           beta: float = 100.0, points: str = "orthonormal",
           coefficients: str = "alternating") -> tuple[Any, Any, Any]:
    """Theorem 3: 2d^2+1 full-rank biased heads representing the biased target (Gaussian
    queries); returns the target as a third element."""
    from workbench.constructions import biased as bz

    model, claimed, family = bz.biased(d, N, normalizer, beta, points, None, coefficients,
                                       generator=seed)
    return model, claimed, family.target


def hardmax_rank1(d: int, rank: int, heads: int, N: int, seed: int, *,
                  steps: int = 200) -> tuple[Any, Any]:
    """The sandwich's rank-1 witness: tied rank-1 hardmax heads (q_h = k_h, values a_h I),
    directions optimised on the exact kernel error; exact D_2 error (any rank >= 1)."""
    _two_keys("hardmax-rank1", N)
    from workbench.constructions import optimized as opt

    w = opt.hardmax_rank1(d, heads, steps=steps, seed=seed)
    return opt.witness_model(w), opt.witness_claim(w)


def bayes_heads(d: int, rank: int, heads: int, N: int, seed: int, *, n_fit: int = 20_000,
                n_eval: int = 50_000) -> tuple[Any, Any]:
    """The sandwich's Bayes heads: H Bayes-optimal heads of key-rank r < d on random row
    spaces, least-squares scalar values; error on its own sample (empirical-Bernstein CI)."""
    _two_keys("bayes-heads", N)
    from workbench.constructions import optimized as opt

    w = opt.bayes_heads(d, rank, heads, n_fit=n_fit, n_eval=n_eval, seed=seed)
    return opt.witness_model(w), opt.witness_claim(w)


def _two_keys(name: str, N: int) -> None:
    if N != 2:
        raise ValueError(f"N must be 2 for {name}, a witness on D_2 (got {N})")


# ---------------------------------------------------------- memory estimates (torch-free)
def _full_rank_memory(d: int, rank: int, heads: int, N: int, **params: Any) -> Any:
    from workbench.verifiers.resources import full_rank_terms

    return full_rank_terms(d)


def _random_features_memory(d: int, rank: int, heads: int, N: int, **params: Any) -> Any:
    from workbench.verifiers.resources import rank_one_terms

    return rank_one_terms(d, heads)


def _majority_vote_memory(d: int, rank: int, heads: int, N: int, **params: Any) -> Any:
    from workbench.verifiers.resources import majority_vote_terms

    return majority_vote_terms(d, heads)


def _biased_memory(d: int, rank: int, heads: int, N: int, **params: Any) -> Any:
    from workbench.verifiers.resources import biased_terms

    return biased_terms(d, N)


def _hardmax_rank1_memory(d: int, rank: int, heads: int, N: int, *, steps: int = 200,
                          **params: Any) -> Any:
    from workbench.verifiers.resources import hardmax_rank1_terms

    return hardmax_rank1_terms(d, heads, steps)


def _bayes_heads_memory(d: int, rank: int, heads: int, N: int, *, n_fit: int = 20_000,
                        n_eval: int = 50_000, **params: Any) -> Any:
    from workbench.verifiers.resources import bayes_heads_terms

    return bayes_heads_terms(d, rank, heads, n_fit, n_eval)


def _make(fn: Any, **kw: Any) -> Construction:
    doc = " ".join((fn.__doc__ or "").split("\n\n")[0].split())  # the first paragraph
    return Construction(fn.__name__.replace("_", "-"), fn, params=_extra_params(fn),
                        description=doc, **kw)


# the declared ranges of the numeric parameters (``--param``): Adam steps of the rank-1 witness;
# samples of the Bayes heads' fit and evaluation (fewer than 100 leave the least-squares values
# and the Bernstein interval without meaning; the memory estimate bounds them from above too)
MAX_STEPS = 100_000
MIN_SAMPLES, MAX_SAMPLES = 100, 10**9

# the registered objects, also reachable as workbench.plugins.builtin:FULL_RANK and so on
FULL_RANK = _make(full_rank, memory=_full_rank_memory,
                  ranges={"beta": ParamRange(0.0), "eps": ParamRange(0.0, 1.0, True, True)},
                  defaults={"d": 8, "rank": 8, "heads": 1, "N": 2},
                  ref="paper.md#fact-1-one-full-rank-head-suffices")
RANDOM_FEATURES = _make(random_features, memory=_random_features_memory,
                        defaults={"d": 8, "rank": 1, "heads": 64, "N": 2},
                        ref="derivations/constructions.md#2-random-features")
MAJORITY_VOTE = _make(majority_vote, memory=_majority_vote_memory, ensemble=True,
                      defaults={"d": 8, "rank": 1, "heads": 15, "N": 2},
                      ref="paper.md#theorem-5-depth-helps-when-the-context-is-short")
BIASED = _make(biased, memory=_biased_memory, target="theorem3", queries="gaussian",
               ranges={"beta": ParamRange(0.0, lo_open=True)},
               defaults={"d": 2, "rank": 2, "heads": 9, "N": 2},
               ref="paper.md#theorem-3-exponential-separation")

HARDMAX_RANK1 = _make(hardmax_rank1, memory=_hardmax_rank1_memory,
                      ranges={"steps": ParamRange(0, MAX_STEPS)},
                      defaults={"d": 8, "rank": 1, "heads": 16, "N": 2},
                      ref="derivations/lower_bound.md#the-sandwich-certified-bound-against-"
                      "explicit-models")
BAYES_HEADS = _make(bayes_heads, memory=_bayes_heads_memory,
                    ranges={"n_fit": ParamRange(MIN_SAMPLES, MAX_SAMPLES),
                            "n_eval": ParamRange(MIN_SAMPLES, MAX_SAMPLES)},
                    defaults={"d": 8, "rank": 2, "heads": 4, "N": 2},
                    ref=HARDMAX_RANK1.ref)


def _constructions() -> list[Construction]:
    return [FULL_RANK, RANDOM_FEATURES, MAJORITY_VOTE, BIASED, HARDMAX_RANK1, BAYES_HEADS]


# --------------------------------------------------------------------------------- targets
def _nearest(X: Any, y: Any) -> Any:
    from workbench.core.targets import nearest_neighbour

    return nearest_neighbour(X, y)


def _soft_nearest(X: Any, y: Any, beta: float = 4.0) -> Any:
    from workbench.core import targets as tg

    b = _beta(beta)
    return tg.nearest_neighbour(X, y) if b == float("inf") else tg.soft_nearest_neighbour(X, y, b)


def _beta(beta: object) -> float:
    b = float(beta)  # type: ignore[arg-type]
    if not b >= 0:  # NaN too
        raise ValueError(f"--target-param beta must be a number >= 0 or inf (got {beta!r})")
    return b


def _soft_profile(beta: float = 4.0) -> Profile:
    return tanh_profile(_beta(beta))


def _farthest(X: Any, y: Any) -> Any:
    from workbench.core.targets import nearest_neighbour

    return nearest_neighbour(X, -y)  # argmax <x_i, -y> = argmin <x_i, y>


def _theorem3(X: Any, y: Any, seed: int = 0, coefficients: str = "alternating") -> Any:
    from workbench.constructions.biased import theorem3_family

    return theorem3_family(X.shape[2], X.shape[1], None, coefficients, generator=seed).target(X, y)


NEAREST = Target("nearest", lambda X, y: _nearest(X, y), lambda: sign_profile(),
                 description="hardmax nearest neighbour x_{argmax <x_i, y>} (the paper's "
                 "target; profile sign)", ref="paper.md#2-setting")
SOFT_NEAREST = Target("soft-nearest", _soft_nearest, _soft_profile, params={"beta": 4.0},
                      description="one softmax head X softmax(beta X^T y) (Fact 1's head; "
                      "profile tanh(beta t/sqrt2); beta = inf is nearest)",
                      ref="derivations/soft_targets.md", iid_scales=True)
FARTHEST = Target("farthest", lambda X, y: _farthest(X, y), lambda: sign_profile(flip=True),
                  description="farthest key x_{argmin <x_i, y>} (profile -sign: the nearest "
                  "bound's numbers)", ref="derivations/soft_targets.md")
THEOREM3 = Target("theorem3-biased", _theorem3, None,
                  params={"seed": 0, "coefficients": "alternating"}, queries="gaussian",
                  description="Theorem 3's biased target sum_j c_j x_{argmax(<x_i,y> + b_ij)} "
                  "(not odd in y: no profile; its bound is theorem3-lower)",
                  ref="paper.md#theorem-3-exponential-separation")


def _targets() -> list[Target]:
    return [NEAREST, SOFT_NEAREST, FARTHEST, THEOREM3]


def register_builtins(kind: str) -> None:
    """Register the built-in objects of ``kind`` (``bound``, ``construction``, ``preset`` or
    ``target``; a new kind adds its built-ins here)."""
    if kind == "target":
        for t in _targets():
            register("target", t, replace_existing=True)
    elif kind == "bound":
        for b in _bounds():
            register("bound", b, replace_existing=True)
    elif kind == "construction":
        for c in _constructions():
            register("construction", c, replace_existing=True)
    else:
        from workbench.verifiers.presets import PRESETS

        for p in PRESETS.values():
            register("preset", p, replace_existing=True)


add_builtins(register_builtins)
