"""Pure mathematics: samplers, targets, attention, harmonics and symbolic bounds (no I/O)."""
