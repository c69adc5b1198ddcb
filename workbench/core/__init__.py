"""The mathematics: sphere samplers, targets, harmonics, head kernels and bounds (no I/O).

Layering: imports nothing of the workbench above it.
"""
