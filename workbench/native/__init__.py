"""Optional compiled CPU kernels (C built at run time into a cache); fallbacks live in models."""
