"""``plangate setup``: install the skills, save the gate switches, register the hooks.

What setup owns, and nothing else:

* ``<claude config>/skills/<name>/`` for every skill folder bundled in ``plangate/skills/``,
  each marked with a ``.plangate-installed`` file. A skill folder without that file is
  someone else's and is never touched: setup refuses before changing anything.
* The gate switches given as flags, saved to ``<state root>/config.json``.
* plangate's handlers in ``<claude config>/settings.json`` (``--project``:
  ``<cwd>/.claude/settings.json``), edited by :mod:`plangate.settings_file`.
* With ``--plugin``, instead of the skills and the settings hooks: the plugin folder in the
  state root and its installation through ``claude plugin`` (:mod:`plangate.plugin`).

Settings hooks and the plugin are never both registered (a stop would be judged twice), and
hooks never point into a temporary environment (:mod:`plangate.install_place`): setup refuses
both, naming the remedy.

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

from plangate import config, settings_file, skill_bundle
from plangate.config import display_path
from plangate.errors import ConfigError, ExitCodes, UsageError
from plangate.hooks import registry
from plangate.install_place import refuse_temporary
from plangate.locations import claude_config_dir
from plangate.plugin import install as plugin_install
from plangate.plugin import setup_plugin
from plangate.skill_bundle import bundled_skills_dir as bundled_skills_dir
from plangate.skill_bundle import is_ours
from plangate.skill_names import PLUGIN_ID
from plangate.switch_lines import resolve_switches, save_switches

SKILL_MARKER = skill_bundle.SKILL_MARKER
SKILLS_LOCK = ".plangate-skills-lock"
EXIT_CODES = ExitCodes(
    {
        0: "installed, or removed with `--uninstall` (also when nothing needed changing)",
        1: "refused: a file or folder it cannot use or write, such as a settings.json that "
        "is not JSON or a skills folder that is not plangate's; settings hooks and the plugin "
        "both wanted; a plangate running from a temporary environment; a `claude plugin` "
        "command that failed (the message says what to do)",
        2: "bad usage: a bad flag, a gate switch other than on or off, switches with "
        "`--uninstall`, `--plugin` with `--project`",
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
    plugin: bool = False,
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
    if plugin and project:
        raise UsageError(
            "--plugin takes no --project: the plugin is installed for the user",
            "run `plangate setup --plugin` without --project",
        )
    if uninstall:
        if ceo_review_gate is not None or autoplan_gate is not None:
            raise UsageError(
                "--uninstall takes no gate switches",
                "run `plangate setup --uninstall` alone; the saved switches are kept",
            )
        if plugin:
            plugin_install.uninstall(claude_dir, os.environ, out)  # the CLI's own environment
            return 0
        _uninstall(
            settings_path=settings_path,
            skills_dir=skills_dir,
            claude_dir=claude_dir,
            project=project,
            out=out,
        )
        return 0
    python = python if python is not None else sys.executable
    skills_source = skills_source if skills_source is not None else bundled_skills_dir()
    flags = {registry.CEO_REVIEW_GATE: ceo_review_gate, registry.AUTOPLAN_GATE: autoplan_gate}
    refuse_temporary(python, registry.package_root(), claude_dir)
    if plugin:
        setup_plugin.install_plugin(
            claude_dir=claude_dir,
            cwd=cwd or os.getcwd(),
            flags=flags,
            out=out,
            err=err,
            skills_source=skills_source,
            python=python,
            environ=environ,
        )
        return 0
    if plugin_install.registered(claude_dir):
        raise ConfigError(
            f"plangate is installed as a Claude Code plugin ({PLUGIN_ID}); "
            "registering its hooks in settings too would judge every stop twice",
            "keep the plugin (`plangate setup --plugin` updates it), or run "
            "`plangate setup --plugin --uninstall` first",
        )
    _install(
        settings_path=settings_path,
        skills_dir=skills_dir,
        claude_dir=claude_dir,
        flags=flags,
        out=out,
        err=err,
        skills_source=skills_source,
        python=python,
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
        skills = skill_bundle.bundled(skills_source)
        for name, _ in skills:
            _check_ours_or_absent(os.path.join(skills_dir, name))
        stored, switches, sources = resolve_switches(flags, environ, err)
        block = registry.hook_settings(
            switches[registry.CEO_REVIEW_GATE], switches[registry.AUTOPLAN_GATE], python
        )
        # computed now: a hooks entry of the wrong type refuses before any change
        new_data = settings_file.merge_hooks(current.data, block, path=settings_path)
        settings_file.render(new_data)  # and so does a number JSON cannot hold

        save_switches(flags, switches, sources, stored.path, environ, out, err)
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


def _check_ours_or_absent(folder: str) -> None:
    if os.path.lexists(folder) and not is_ours(folder):
        raise ConfigError(
            f"{display_path(folder)} exists and was not installed by plangate; "
            "plangate never touches another skill",
            "move it away, then run plangate setup again",
        )


def _sync_skills(skills: list[tuple[str, str]], skills_dir: str, python: str, out: TextIO) -> None:
    wanted = {name for name, _ in skills}
    for name, source in skills:
        target = os.path.join(skills_dir, name)
        _check_ours_or_absent(target)  # again, under the lock
        expected = skill_bundle.expected(source, target, python)
        if is_ours(target) and skill_bundle.tree(target) == expected:
            print(f"unchanged skill {name} in {display_path(target)}", file=out)
            continue
        verb = "updated" if is_ours(target) else "installed"
        skill_bundle.replace_folder(expected, target)
        print(f"{verb} skill {name} in {display_path(target)}", file=out)
    for name in _installed_by_us(skills_dir):
        if name not in wanted:
            target = os.path.join(skills_dir, name)
            shutil.rmtree(target)
            print(f"removed skill {name} from {display_path(target)} (no longer bundled)", file=out)


def _installed_by_us(skills_dir: str) -> list[str]:
    try:
        names = sorted(os.listdir(skills_dir))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [
        name
        for name in names
        if not name.startswith(".") and is_ours(os.path.join(skills_dir, name))
    ]


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
    parser.add_argument(
        "--plugin",
        action="store_true",
        help="install plangate as a Claude Code plugin (skills and hooks together) instead",
    )
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
        plugin=args.plugin,
        ceo_review_gate=flag_value("--ceo-review-gate", args.ceo_review_gate),
        autoplan_gate=flag_value("--autoplan-gate", args.autoplan_gate),
        out=sys.stdout,
        err=sys.stderr,
    )
