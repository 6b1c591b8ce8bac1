"""One module per verb a user types; each command is a typed function returning an exit code."""
