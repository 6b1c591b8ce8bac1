"""``plangate setup``: install the skills, save the gate switches, register the hooks.

What setup owns, and nothing else:

* ``<claude config>/skills/<name>/`` for every skill folder bundled in ``plangate/skills/``,
  each marked with a ``.plangate-installed`` file. A skill folder without that file is
  someone else's and is never touched: setup refuses before changing anything.
* The gate switches given as flags, saved to ``<state root>/config.json``.
* plangate's handlers in ``<claude config>/settings.json`` (``--project``:
  ``<cwd>/.claude/settings.json``), edited by :mod:`plangate.settings_file`.

Every check that can refuse (the settings file parses, no foreign skill in the way, the
config file is readable) runs before the first change. Each action prints one line.
``--uninstall`` removes plangate's handlers and its marked skill folders and keeps the
config (plangate's own state, outside Claude Code's folder).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
from collections.abc import Mapping
from typing import TextIO

import plangate
from plangate import config, jsonio, settings_file
from plangate.config import display_path
from plangate.errors import ConfigError, ExitCodes, UsageError
from plangate.hooks import registry
from plangate.locations import claude_config_dir, state_root

SKILL_MARKER = ".plangate-installed"
SKILLS_LOCK = ".plangate-skills-lock"
_IGNORED = ("__pycache__",)
EXIT_CODES = ExitCodes(
    {
        0: "installed, or removed with `--uninstall` (also when nothing needed changing)",
        1: "refused: a file or folder it cannot use or write, such as a settings.json that "
        "is not JSON or a skills folder that is not plangate's (the message says what to do)",
        2: "bad usage: a bad flag, a gate switch other than on or off, switches with `--uninstall`",
    },
    usage=2,
    failure=1,
)


def flag_value(option: str, text: str | None) -> bool | None:
    """A gate flag's value for :func:`setup`: ``None`` when not given, else on/off.

    For the CLI: ``--ceo-review-gate`` stores ``"on"``, ``--no-ceo-review-gate`` ``"off"``,
    ``--ceo-review-gate=VALUE`` the value, which must be on or off (any case).
    """
    if text is None:
        return None
    word = text.strip().lower()
    if word in (config.ON, config.OFF):
        return word == config.ON
    raise UsageError(
        f"{option} takes on or off, not {text!r}",
        f"write {option}, --no-{option.removeprefix('--')} or {option}=on|off",
    )


def bundled_skills_dir() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(plangate.__file__)), "skills")


def setup(
    *,
    project: bool,
    uninstall: bool,
    ceo_review_gate: bool | None,
    autoplan_gate: bool | None,
    out: TextIO,
    err: TextIO | None = None,
    cwd: str | None = None,
    skills_source: str | None = None,
    python: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    """Install (or with ``uninstall`` remove) plangate's skills and hooks. Returns 0.

    ``ceo_review_gate``/``autoplan_gate``: the flag's value, or ``None`` when not given.
    ``cwd``, ``skills_source``, ``python`` and ``environ`` default to the process's own.
    """
    if err is None:
        err = sys.stderr
    if environ is None:
        environ = os.environ
    claude_dir = claude_config_dir()
    if project:
        settings_path = os.path.join(cwd or os.getcwd(), ".claude", "settings.json")
    else:
        settings_path = os.path.join(claude_dir, "settings.json")
    skills_dir = os.path.join(claude_dir, "skills")
    if uninstall:
        if ceo_review_gate is not None or autoplan_gate is not None:
            raise UsageError(
                "--uninstall takes no gate switches",
                "run `plangate setup --uninstall` alone; the saved switches are kept",
            )
        _uninstall(
            settings_path=settings_path,
            skills_dir=skills_dir,
            claude_dir=claude_dir,
            project=project,
            out=out,
        )
        return 0
    _install(
        settings_path=settings_path,
        skills_dir=skills_dir,
        claude_dir=claude_dir,
        flags={
            registry.CEO_REVIEW_GATE: ceo_review_gate,
            registry.AUTOPLAN_GATE: autoplan_gate,
        },
        out=out,
        err=err,
        skills_source=skills_source if skills_source is not None else bundled_skills_dir(),
        python=python if python is not None else sys.executable,
        environ=environ,
    )
    return 0


# -- install ---------------------------------------------------------------------------------


def _install(
    *,
    settings_path: str,
    skills_dir: str,
    claude_dir: str,
    flags: dict[str, bool | None],
    out: TextIO,
    err: TextIO,
    skills_source: str,
    python: str,
    environ: Mapping[str, str],
) -> None:
    if not python:
        raise ConfigError(
            "cannot tell which Python runs plangate (sys.executable is empty)",
            "run setup with the installation's interpreter: `<python> -m plangate setup`",
        )
    with settings_file.locked(settings_path):
        current = settings_file.read(settings_path)  # refuses an unusable file first
        skills = _bundled(skills_source)
        for name, _ in skills:
            _check_ours_or_absent(os.path.join(skills_dir, name))
        stored = config.load()
        for warning in stored.warnings():
            print(warning, file=err)
        switches: dict[str, bool] = {}
        sources: dict[str, str] = {}
        for name, flag in flags.items():
            switches[name], sources[name] = config.gate_switch(name, environ, explicit=flag)
        block = registry.hook_settings(
            switches[registry.CEO_REVIEW_GATE], switches[registry.AUTOPLAN_GATE], python
        )
        # computed now: a hooks entry of the wrong type refuses before any change
        new_data = settings_file.merge_hooks(current.data, block, path=settings_path)
        settings_file.render(new_data)  # and so does a number JSON cannot hold

        for name, flag in flags.items():
            if flag is None:
                print(
                    f"{name} {_on_off(switches[name])} ({_source_text(name, sources[name])})",
                    file=out,
                )
                continue
            changed = config.set(name, flag)
            verb = "saved" if changed else "unchanged"
            print(f"{verb} {name} {_on_off(flag)} in {display_path(stored.path)}", file=out)
            env_name = config.setting(name).env
            env_value = environ.get(env_name, "").strip().lower()
            if env_value in (config.ON, config.OFF) and (env_value == config.ON) != flag:
                print(
                    f"note: {env_name}={env_value} in this environment overrides the saved "
                    f"{name} wherever it is set",
                    file=err,
                )

        if skills or os.path.isdir(skills_dir):
            os.makedirs(claude_dir, exist_ok=True)
            with config.FileLock(
                os.path.join(claude_dir, SKILLS_LOCK),
                message=f"another plangate setup is changing {display_path(skills_dir)}",
                remedy="wait for it to finish, then run plangate setup again",
            ):
                _sync_skills(skills, skills_dir, python, out)
        if not skills:
            print("no skills bundled with this plangate to install", file=out)

        before = settings_file.plangate_groups(current.data)
        after = settings_file.plangate_groups(new_data)
        shown = display_path(settings_path)
        for event in block:
            label = _label(event, switches)
            if event not in before:
                print(f"registered {label} in {shown}", file=out)
            elif before[event] == after.get(event):
                print(f"unchanged {label} in {shown}", file=out)
            else:
                print(f"updated {label} in {shown}", file=out)
        for event in before:
            if event not in block:
                print(f"removed {_label(event, None)} from {shown}", file=out)
        result = settings_file.write(current, new_data)
        _report_backup(result, settings_path, out)


def _on_off(value: bool) -> str:
    return "on" if value else "off"


def _source_text(name: str, source: str) -> str:
    if source == config.SOURCE_ENV:
        return f"from {config.setting(name).env} in the environment, not saved"
    if source == config.SOURCE_CONFIG:
        return f"from {display_path(config.config_path())}"
    return "default"


def _label(event: str, switches: Mapping[str, bool] | None) -> str:
    spec = registry.BY_EVENT.get(event)
    if spec is None:
        return f"{event} hook"
    if spec.matcher is not None:
        return f"{event} {spec.kind} ({spec.matcher})"
    if switches is None:
        return f"{event} {spec.kind}"
    serving = [name for name in spec.switches if switches.get(name)]
    return f"{event} {spec.kind} ({', '.join(serving)})"


def _report_backup(result: settings_file.WriteResult, settings_path: str, out: TextIO) -> None:
    if result.backup is not None:
        print(
            f"backed up {display_path(settings_path)} to "
            f"{display_path(settings_path + settings_file.BACKUP_SUFFIX)}",
            file=out,
        )


# -- skills ----------------------------------------------------------------------------------


def _bundled(source: str) -> list[tuple[str, str]]:
    """The skill folders shipped with plangate, by name; none when the folder is missing."""
    try:
        names = sorted(os.listdir(source))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [
        (name, os.path.join(source, name))
        for name in names
        if not name.startswith((".", "_")) and os.path.isdir(os.path.join(source, name))
    ]


def _is_ours(folder: str) -> bool:
    return (
        not os.path.islink(folder)
        and os.path.isdir(folder)
        and os.path.isfile(os.path.join(folder, SKILL_MARKER))
    )


def _check_ours_or_absent(folder: str) -> None:
    if os.path.lexists(folder) and not _is_ours(folder):
        raise ConfigError(
            f"{display_path(folder)} exists and was not installed by plangate; "
            "plangate never touches another skill",
            "move it away, then run plangate setup again",
        )


def _marker_content() -> bytes:
    record = {"installed_by": "plangate", "version": plangate.__version__}
    return (jsonio.dumps(record) + "\n").encode("utf-8")


def _tree(folder: str) -> dict[str, bytes]:
    """Every file under ``folder`` by relative path (``/``-separated), with its bytes."""
    files: dict[str, bytes] = {}
    for root, directories, names in os.walk(folder):
        directories[:] = sorted(d for d in directories if d not in _IGNORED)
        for name in names:
            if name.endswith(".pyc"):
                continue
            full = os.path.join(root, name)
            relative = os.path.relpath(full, folder).replace(os.sep, "/")
            with open(full, "rb") as stream:
                files[relative] = stream.read()
    return files


def _sync_skills(skills: list[tuple[str, str]], skills_dir: str, python: str, out: TextIO) -> None:
    wanted = {name for name, _ in skills}
    for name, source in skills:
        target = os.path.join(skills_dir, name)
        _check_ours_or_absent(target)  # again, under the lock
        expected = _rendered(_tree(source), target, python)
        expected[SKILL_MARKER] = _marker_content()
        if _is_ours(target) and _tree(target) == expected:
            print(f"unchanged skill {name} in {display_path(target)}", file=out)
            continue
        verb = "updated" if _is_ours(target) else "installed"
        _replace_folder(expected, target)
        print(f"{verb} skill {name} in {display_path(target)}", file=out)
    for name in _installed_by_us(skills_dir):
        if name not in wanted:
            target = os.path.join(skills_dir, name)
            shutil.rmtree(target)
            print(f"removed skill {name} from {display_path(target)} (no longer bundled)", file=out)


def plangate_command(python: str) -> str:
    """This installation's ``plangate`` as a skill writes it in a Bash call: an absolute path,
    double-quoted only when it needs quoting (the guard binds literal words only)."""
    path = os.path.join(os.path.dirname(python), "plangate")
    bare = all(ch.isalnum() or ch in "/._-+@%=:," for ch in path)
    return path if bare else f'"{path}"'


def _rendered(files: dict[str, bytes], target: str, python: str) -> dict[str, bytes]:
    """The skill's Markdown with the installation's paths filled in."""
    values = {
        "{{PLANGATE}}": plangate_command(python),
        "{{SKILL_DIR}}": target,
        "{{STATE_ROOT}}": state_root(),
    }
    rendered: dict[str, bytes] = {}
    for relative, data in files.items():
        if relative.endswith(".md"):
            text = data.decode("utf-8")
            for placeholder, value in values.items():
                text = text.replace(placeholder, value)
            data = text.encode("utf-8")
        rendered[relative] = data
    return rendered


def _installed_by_us(skills_dir: str) -> list[str]:
    try:
        names = sorted(os.listdir(skills_dir))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [
        name
        for name in names
        if not name.startswith(".") and _is_ours(os.path.join(skills_dir, name))
    ]


def _replace_folder(files: dict[str, bytes], target: str) -> None:
    """Write ``files`` as the folder ``target``, swapping whole folders by rename."""
    parent = os.path.dirname(target)
    os.makedirs(parent, exist_ok=True)
    tag = f"{os.getpid()}-{os.urandom(4).hex()}"
    name = os.path.basename(target)
    staging = os.path.join(parent, f".{name}.plangate-tmp-{tag}")
    retired = os.path.join(parent, f".{name}.plangate-old-{tag}")
    try:
        for relative, data in files.items():
            path = os.path.join(staging, *relative.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as stream:
                stream.write(data)
        if os.path.lexists(target):
            os.rename(target, retired)
            try:
                os.rename(staging, target)
            except OSError:
                os.rename(retired, target)
                raise
            shutil.rmtree(retired)
        else:
            os.rename(staging, target)
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)
        raise ConfigError(
            f"cannot install the skill {display_path(target)}: {error.strerror or error}",
            f"check that {display_path(parent)} is writable, then run plangate setup again",
        ) from None


# -- uninstall -------------------------------------------------------------------------------


def _uninstall(
    *, settings_path: str, skills_dir: str, claude_dir: str, project: bool, out: TextIO
) -> None:
    # The whole uninstall holds the settings lock (when there is a folder to lock in), so a
    # setup running at the same time sees either everything of ours or nothing.
    has_folder = os.path.isdir(os.path.dirname(settings_file.target_of(settings_path)))
    lock = (
        settings_file.locked(settings_path, create_folder=False)
        if has_folder
        else contextlib.nullcontext()
    )
    with lock:
        if has_folder:
            _remove_hooks(settings_path, out)
        else:
            print(f"no plangate hooks in {display_path(settings_path)}", file=out)
        if project and _user_settings_have_ours(claude_dir):
            print(
                f"kept the skills in {display_path(skills_dir)}: "
                f"{display_path(os.path.join(claude_dir, 'settings.json'))} still registers "
                "plangate (run `plangate setup --uninstall` without --project to remove them)",
                file=out,
            )
        elif _installed_by_us(skills_dir):
            with config.FileLock(
                os.path.join(claude_dir, SKILLS_LOCK),
                message=f"another plangate setup is changing {display_path(skills_dir)}",
                remedy="wait for it to finish, then run plangate setup --uninstall again",
            ):
                for name in _installed_by_us(skills_dir):
                    target = os.path.join(skills_dir, name)
                    shutil.rmtree(target)
                    print(f"removed skill {name} from {display_path(target)}", file=out)
                with contextlib.suppress(OSError):
                    os.rmdir(skills_dir)  # only when empty: the folder setup made for them
        else:
            print(f"no plangate skills in {display_path(skills_dir)}", file=out)

    config_file = config.config_path()
    if os.path.exists(config_file):
        print(
            f"kept {display_path(config_file)} (plangate's own settings; "
            "delete it yourself if you want it gone)",
            file=out,
        )


def _remove_hooks(settings_path: str, out: TextIO) -> None:
    shown = display_path(settings_path)
    current = settings_file.read(settings_path)
    before = settings_file.plangate_groups(current.data)
    new_data = settings_file.merge_hooks(current.data, {}, path=settings_path)
    for event in before:
        print(f"removed {_label(event, None)} from {shown}", file=out)
    result = settings_file.write(current, new_data, restore_backup=True)
    _report_backup(result, settings_path, out)
    if result.action == settings_file.RESTORED:
        print(f"restored {shown} to its content from before plangate", file=out)
    elif result.action == settings_file.DELETED:
        print(f"deleted {shown}: nothing but plangate's hooks was in it", file=out)
    elif not before:
        print(f"no plangate hooks in {shown}", file=out)


def _user_settings_have_ours(claude_dir: str) -> bool:
    try:
        user = settings_file.read(os.path.join(claude_dir, "settings.json"))
    except ConfigError:
        return False
    return bool(settings_file.plangate_groups(user.data))


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "setup",
        help="install the skills and register plangate's hooks in Claude Code",
        description=(
            "Install plangate's skills into Claude Code's skills folder and register its hooks "
            "in settings.json. Safe to repeat; other tools' hooks are left alone."
        ),
    )
    parser.add_argument(
        "--project", action="store_true", help="write .claude/settings.json of this folder"
    )
    parser.add_argument("--uninstall", action="store_true", help="remove what plangate added")
    for gate, what in (("ceo-review-gate", "/plan-ceo-review"), ("autoplan-gate", "/autoplan")):
        dest = gate.replace("-", "_")
        parser.add_argument(
            f"--{gate}",
            dest=dest,
            nargs="?",
            const="on",
            metavar="on|off",
            help=f"turn the {what} skill gate on (or =off) and save it",
        )
        parser.add_argument(
            f"--no-{gate}",
            dest=dest,
            action="store_const",
            const="off",
            help=f"turn the {what} skill gate off and save it",
        )


def run(args: argparse.Namespace) -> int:
    return setup(
        project=args.project,
        uninstall=args.uninstall,
        ceo_review_gate=flag_value("--ceo-review-gate", args.ceo_review_gate),
        autoplan_gate=flag_value("--autoplan-gate", args.autoplan_gate),
        out=sys.stdout,
        err=sys.stderr,
    )
