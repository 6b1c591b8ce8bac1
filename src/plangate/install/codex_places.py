"""Every place the Codex CLI (0.171.0) reads hooks from, and plangate's hooks in each.

Codex builds its configuration from layers and reads hooks from each layer twice, from the
layer's ``hooks.json`` and from the ``[hooks]`` table of its ``config.toml`` (seen with
``codex app-server`` ``hooks/list``; with both in one layer it warns "loading hooks from both
… prefer a single representation for this layer" and runs both):

* the system layer, ``/etc/codex/hooks.json`` and ``/etc/codex/config.toml``: managed, so
  Codex runs them with no trust;
* the user layer, ``$CODEX_HOME/hooks.json`` (where ``plangate setup --codex`` registers) and
  ``$CODEX_HOME/config.toml``;
* one project layer per folder from the project's root (the nearest folder above the
  working folder holding ``.git``, else the working folder) down to the working folder:
  ``<folder>/.codex/hooks.json`` and ``<folder>/.codex/config.toml``, run only in a project
  the user trusts;
* ``-c hooks.…`` on the command line (a session's flags, keyed ``/<session-flags>/config.toml``)
  and plugins' hooks, which no file here shows.

Each handler is keyed ``<file>:<event_label>:<group>:<handler>`` and, outside the system layer,
runs only when the user's ``config.toml`` trusts that key with the handler's current hash. Every
registration runs: the same plangate hook in two places (or twice in one) decides every call
twice and counts a held stop twice.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from plangate import hook_registry
from plangate.config import display_path
from plangate.errors import ConfigError
from plangate.install import settings_file
from plangate.install.check import OK, PROBLEM, WARN, Check

SYSTEM_DIR = "/etc/codex"
SYSTEM, USER, PROJECT = "system", "user", "project"
#: The module a plangate hook command runs (``… from plangate.hooks.X import main …``).
_MODULE = re.compile(r"(?:from |-m )" + re.escape(hook_registry.HOOK_MODULE_PREFIX) + r"(\w+)")
#: What every place but setup's says about its trust.
TRUSTED, UNTRUSTED, MODIFIED = "trusted", "never trusted", "edited since trusted"
MANAGED = "managed: runs with no trust"


@dataclass(frozen=True)
class Place:
    """One file Codex reads hooks from."""

    path: str
    layer: str  # SYSTEM, USER or PROJECT

    @property
    def toml(self) -> bool:
        return self.path.endswith(".toml")

    @property
    def shown(self) -> str:
        return display_path(self.path) + (" [hooks]" if self.toml else "")


@dataclass(frozen=True)
class Registration:
    """One plangate handler in one place."""

    place: Place
    event: str
    module: str
    key: str
    digest: str
    matcher: str | None = None


def project_folders(cwd: str) -> list[str]:
    """The folders whose ``.codex/`` Codex reads: the project's root down to ``cwd``."""
    here = os.path.realpath(cwd)
    chain = [here]
    folder = here
    while not os.path.exists(os.path.join(folder, ".git")):
        parent = os.path.dirname(folder)
        if parent == folder:
            return [here]
        folder = parent
        chain.append(folder)
    return list(reversed(chain))


def places(home: str, cwd: str, system_dir: str = SYSTEM_DIR) -> list[Place]:
    """Every file Codex 0.171.0 reads hooks from for a session in ``cwd``, in its order."""
    found = [
        Place(os.path.join(system_dir, "hooks.json"), SYSTEM),
        Place(os.path.join(system_dir, "config.toml"), SYSTEM),
        Place(os.path.join(home, "hooks.json"), USER),
        Place(os.path.join(home, "config.toml"), USER),
    ]
    for folder in project_folders(cwd):
        dot = os.path.join(folder, ".codex")
        if os.path.realpath(dot) == os.path.realpath(home):
            continue  # CODEX_HOME is ~/.codex and the session runs in ~: one layer, the user's
        found += [
            Place(os.path.join(dot, "hooks.json"), PROJECT),
            Place(os.path.join(dot, "config.toml"), PROJECT),
        ]
    return found


