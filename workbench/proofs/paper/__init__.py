"""One module per statement of the paper (plus its lemmas), each registering its claims."""
