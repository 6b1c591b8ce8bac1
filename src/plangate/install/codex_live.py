"""``plangate doctor --live`` for the Codex CLI: the user's Codex, the user's hooks, a real
``codex exec`` session on the stand-in model.

Codex skips a hook it does not trust without a word, and a hook output it does not accept
fails open. The proof carries the user's registration into a throwaway ``CODEX_HOME``: their
``hooks.json`` byte for byte, and for each of plangate's handlers the trust their
``config.toml`` gives it (re-keyed to the throwaway path; a handler they have not trusted with
its current hash stays untrusted there, so it is skipped there as it is for them). The model
then runs ``plangate approve`` in the shell tool, a command only the person may run: the
proof holds when Codex tells the model the call was blocked by plangate's PreToolUse hook
(``protected_command``), which both the contracts' hook and the protected paths' hook decide.
Nothing of the user's is written: the session's state root, HOME and project are throwaway.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from plangate.decisions.defence_codes import PROTECTED_COMMAND
from plangate.errors import PlangateError
from plangate.harness.codex import CodexEnv, find_codex
from plangate.harness.standin import Script, StandIn, shell
from plangate.install import codex_hooks, codex_places, settings_file
from plangate.processes import run_bounded

PROOF_COMMAND = "plangate approve plangate-live proof --yes"
BLOCKED = "Command blocked by PreToolUse hook"
CODE = PROTECTED_COMMAND
NAME = "live codex hooks"


def codex_line(environ: Mapping[str, str], timeout: float) -> tuple[str, str, str] | None:
    """(status, detail, remedy) of the Codex proof: ``ok``, ``problem`` or ``skip``; None when
    Codex is neither installed nor configured here. plangate's hooks are proven where the user
    registered them: ``hooks.json``, else the ``[hooks]`` tables of ``config.toml``."""
    home = codex_hooks.codex_home(environ)
    hooks_path = os.path.join(home, codex_hooks.HOOKS_FILE)
    config_path = os.path.join(home, codex_hooks.CONFIG_FILE)
    try:
        hooks = settings_file.read(hooks_path)
        entries = codex_hooks.trust_entries(hooks.target, hooks.data)
        state = codex_hooks.trusted(_text(config_path))
        registered = _registered(hooks, entries, config_path, state)
    except (PlangateError, ValueError) as error:
        return "problem", f"Codex's files cannot be read: {error}", "fix them, then run again"
    if registered is None and not os.path.isdir(home):
        return None
    try:
        binary = find_codex()
    except PlangateError as error:
        if registered is None:
            return None
        return "problem", f"plangate's hooks are registered in Codex, but {error}", ""
    if registered is None:
        return (
            "skip",
            f"not proven: no plangate hooks in {hooks_path} or {config_path} "
            "(register them: plangate setup --codex)",
            "",
        )
    place, as_json, trust = registered
    version = _version(binary)
    root = Path(tempfile.mkdtemp(prefix="plangate-live-codex-"))
    try:
        blocked = _prove(root, binary, as_json, trust, timeout)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    where = f"with hooks in {place} (Codex {version})"
    if blocked:
        return (
            "ok",
            f"refused `plangate approve` in a real codex exec session ({CODE}), {where}",
            "",
        )
    return (
        "problem",
        f"the PreToolUse hook did not refuse `plangate approve` in a real codex exec session "
        f"(a hook Codex does not trust, or cannot run, is skipped without a word), {where}",
        "run `plangate setup --codex` again, then `plangate doctor --live`",
    )


def _registered(
    hooks: settings_file.SettingsFile,
    entries: list[tuple[str, str]],
    config_path: str,
    state: Mapping[str, str],
) -> tuple[str, bytes, list[tuple[str, str]]] | None:
    """Where plangate's hooks are registered for the user, the hooks there as ``hooks.json``
    bytes, and the trust the user gave each (``(key suffix, hash)``: ``:event:group:handler``,
    only for a handler trusted with its current hash). None when neither file has them."""
    if entries:
        trust = [
            (key[len(hooks.target) :], digest)
            for key, digest in entries
            if state.get(key) == digest
        ]
        return hooks.target, hooks.original or b"", trust
    place = codex_places.Place(config_path, codex_places.USER)
    found = codex_places.registrations(place)
    if not found:
        return None
    # A handler in config.toml hashes as its hooks.json twin: carried as hooks.json, with the
    # same group and handler positions, so the user's trust carries over key for key.
    data = codex_places.as_json_hooks(place)
    prefix = os.path.join(os.path.realpath(os.path.dirname(config_path)), "config.toml")
    trust = [
        (r.key[len(prefix) :], r.digest)
        for r in found
        if r.key.startswith(prefix) and state.get(r.key) == r.digest
    ]
    return f"{config_path} [hooks]", json.dumps(data).encode("utf-8"), trust


def _text(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as stream:
            return stream.read()
    except FileNotFoundError:
        return ""


def _version(binary: Path) -> str:
    done = run_bounded([str(binary), "--version"], timeout=30)
    words = done.stdout.split()
    return words[-1] if done.returncode == 0 and words else "unknown version"


def _prove(
    root: Path, binary: Path, hooks: bytes, trust: list[tuple[str, str]], timeout: float
) -> bool:
    """Whether Codex told the model plangate's hook blocked the person-only command, with
    ``hooks`` as the throwaway ``hooks.json`` and the user's ``trust`` re-keyed to it."""
    script = Script(main=[[shell(PROOF_COMMAND)], "Done."])
    with StandIn(script) as model:
        env = CodexEnv.create(
            root, model, binary=binary, extra_env={"PLANGATE_STATE_ROOT": str(root / "state")}
        )
        copy = env.codex_home / codex_hooks.HOOKS_FILE
        copy.write_bytes(hooks)
        carried = [(str(copy) + suffix, digest) for suffix, digest in trust]
        config = codex_hooks.with_block("", carried, False) if carried else ""
        env.write_config(extra=config)
        env.exec("Run the command.", timeout=timeout)
        requests = model.responses_requests(kind="main")
    return any(BLOCKED in request.text() and CODE in request.text() for request in requests[1:])
