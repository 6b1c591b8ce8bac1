"""``/autoplan`` artifacts: the files the skill's commands write and the guard trusts.

See ``docs/autoplan-artifacts.md``. :mod:`plangate.autoplan.layout` is on the hook path and
imports only the standard library; the command modules (``init``, ``checkpoint``, ``close``,
``gate``) are not. Keep this file empty of imports so the hook pays nothing for the package.
"""
