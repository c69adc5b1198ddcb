"""The mathematics: sphere samplers, targets, harmonics, head kernels and bounds (no I/O, but
``safe_files``: the one way every layer writes a file).

Layering: imports nothing of the workbench above it.
"""
