"""Protected paths: the files that hold the gate, kept out of the gated agent's reach.

A PreToolUse call that would change one of them is refused (``protected_path``), and so is a
Bash command that runs a command only a person may run (``protected_command``). What is
protected is :mod:`.places`; how a Bash command is read is :mod:`.shell` and
:mod:`.commands`; the decision and its log line are :mod:`.decide`.

Hook path: standard library and plangate's own modules only, imported lazily; nothing here is
imported by this package module itself.
"""
