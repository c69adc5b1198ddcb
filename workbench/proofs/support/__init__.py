"""Code the claims share that is not itself a claim (docs/architecture.md, Claims).

A claim module (``workbench.proofs.paper``) imports no other claim module; what several of them
need lives here, in modules named for what they hold:

- ``exact_harmonics``: exact-arithmetic references for ``N(d, l)`` and ``eta_l^2``;
- ``eq2_models``: generalized-attention (Eq. 2) models for Theorem 2's reductions, and the
  reduction's decomposition of an instance;
- ``theorem3``: the documented reading of Theorem 3's biased target and its degree energies;
- ``biased_training``: generalized attention with learned biases trained on that target;
- ``soft_reference``: independent (scipy, mpmath) evaluations of the soft bounds' ingredients.
"""
