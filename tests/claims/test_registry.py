"""Evidence, verdicts and the registry (workbench/proofs/claim.py, registry.py): verdicts are
decided beyond the CI, the runner respects dependencies, and every built-in claim holds at quick
scale with honest intervals (docs/architecture.md)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.claims.conftest import expected_verdict
from workbench.proofs.claim import INTERVALS, CheckContext, Claim, Evidence, combine
from workbench.proofs.registry import (
    broken_dependencies,
    builtin_claims,
    dependency_order,
    run_claims,
)


def ev(value, bound, relation, ci=None, tol=0.0, resolution=None):
    return Evidence(value, bound, relation, "monte_carlo" if ci else "exact", ci=ci,
                    tolerance=tol, resolution=resolution)


@pytest.mark.parametrize(
    "value,bound,relation,ci,verdict",
    [
        (0.5, 1.0, "<=", None, "holds"),
        (1.5, 1.0, "<=", None, "violated"),
        (0.5, 1.0, "<=", (0.4, 0.9), "holds"),
        (0.9, 1.0, "<=", (0.8, 1.1), "inconclusive"),
        (1.2, 1.0, "<=", (1.1, 1.3), "violated"),
        (1.2, 1.0, ">=", (1.1, 1.3), "holds"),
        (1.0, 1.0, ">=", (0.9, 1.1), "inconclusive"),
        (0.5, 1.0, ">=", (0.4, 0.6), "violated"),
    ],
)
def test_evidence_verdicts(value, bound, relation, ci, verdict):
    assert ev(value, bound, relation, ci).verdict == verdict


@pytest.mark.parametrize(
    "bound,ci,resolution,level,verdict",
    [
        (1.02, (0.95, 1.05), 0.06, None, "holds"),
        (1.2, (0.95, 1.05), 0.06, None, "violated"),
        (1.02, (0.95, 1.05), 0.04, None, "inconclusive"),  # half-width 0.05 > resolution
        (1.2, (0.95, 1.05), 0.04, None, "violated"),  # too wide to confirm, yet it refutes 1.2
        (1.02, (0.95, 1.05), None, 0.999, "inconclusive"),  # no stated resolution
        (1.02, (0.95, 1.05), None, 1.0, "holds"),  # a rigorous enclosure needs none
    ],
)
def test_equality_needs_a_resolution(bound, ci, resolution, level, verdict):
    e = Evidence(1.0, bound, "==", "monte_carlo", ci=ci, ci_level=level, resolution=resolution)
    assert e.verdict == verdict
    d = e.to_dict()
    assert d["resolution"] == resolution and d["verdict"] == verdict and "interval" in d


def test_tolerance_absorbs_rounding_only():
    assert ev(1e-13, 0.0, "<=", tol=1e-12).verdict == "holds"
    assert ev(1e-11, 0.0, "<=", tol=1e-12).verdict == "violated"


def test_combine_and_conjectures_never_hold():
    holds, incon = ev(0, 1, "<="), ev(0.9, 1, "<=", (0.8, 1.1))
    assert combine([holds, holds], "theorem") == "holds"
    assert combine([holds, incon], "theorem") == "inconclusive"
    assert combine([holds, ev(2, 1, "<=")], "theorem") == "violated"
    assert combine([holds], "conjecture") == "inconclusive"
    assert combine([], "lemma") == "inconclusive"


def test_runner_marks_dependents_of_violated_claims_unsupported():
    claims = {
        "a": Claim("a", "A", "lemma", lambda ctx: [ev(2, 1, "<=")]),
        "b": Claim("b", "B", "theorem", lambda ctx: [ev(0, 1, "<=")], depends_on=("a",)),
        "c": Claim("c", "C", "lemma", lambda ctx: [ev(0, 1, "<=")]),
        "d": Claim("d", "D", "lemma", lambda ctx: 1 / 0),
    }
    res = {r.claim.id: r for r in run_claims(CheckContext(), claims=claims)}
    assert res["a"].verdict == "violated" and res["b"].verdict == "unsupported"
    assert res["c"].verdict == "holds"
    assert res["d"].verdict == "error" and "ZeroDivisionError" in res["d"].error


def test_dependency_order_and_cycles():
    f = lambda ctx: []  # noqa: E731
    claims = {"b": Claim("b", "", "lemma", f, ("a",)), "a": Claim("a", "", "lemma", f)}
    assert dependency_order(claims) == ["a", "b"]
    claims["a"] = Claim("a", "", "lemma", f, ("b",))
    with pytest.raises(ValueError, match="cycle"):
        dependency_order(claims)
    with pytest.raises(ValueError, match="unknown"):
        dependency_order({"x": Claim("x", "", "lemma", f, ("zzz",))})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=14),
       st.sets(st.integers(0, 9), max_size=2))
def test_graph_algorithms_agree_with_networkx(edges, unknown):
    """dependency_order and broken_dependencies (pure Python, so that check does not import
    networkx) against networkx on random dependency graphs, cycles and unknown ids included."""
    import networkx as nx

    f = lambda ctx: []  # noqa: E731
    deps: dict[str, list[str]] = {f"c{i}": [] for i in range(8)}
    for a, b in edges:
        deps[f"c{b}"].append(f"c{a}")
    for u in unknown:
        deps[f"c{u % 8}"].append(f"zz{u}")
    claims = {k: Claim(k, "", "lemma", f, tuple(v)) for k, v in deps.items()}
    g = nx.DiGraph()
    g.add_nodes_from(claims)
    g.add_edges_from((d, k) for k, v in deps.items() for d in v if d in claims)
    bad = {k for k, v in deps.items() if any(d not in claims for d in v)}
    for comp in nx.strongly_connected_components(g):
        if len(comp) > 1 or any(g.has_edge(n, n) for n in comp):
            bad |= comp
    bad |= {x for b in list(bad) for x in nx.descendants(g, b)}
    assert set(broken_dependencies(claims)) == bad
    ok = {k: c for k, c in claims.items() if k not in bad}
    sub = g.subgraph(ok)
    assert dependency_order(ok) == list(nx.lexicographical_topological_sort(sub))
    if nx.is_directed_acyclic_graph(g) and not unknown:
        assert dependency_order(claims) == list(nx.lexicographical_topological_sort(g))
    elif not unknown:
        with pytest.raises(ValueError, match="cycle"):
            dependency_order(claims)


@pytest.mark.parametrize("bad", [dict(relation="<"), dict(method="guess"), dict(ci=(2.0, 1.0)),
                                 dict(interval="wald"), dict(resolution=0.0)])
def test_evidence_validation(bad):
    kw = dict(value=0.0, bound=1.0, relation="<=", method="exact") | bad
    with pytest.raises(ValueError):
        Evidence(**kw)


def test_builtin_claims_all_hold_at_quick_scale(quick_results):
    results = list(quick_results.values())
    want = {r.claim.id: expected_verdict(r) for r in results}
    assert results and all(r.verdict == want[r.claim.id] and r.error is None for r in results), [
        (r.claim.id, r.verdict, r.error) for r in results if r.verdict != want[r.claim.id]
    ]
    # a conjecture's evidence may all agree, yet it is never marked as holding
    assert all(
        e.verdict == "holds" for r in results if r.claim.kind == "conjecture" for e in r.evidence
    )
    assert set(builtin_claims()) == {r.claim.id for r in results}
    # every statistical interval says which interval it is; every statistical == its resolution
    stat = [(r.claim.id, e) for r in results for e in r.evidence
            if e.ci is not None and (e.ci_level is None or e.ci_level < 1)]
    assert stat
    assert not [(c, e.to_dict()) for c, e in stat if e.interval not in INTERVALS]
    assert not [(c, e.to_dict()) for c, e in stat if e.relation == "==" and e.resolution is None]


def test_every_check_takes_the_context_and_nothing_else():
    """A claim's check is ``check(ctx)``: faults are planted with ``workbench.testing``, never
    through extra parameters of the check."""
    import inspect

    bad = {}
    for cid, c in builtin_claims().items():
        params = list(inspect.signature(inspect.unwrap(c.check)).parameters)
        if params != ["ctx"]:
            bad[cid] = params
    assert not bad, bad
