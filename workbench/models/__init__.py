"""Attention layers and score functions with K stacked models per call.

Layering: imports workbench.core, workbench.native.
"""
