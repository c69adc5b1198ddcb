"""Optional compiled CPU kernels (C built at run time into a cache); fallbacks live in models.

Layering: imports workbench.core (its one file writer, safe_files), torch and the standard library.
"""
