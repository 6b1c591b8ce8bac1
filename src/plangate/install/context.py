"""What one ``plangate setup`` run works with: the places it writes and the streams it
reports to, resolved once and handed to every step."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TextIO

from plangate import hook_registry
from plangate.install.skill_bundle import bundled_skills_dir
from plangate.locations import claude_config_dir


@dataclass(frozen=True)
class InstallContext:
    """``claude_dir``: Claude Code's config folder; ``settings_path``: the settings file
    setup edits (the user's, or with ``--project`` the project's); ``skills_dir``: where the
    skills go; ``flags``: each gate switch's flag (``None`` when not given); ``python``: the
    interpreter the hooks run; ``environ``: the environment the switches are resolved in."""

    claude_dir: str
    cwd: str | None
    settings_path: str
    skills_dir: str
    project: bool
    flags: dict[str, bool | None]
    out: TextIO
    err: TextIO
    skills_source: str
    python: str
    environ: Mapping[str, str]

    @classmethod
    def create(
        cls,
        *,
        project: bool,
        out: TextIO,
        err: TextIO | None = None,
        ceo_review_gate: bool | None = None,
        autoplan_gate: bool | None = None,
        cwd: str | None = None,
        skills_source: str | None = None,
        python: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> InstallContext:
        """The context of a run; ``err``, ``cwd``, ``skills_source``, ``python`` and
        ``environ`` default to the process's own."""
        claude_dir = claude_config_dir()
        if project:
            settings_path = os.path.join(cwd or os.getcwd(), ".claude", "settings.json")
        else:
            settings_path = os.path.join(claude_dir, "settings.json")
        return cls(
            claude_dir=claude_dir,
            cwd=cwd,
            settings_path=settings_path,
            skills_dir=os.path.join(claude_dir, "skills"),
            project=project,
            flags={
                hook_registry.CEO_REVIEW_GATE: ceo_review_gate,
                hook_registry.AUTOPLAN_GATE: autoplan_gate,
            },
            out=out,
            err=err if err is not None else sys.stderr,
            skills_source=skills_source if skills_source is not None else bundled_skills_dir(),
            python=python if python is not None else sys.executable,
            environ=environ if environ is not None else os.environ,
        )

    def folder(self) -> str:
        """The working folder: the one given, else the process's (read when asked)."""
        return self.cwd or os.getcwd()


def entry_conditions(ctx: InstallContext, setup: str = "plangate setup") -> tuple[str, ...]:
    """The ``if`` conditions of the contracts' Read and Agent entries, from the contracts
    known now for the working folder (library, user, project, beside the skills). Each
    contract that parses is kept as its file's good version; one that does not is named on
    ``ctx.err`` (its line and remedy: fix it, then ``setup`` again) and registered from its
    fallback, if it has one."""
    return registered_conditions(ctx.folder(), ctx.err, setup)


def registered_conditions(
    folder: str, err: TextIO, setup: str = "plangate setup"
) -> tuple[str, ...]:
    """What setup (and ``plangate settings --contracts``) registers for ``folder``: the
    conditions, with a warning on ``err`` for each contract that does not parse."""
    from plangate.contracts import entries

    found = entries.survey(folder, record=True)
    for item, fallback in found.broken:
        message, remedy = entries.broken_note(item, fallback, setup)
        print(f"warning: {message}\n  fix: {remedy}", file=err)
    return entries.conditions(found.covered())
