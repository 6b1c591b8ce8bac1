"""plangate's hooks in the Codex CLI (0.171.0): ``plangate setup --codex`` and its checks.

Codex reads user hooks from ``$CODEX_HOME/hooks.json`` (``CODEX_HOME`` defaults to
``~/.codex``) in Claude Code's format, and runs one only when it is **trusted by hash** in the
user's ``$CODEX_HOME/config.toml``::

    [hooks.state."<abs path of hooks.json>:<event_label>:<group_idx>:<handler_idx>"]
    trusted_hash = "sha256:<hex>"

The hash is sha256 over compact, key-sorted JSON of ``{"event_name": label, "matcher"?: m,
"hooks": [{"type": "command", "command": c, "timeout": t, "async": false,
"statusMessage"?: s}]}`` (:func:`trusted_hash`). A hook without trust, or edited after it was
trusted, is skipped by ``codex exec`` without a word, so ``plangate doctor`` checks each one.

What setup owns, and nothing else:

* plangate's matcher groups in ``hooks.json`` (the workflow contracts' PreToolUse hook on
  ``Bash`` and ``apply_patch``, and their Stop hook; with ``workflow_contracts`` off, the
  protected paths' PreToolUse hook alone), the same commands as in Claude Code
  (:func:`plangate.hook_registry.hook_command`), edited by :mod:`plangate.install.settings_file`
  (other tools' hooks kept; ``--uninstall`` restores the file's bytes from its backup, or
  deletes a file that held only plangate's hooks);
* one block of ``[hooks.state."…"]`` tables at the end of ``config.toml``, between the
  :data:`BEGIN` and :data:`END` comment lines, written as text so that the person's own
  content and formatting stay as they are; ``--uninstall`` takes out exactly that block (and
  the newline setup added before it, or the file setup created).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import stat
import tomllib
from collections.abc import Mapping
from typing import Any, TextIO

from plangate import config, hook_registry
from plangate.config import display_path, write_atomic
from plangate.errors import ConfigError
from plangate.install import codex_places, codex_sandbox, settings_file
from plangate.install.check import OK, PROBLEM, WARN, Check

HOOKS_FILE = "hooks.json"
CONFIG_FILE = "config.toml"
#: Codex's tool names for the calls plangate judges: the shell tool and apply_patch.
TOOL_MATCHER = "^(Bash|apply_patch)$"
DEFAULT_TIMEOUT_S = 600  # what Codex hashes for a handler without a timeout
EVENT_LABELS = {
    "PreToolUse": "pre_tool_use",
    "PostToolUse": "post_tool_use",
    "Stop": "stop",
    "SessionStart": "session_start",
    "UserPromptSubmit": "user_prompt_submit",
}
BEGIN = "# >>> plangate: trust for its Codex hooks (plangate setup --codex; --uninstall removes it)"
#: How the begin line says what else setup did to the file (undone by ``--uninstall``).
ADDED_NEWLINE = " [newline added before]"
CREATED_FILE = " [file created]"
END = "# <<< plangate"
SETUP_AGAIN = "untrusted: run `plangate setup --codex` again"


def codex_home(environ: Mapping[str, str]) -> str:
    """``$CODEX_HOME``, else ``~/.codex``, as an absolute path."""
    value = environ.get("CODEX_HOME")
    if value:
        return os.path.abspath(os.path.expanduser(value))
    return os.path.join(os.path.expanduser("~"), ".codex")


def hook_block(python: str, contracts: bool) -> dict[str, list[dict[str, object]]]:
    """The ``hooks`` block plangate wants in ``hooks.json``."""
    pre_module = "contract_pre_tool_use" if contracts else "protect"
    block: dict[str, list[dict[str, object]]] = {
        "PreToolUse": [_group(pre_module, python, TOOL_MATCHER)],
    }
    if contracts:
        block["UserPromptSubmit"] = [_group("prompt_expansion", python, None)]
        block["Stop"] = [_group("contract_stop", python, None)]
    return block


def _group(module: str, python: str, matcher: str | None) -> dict[str, object]:
    command = hook_registry.hook_command(hook_registry.HOOK_MODULE_PREFIX + module, python)
    handler = {"type": "command", "command": command, "timeout": hook_registry.HOOK_TIMEOUT_S}
    group: dict[str, object] = {} if matcher is None else {"matcher": matcher}
    group["hooks"] = [handler]
    return group


def event_label(event: str) -> str:
    """Codex's label of an event in trust keys: ``PreToolUse`` → ``pre_tool_use``."""
    known = EVENT_LABELS.get(event)
    if known is not None:
        return known
    return "".join("_" + ch.lower() if ch.isupper() else ch for ch in event).lstrip("_")


