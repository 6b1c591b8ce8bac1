"""Workflow contracts: plangate holds any phased skill to its phases (``docs/contracts.md``).

A contract is a TOML file that names a workflow's skills, its phases in order, what each
phase must leave behind, which phases a person must approve, which paths each phase may
edit, and the workflow's definition of done. The modules, one job each:

    model        the parsed contract (plain ``__slots__`` classes)
    loader       TOML text -> model; every error names its line and its remedy
    locate       the line of a key in a TOML text (for the loader's errors)
    discovery    which contracts apply in a folder, and why
    compiled     the hook path's cache of parsed contracts (no ``tomllib`` per call)
    templates    path templates, variables from skill arguments, ``**`` globs
    artifacts    an artifact's requirements checked against the file
    bash_writes  the files a Bash command plainly writes
    snapshot     the project's files listed, measured (size, times, inode, mode, SHA-1), kept
    drift        the snapshot taken when a phase begins, compared when it is left and at stop
    (codes)      the contract codes live in the guard's one table: plangate.decisions.contract_codes
    entries      Read/Agent phase entries, and the ``if`` conditions setup registers for them
    state        the fold: the live chain's events -> the workflow's state in this session
    tracking     the fold's start in the journal index (an edit reloads only the run)
    approvals    a person's approvals: human turns, ``plangate approve`` records, flags
    rules        the decision for one call or one typed command
    evaluate     payload -> journal -> state -> rules -> decision, logged
    contents     a file's text once a Write, Edit or MultiEdit ran
    done         the definition of done, for the Stop gate
    stop_gate    the Stop/SubagentStop gate on seed 001's machinery

Hook path: standard library only; ``tomllib`` (and ``re`` for a contract's own pattern)
load only when a contract must be parsed or a pattern matched; ``subprocess`` (git) and
``hashlib`` only when a phase's snapshot is taken or compared.
"""