def _hooks_of(place: Place) -> Mapping[str, Any]:
    """The place's hooks as ``{"hooks": {event: groups}}`` (empty: no file, or no hooks)."""
    if not place.toml:
        return settings_file.read(place.path).data
    try:
        with open(place.path, "rb") as stream:
            data = tomllib.load(stream)
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(
            f"{display_path(place.path)} cannot be read as TOML ({error})",
            "fix it, then run plangate doctor again",
        ) from None
    table = data.get("hooks")
    if not isinstance(table, dict):
        return {}
    return {"hooks": {event: groups for event, groups in table.items() if event != "state"}}


def as_json_hooks(place: Place) -> dict[str, Any]:
    """The place's hooks as a ``hooks.json`` holds them (TOML handler keys spelled as
    ``hooks.json`` spells them), every group and handler at its position."""
    hooks = _hooks_of(place).get("hooks", {})
    converted: dict[str, Any] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            continue
        converted[event] = [
            {**group, "hooks": [_json_only(h) for h in group.get("hooks", [])]}
            if isinstance(group, dict)
            else group
            for group in groups
        ]
    return {"hooks": converted}


def _json_only(handler: Mapping[str, Any]) -> dict[str, Any]:
    """A TOML handler as ``hooks.json`` writes it: no TOML-only key left beside its twin."""
    out = _as_json_handler(handler)
    out.pop("timeout_sec", None)
    out.pop("status_message", None)
    return out


def module_of(command: object) -> str:
    """The plangate hook module a command runs (``?`` when it names none)."""
    found = _MODULE.search(command) if isinstance(command, str) else None
    return found.group(1) if found else "?"


def registrations(place: Place) -> list[Registration]:
    """plangate's handlers in one place, keyed and hashed as Codex does."""
    # imported here: codex_hooks imports this module for its checks
    from plangate.install.codex_hooks import event_label, trusted_hash

    data = _hooks_of(place)
    folder, name = os.path.split(place.path)
    key_path = os.path.join(os.path.realpath(folder), name)
    found = []
    for event, groups in settings_file.plangate_groups(data).items():
        for index, group in groups:
            for position, handler in enumerate(group["hooks"]):
                if not hook_registry.is_plangate_handler(handler):
                    continue
                handler = _as_json_handler(handler)
                found.append(
                    Registration(
                        place=place,
                        event=event,
                        module=module_of(handler.get("command")),
                        key=f"{key_path}:{event_label(event)}:{index}:{position}",
                        digest=trusted_hash(event, group, handler),
                        matcher=matcher
                        if isinstance(matcher := group.get("matcher"), str)
                        else None,
                    )
                )
    return found


def _as_json_handler(handler: Mapping[str, Any]) -> dict[str, Any]:
    """A TOML handler's keys as hooks.json spells them (``timeout_sec``, ``status_message``)."""
    out = dict(handler)
    if "timeout" not in out and "timeout_sec" in out:
        out["timeout"] = out["timeout_sec"]
    if "statusMessage" not in out and "status_message" in out:
        out["statusMessage"] = out["status_message"]
    return out


def trust_of(registration: Registration, state: Mapping[str, str]) -> str:
    if registration.place.layer == SYSTEM:
        return MANAGED
    trusted = state.get(registration.key)
    if trusted is None:
        return UNTRUSTED
    return TRUSTED if trusted == registration.digest else MODIFIED


def all_registrations(
    home: str, cwd: str, system_dir: str = SYSTEM_DIR
) -> tuple[list[Registration], list[Check]]:
    """plangate's handlers in every place, and a problem line for each place not readable."""
    found: list[Registration] = []
    unreadable: list[Check] = []
    for place in places(home, cwd, system_dir):
        try:
            found += registrations(place)
        except ConfigError as error:
            unreadable.append(Check("codex hooks", PROBLEM, str(error), error.remedy))
    return found, unreadable


