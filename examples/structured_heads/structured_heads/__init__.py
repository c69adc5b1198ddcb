"""A worked plug-in of the attention-rank workbench (docs/extending.md): tied rank-1 heads from
a deterministic design, a conjectured lower bound that is too strong, and claims about both."""
