"""A preset, written as docs/extending.md's example (its import loads torch)."""

from __future__ import annotations

from workbench.verifiers.presets import Preset, random_features_runs

RF_TIED = Preset("every-kind-rf", "random features with tied heads (q = k)", "generalized",
                 "the class the certified bound covers", "H", ("d",), True,
                 lambda scale, seed: random_features_runs("every-kind-rf", scale, seed,
                                                          law="tied"))