def twice_check(found: list[Registration]) -> list[Check]:
    """A problem for each plangate hook registered more than once for one event."""
    by_hook: dict[tuple[str, str], list[Registration]] = {}
    for registration in found:
        by_hook.setdefault((registration.event, registration.module), []).append(registration)
    lines = []
    for (event, module), regs in by_hook.items():
        if len(regs) < 2:
            continue
        where = "; ".join(f"{r.place.shown} ({':'.join(r.key.split(':')[-3:])})" for r in regs)
        keep = next((r for r in regs if r.place.layer == USER and not r.place.toml), regs[0])
        others = sorted({r.place.shown for r in regs if r is not keep})
        lines.append(
            Check(
                "codex hooks twice",
                PROBLEM,
                f"plangate's {event} hook `{module}` is registered {len(regs)} times: {where}. "
                "Codex runs every registration it trusts, so each call is decided twice and "
                "a held stop is counted twice",
                f"keep the one in {keep.place.shown} and remove plangate's hook from "
                f"{', '.join(others)}, then run plangate doctor again",
            )
        )
    return lines


#: With the contracts' PreToolUse hook, the other hooks ``setup --codex`` registers beside it,
#: and what is lost without each.
COMPANIONS = {
    ("UserPromptSubmit", "prompt_expansion"): (
        "a phase the person types ($skill) is neither checked before it reaches the model nor "
        "snapshotted, so the files changed in it are not judged at its end"
    ),
    ("Stop", "contract_stop"): (
        "the final stop is never held: the definition of done and the files changed outside "
        "the phase (contract_drift) go unchecked"
    ),
}


def missing_check(found: list[Registration]) -> list[Check]:
    """A problem for each hook the contracts need beside their PreToolUse hook, registered
    nowhere (every place counts, trusted or not: trust has its own lines)."""
    have = {(r.event, r.module) for r in found}
    if ("PreToolUse", "contract_pre_tool_use") not in have:
        return []
    return [
        Check(
            "codex hooks missing",
            PROBLEM,
            f"plangate's {event} hook `{module}` is not registered: {lost}",
            "run `plangate setup --codex` (it registers all three), then plangate doctor again",
        )
        for (event, module), lost in COMPANIONS.items()
        if (event, module) not in have
    ]


def elsewhere_check(
    found: list[Registration], state: Mapping[str, str], setup_path: str
) -> list[Check]:
    """A line for each place setup did not write that holds plangate's hooks: a warning
    when Codex runs them (trusted, or managed), a problem when it skips them."""
    lines = []
    counts: dict[tuple[str, str], int] = {}
    for registration in found:
        hook = (registration.event, registration.module)
        counts[hook] = counts.get(hook, 0) + 1
    by_place: dict[Place, list[Registration]] = {}
    for registration in found:
        if registration.place.path != setup_path:
            by_place.setdefault(registration.place, []).append(registration)
    for place, regs in by_place.items():
        said = ", ".join(f"{r.key} ({trust_of(r, state)})" for r in regs)
        skipped = [r for r in regs if trust_of(r, state) in (UNTRUSTED, MODIFIED)]
        name = "codex project" if place.layer == PROJECT else "codex hooks elsewhere"
        detail = f"plangate's hooks are registered in {place.shown}, not by plangate setup: {said}"
        if place.layer == PROJECT:
            detail += (
                '; Codex runs them only in a trusted project ([projects."…"] trust_level = '
                '"trusted") and with each hook trusted by hash in the user\'s config.toml'
            )
        if skipped and all(counts[(r.event, r.module)] > 1 for r in skipped):
            # Registered elsewhere too ("codex hooks twice"): trusting these would run twice.
            lines.append(
                Check(
                    name,
                    PROBLEM if place.layer != PROJECT else WARN,
                    detail + "; Codex skips the untrusted ones, and plangate's hooks are "
                    "registered in another place too",
                    f"remove plangate's hooks from {place.shown} (do not trust them: each call "
                    "would be decided twice), then run plangate doctor again",
                )
            )
        elif skipped:
            lines.append(
                Check(
                    name,
                    PROBLEM if place.layer != PROJECT else WARN,
                    detail + "; Codex skips the untrusted ones without a word",
                    "trust them in Codex's terminal UI (Hooks need review), or remove them and "
                    "register plangate for the user instead: `plangate setup --codex`",
                )
            )
        elif place.layer == PROJECT:
            lines.append(Check(name, OK, detail))
        else:
            lines.append(
                Check(
                    name,
                    WARN,
                    detail + "; plangate setup --codex --uninstall leaves them there",
                    f"fine if you put them there; to have setup manage them, remove them from "
                    f"{place.shown} and run `plangate setup --codex`",
                )
            )
    return lines
