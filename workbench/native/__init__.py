"""Optional compiled CPU kernels (C built at run time into a cache); fallbacks live in models.

Layering: imports nothing of the workbench (torch and the standard library only).
"""
