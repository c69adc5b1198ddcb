"""Claims of the paper, their checks, and the runner behind ``workbench check``."""
