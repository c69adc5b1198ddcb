"""The mathematics: sphere samplers, targets, harmonics, head kernels and bounds (no I/O)."""
