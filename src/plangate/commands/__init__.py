"""One module per verb a user types (``plangate <verb>``), listed in :data:`plangate.cli.COMMANDS`.

Each has ``add_parser(subparsers)``, which adds the verb's parser; ``run(args) -> int``, which
carries it out and returns an exit code; and ``EXIT_CODES``
(:class:`~plangate.errors.ExitCodes`), its exit code table in docs/exit-codes.md. A verb
with subcommands prints its own help when none is given. Nothing else lives here: what a
verb does is in the modules below it (:mod:`plangate.install`, :mod:`plangate.journal_survey`…).
"""