def trusted_hash(event: str, group: Mapping[str, Any], handler: Mapping[str, Any]) -> str:
    """The hash Codex trusts one handler of one matcher group by."""
    entry: dict[str, object] = {
        "type": "command",
        "command": handler.get("command"),
        "timeout": handler.get("timeout") or DEFAULT_TIMEOUT_S,
        "async": False,
    }
    if handler.get("statusMessage") is not None:
        entry["statusMessage"] = handler["statusMessage"]
    record: dict[str, object] = {"event_name": event_label(event), "hooks": [entry]}
    if group.get("matcher") is not None:
        record["matcher"] = group["matcher"]
    text = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def trust_entries(hooks_path: str, data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(key, hash) for every plangate handler of a parsed ``hooks.json``, in file order."""
    entries: list[tuple[str, str]] = []
    for event, groups in settings_file.plangate_groups(data).items():
        for index, group in groups:
            for position, handler in enumerate(group["hooks"]):
                if hook_registry.is_plangate_handler(handler):
                    key = f"{hooks_path}:{event_label(event)}:{index}:{position}"
                    entries.append((key, trusted_hash(event, group, handler)))
    return entries


# -- config.toml, as text ----------------------------------------------------------------------


def split_block(text: str) -> tuple[str, str | None]:
    """``text`` without plangate's block, and the begin line's flags (None: no block)."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.startswith(BEGIN)), None)
    if start is None:
        return text, None
    end = next((i for i in range(start, len(lines)) if lines[i].rstrip("\r\n") == END), None)
    if end is None:
        raise ConfigError(
            f"plangate's block in {CONFIG_FILE} has no end line ({END})",
            f"remove the lines from `{BEGIN}` on by hand, then run plangate setup --codex again",
        )
    flags = lines[start].rstrip("\r\n")[len(BEGIN) :]
    before = "".join(lines[:start])
    if ADDED_NEWLINE in flags and before.endswith("\n"):
        before = before[:-1]
    return before + "".join(lines[end + 1 :]), flags


def with_block(text: str, entries: list[tuple[str, str]], created: bool) -> str:
    """``text`` (without plangate's block) with the block for ``entries`` at its end."""
    flags = CREATED_FILE if created else ""
    lead = ""
    if text and not text.endswith("\n"):
        lead, flags = "\n", flags + ADDED_NEWLINE
    lines = [BEGIN + flags]
    for key, digest in entries:
        lines += [f"[hooks.state.{json.dumps(key)}]", f"trusted_hash = {json.dumps(digest)}"]
    lines.append(END)
    return text + lead + "\n".join(lines) + "\n"


def trusted(text: str) -> dict[str, str]:
    """``hooks.state`` of a config.toml: key → trusted_hash (refuses one that is not TOML)."""
    data = tomllib.loads(text)
    state = data.get("hooks", {}).get("state", {}) if isinstance(data.get("hooks"), dict) else {}
    found: dict[str, str] = {}
    if isinstance(state, dict):
        for key, value in state.items():
            if isinstance(value, dict) and isinstance(value.get("trusted_hash"), str):
                found[key] = value["trusted_hash"]
    return found


def _read_text(path: str) -> str | None:
    try:
        with open(path, "rb") as stream:
            return stream.read().decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(
            f"{display_path(path)} cannot be read ({error})", "fix it, then run setup again"
        ) from None


def _write_text(path: str, text: str, existed: bool) -> None:
    mode = stat.S_IMODE(os.stat(path).st_mode) if existed else None
    if existed and mode is not None and not mode & stat.S_IWUSR:
        raise ConfigError(
            f"{display_path(path)} is read-only",
            f"make it writable (chmod u+w {display_path(path)}), then run plangate setup again",
        )
    write_atomic(path, text.encode("utf-8"), mode=mode, error=ConfigError)


# -- setup ------------------------------------------------------------------------------------


def install(environ: Mapping[str, str], python: str, out: TextIO) -> None:
    """Register plangate's hooks in ``hooks.json`` and trust them in ``config.toml``."""
    home = codex_home(environ)
    hooks_path = os.path.join(home, HOOKS_FILE)
    config_path = os.path.join(home, CONFIG_FILE)
    contracts, _ = config.gate_switch(hook_registry.WORKFLOW_CONTRACTS, environ)
    os.makedirs(home, exist_ok=True)
    with settings_file.locked(hooks_path):
        current = settings_file.read(hooks_path)
        new_data = settings_file.merge_hooks(current.data, hook_block(python, contracts))
        entries = trust_entries(settings_file.target_of(hooks_path), new_data)
        original = _read_text(config_path)
        own, flags = split_block(original or "")
        created = original is None or (flags is not None and CREATED_FILE in flags)
        try:
            theirs = trusted(own)
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(
                f"{display_path(config_path)} is not TOML ({error})",
                "fix it, then run plangate setup --codex again",
            ) from None
        _refuse_twice(config_path)
        clash = [key for key, _ in entries if key in theirs]
        if clash:
            raise ConfigError(
                f"{display_path(config_path)} already trusts plangate's hook {clash[0]} in a "
                "table of its own, outside plangate's block",
                'remove that [hooks.state."…"] table, then run plangate setup --codex again',
            )
        text = with_block(own, entries, created)
        try:
            tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            lines = "\n".join(with_block("", entries, False).splitlines()[1:-1])
            raise ConfigError(
                f"plangate's trust cannot be added to {display_path(config_path)} ({error})",
                f"add these tables to it yourself, then run plangate doctor:\n{lines}",
            ) from None
        shown = display_path(hooks_path)
        for event, groups in hook_block(python, contracts).items():
            matcher = groups[0].get("matcher")
            what = f" ({matcher})" if isinstance(matcher, str) else ""
            print(f"registered {event}{what} in {shown}", file=out)
        settings_file.write(current, new_data)
        if text != original:
            _write_text(config_path, text, original is not None)
        for key, digest in entries:
            print(f"trusted {key} = {digest} in {display_path(config_path)}", file=out)


def _refuse_twice(config_path: str) -> None:
    """Refuse to register plangate's hooks in hooks.json when the person's config.toml
    registers them already in its ``[hooks]`` table: Codex would run both."""
    place = codex_places.Place(config_path, codex_places.USER)
    theirs = codex_places.registrations(place)
    if theirs:
        said = ", ".join(f"{r.event} ({r.module})" for r in theirs)
        raise ConfigError(
            f"{display_path(config_path)} registers plangate's hooks in its [hooks] table "
            f"already: {said}; registering them in {HOOKS_FILE} too would make Codex run each "
            "twice (every call decided twice, a held stop counted twice)",
            f"keep yours and trust them in Codex's terminal UI (Hooks need review), or remove "
            f"plangate's [[hooks.…]] tables from {display_path(config_path)}, then run "
            "plangate setup --codex again",
        )


def uninstall(environ: Mapping[str, str], out: TextIO) -> None:
    """Take plangate's hooks out of ``hooks.json`` and its block out of ``config.toml``."""
    home = codex_home(environ)
    hooks_path = os.path.join(home, HOOKS_FILE)
    config_path = os.path.join(home, CONFIG_FILE)
    if not os.path.isdir(home):
        print(f"no Codex folder at {display_path(home)}: nothing of plangate's in it", file=out)
        return
    with settings_file.locked(hooks_path, create_folder=False):
        current = settings_file.read(hooks_path)
        had = settings_file.plangate_groups(current.data)
        new_data = settings_file.merge_hooks(current.data, {}, path=hooks_path)
        result = settings_file.write(current, new_data, restore_backup=True)
        shown = display_path(hooks_path)
        for event in had:
            print(f"removed {event} from {shown}", file=out)
        if result.action == settings_file.RESTORED:
            print(f"restored {shown} to its content from before plangate", file=out)
        elif result.action == settings_file.DELETED:
            print(f"deleted {shown}: nothing but plangate's hooks was in it", file=out)
        elif not had:
            print(f"no plangate hooks in {shown}", file=out)
        original = _read_text(config_path)
        if original is None:
            return
        own, flags = split_block(original)
        if flags is None:
            print(f"no plangate trust in {display_path(config_path)}", file=out)
        elif CREATED_FILE in flags and not own:
            os.unlink(config_path)
            print(f"deleted {display_path(config_path)}: plangate had created it", file=out)
        else:
            _write_text(config_path, own, True)
            print(f"removed plangate's trust from {display_path(config_path)}", file=out)


# -- doctor -----------------------------------------------------------------------------------


def checks(environ: Mapping[str, str], cwd: str, codex_found: bool) -> list[Check]:
    """Doctor's Codex lines; none when Codex is neither installed nor configured here."""
    home = codex_home(environ)
    if not codex_found and not os.path.isdir(home):
        return []
    hooks_path = os.path.join(home, HOOKS_FILE)
    config_path = os.path.join(home, CONFIG_FILE)
    found: list[Check] = []
    try:
        data = settings_file.read(hooks_path).data
        text = _read_text(config_path) or ""
        state = trusted(text)
    except (ConfigError, tomllib.TOMLDecodeError) as error:
        return [Check("codex hooks", PROBLEM, str(error), "fix the file, then run doctor again")]
    entries = trust_entries(settings_file.target_of(hooks_path), data)
    found_all, unreadable = codex_places.all_registrations(home, cwd)
    elsewhere = [r for r in found_all if r.place.path != hooks_path]
    if not entries and not elsewhere:
        status = PROBLEM if split_block(text)[1] is not None else WARN
        found.append(
            Check(
                "codex hooks",
                status,
                f"no plangate hooks in {display_path(hooks_path)}: Codex sessions are not guarded",
                "run `plangate setup --codex`",
            )
        )
    elif entries:
        found.append(_trust_check(entries, state, hooks_path))
    found.extend(unreadable)
    found.extend(codex_places.twice_check(found_all))
    found.extend(codex_places.missing_check(found_all))
    found.extend(codex_places.elsewhere_check(found_all, state, hooks_path))
    found.extend(codex_sandbox.checks(environ, home, text, cwd))
    return found


def _trust_check(entries: list[tuple[str, str]], state: Mapping[str, str], path: str) -> Check:
    bad = [key for key, digest in entries if state.get(key) != digest]
    missing = sorted(
        {
            words[0]
            for command in _commands(path)
            for words in [shlex.split(command)]
            if words and not os.path.exists(words[0])
        }
    )
    if missing:
        return Check(
            "codex hooks",
            PROBLEM,
            f"the hooks' interpreter {', '.join(missing)} does not exist: every call fails open",
            "run `plangate setup --codex` again with the plangate you use",
        )
    if bad:
        said = ", ".join(
            f"{key} ({'edited since it was trusted' if key in state else 'never trusted'})"
            for key in bad
        )
        return Check(
            "codex hooks",
            PROBLEM,
            f"Codex skips these hooks without a word: {said}",
            SETUP_AGAIN,
        )
    return Check(
        "codex hooks",
        OK,
        f"{len(entries)} plangate hook(s) in {display_path(path)}, each trusted with its "
        "current hash",
    )


def _commands(path: str) -> list[str]:
    data = settings_file.read(path).data
    return [
        handler["command"]
        for groups in settings_file.plangate_groups(data).values()
        for _, group in groups
        for handler in group["hooks"]
        if hook_registry.is_plangate_handler(handler)
    ]
