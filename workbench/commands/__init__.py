"""CLI subcommands, one module per command group; `workbench.cli` assembles them."""
