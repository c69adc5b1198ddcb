"""The certified lower bounds on the error of attention layers: one name per bound.

For N = 2 on D_2 (nearest neighbour of two orthonormal keys, uniform queries), against every
generalized-attention model with H heads of key-rank r in dimension d (docs/paper.md §4):

- :mod:`.harmonic`: ``harmonic_bound(d, r, H) -> HarmonicBound``, **the harmonic count**
  (Theorem 2's ``D'_l`` count, Lemmas 1-6 of docs/derivations/lower_bound.md), evaluated as an
  interval-arithmetic enclosure; ``heads_needed`` (the least H it does not exclude) and
  ``degree_dimension_bound`` (``D_l``) live there too. Zero for ``r >= d-1``.
- :mod:`.fiber`: ``fiber_bound(d, r, H) -> FiberBound``, **the fiber bound** (the energy the
  heads' key span can capture, Lemmas F1-F4 of docs/derivations/fiber_bound.md), a rigorous
  enclosure (:mod:`.fiber_enclosure`); valid for ``H r < d`` and 0 above. ``one_head_error``
  (the exact one-head error) and the fiber spectrum live there too.
- :mod:`.certified`: ``certified_lower_bound(d, r, H) -> CertifiedBound``, **the certified
  bound**: the larger of the two per value class. This is what "the bound" means everywhere a
  model is confronted with Theorem 2 (``bounds lower``, ``falsify --bound certified``, ``train``,
  the sandwich and the claims that test models against it).
- :mod:`.biased`: ``biased_lower_bound`` (Theorem 3's lower side, docs/derivations/
  biased_lower_bound.md): the harmonic count for the biased target with Gaussian queries.

Not here: Fact 1's *upper* bound on the error of the full-rank head at temperature beta is
``workbench.constructions.full_rank.error_upper_bound``.

The value classes are defined once, here (this module imports nothing, so the CLI can validate
``--class`` before the mathematics is loaded): ``"eq2"`` (Eq. 2: one fixed value map per head)
and ``"query-dependent-values"`` (value maps ``M_h(y)`` that may depend on the query).
"""

EQ2 = "eq2"
QUERY_VALUES = "query-dependent-values"
VALUE_CLASSES = (EQ2, QUERY_VALUES)

__all__ = ["EQ2", "QUERY_VALUES", "VALUE_CLASSES"]
