"""Attention layers and score functions with K stacked models per call (imports core and native)."""
