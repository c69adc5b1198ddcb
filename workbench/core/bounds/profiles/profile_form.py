"""A profile's exact form on balls (docs/derivations/soft_targets.md, step S3): its arb form, or
its sympy form compiled once into closures of arb operations, with flint's ``analytic`` flag
where a function has a branch cut. The energies' adaptive integrals (:mod:`profile_energy`), their
panel quadrature (:mod:`panel_energy`) and the distances between profiles all evaluate it here.
"""

from __future__ import annotations

from typing import Any

from workbench.core.profiles import Profile

__all__ = ["exact_form", "sympy_to_arb"]


def exact_form(profile: Profile) -> Any:
    """The profile's exact form as a function ``f(z, analytic)`` of a complex ball: its arb form,
    or its sympy form compiled by :func:`sympy_to_arb`."""
    if profile.arb is not None:
        return profile.arb
    assert profile.sympy is not None
    import sympy as sp

    t = sp.Symbol("t", real=True)
    return sympy_to_arb(profile.sympy(t), t)


_SYMPY_FUNCS = {"tanh": "tanh", "sinh": "sinh", "cosh": "cosh", "sin": "sin", "cos": "cos",
                "tan": "tan", "exp": "exp", "erf": "erf"}  # entire or meromorphic
_BRANCHED = {"log": "log", "sqrt": "sqrt"}  # branch cuts: evaluated with flint's analytic flag


def sympy_to_arb(expr: Any, t: Any) -> Any:
    """A function of a complex ball evaluating the sympy expression ``expr`` in ``t`` exactly:
    rationals become exact balls, ``pi`` and ``E`` arb constants, and ``+ * ** tanh sinh cosh
    sin cos tan exp erf log sqrt`` arb operations, those with a branch cut (``log``, ``sqrt``,
    a non-integer power) with flint's ``analytic`` flag, so that the integral stays rigorous.
    The tree is walked once, into closures (no sympy object is touched per evaluation); anything
    else raises ``ValueError`` here. The result is called as ``f(z, analytic)``."""
    import sympy as sp

    from workbench.core.rigorous import acb, arb, pi

    def build(e: Any) -> Any:
        if e == t:
            return lambda z, an: z
        if e.is_Integer:  # exact at every precision: built once
            n = acb(int(e))
            return lambda z, an: n
        if e.is_Rational:
            p, q = int(e.p), int(e.q)
            return lambda z, an: acb(arb(p) / q)
        if e.is_Float:
            x = acb(arb(float(e)))
            return lambda z, an: x
        if e is sp.pi:
            return lambda z, an: acb(pi())
        if e is sp.E:
            return lambda z, an: acb(arb(1).exp())
        if e.is_Add or e.is_Mul:
            parts = [build(a) for a in e.args]
            add = bool(e.is_Add)

            def fold(z: Any, an: bool) -> Any:
                out = acb(0 if add else 1)
                for f in parts:
                    out = out + f(z, an) if add else out * f(z, an)
                return out
            return fold
        if e.is_Pow:
            base, ex = (build(a) for a in e.args)
            if e.args[1].is_Integer:
                k = int(e.args[1])
                return lambda z, an: base(z, an) ** k
            return lambda z, an: base(z, an).pow(ex(z, an), analytic=an)
        name = type(e).__name__
        if name in _SYMPY_FUNCS and len(e.args) == 1:
            arg, method = build(e.args[0]), _SYMPY_FUNCS[name]
            return lambda z, an: getattr(arg(z, an), method)()
        if name in _BRANCHED and len(e.args) == 1:
            arg, method = build(e.args[0]), _BRANCHED[name]
            return lambda z, an: getattr(arg(z, an), method)(analytic=an)
        raise ValueError(f"a target's sympy form may use + * ** and "
                         f"{sorted(_SYMPY_FUNCS) + sorted(_BRANCHED)} only (got {name})")

    return build(expr)
