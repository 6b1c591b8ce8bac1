"""``plangate config get|set|list``: plangate's settings in ``<state root>/config.json``.

``get`` prints the value in effect (for a gate switch the environment wins over the file),
``set`` validates and saves (only a person may: inside a coding agent's session it refuses,
``agent_command``, for every setting), ``list`` shows every setting with its value, where the value
comes from and what it does. Warnings (unknown keys in the file, an environment variable
that overrides the file, a gate switched on whose hooks are not registered) go to ``err``.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Mapping
from typing import TextIO

from plangate import agent_session, config, hook_registry
from plangate.config import display_path
from plangate.errors import ConfigError, ExitCodes
from plangate.install import settings_file
from plangate.locations import claude_config_dir

EXIT_CODES = ExitCodes(
    {
        0: "done",
        1: "a value in effect is invalid (`list` shows the others), the config file cannot "
        "be read or written, or `set` run inside a coding agent's session (`agent_command`)",
        2: "bad usage: a bad flag, no subcommand (its help is printed), an unknown setting, a "
        "value the setting does not take",
    },
    usage=2,
    failure=1,
)


def config_get(
    key: str,
    out: TextIO,
    *,
    err: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    """Print the value of ``key`` in effect (``on``/``off`` or a number). Returns 0."""
    err = sys.stderr if err is None else err
    row = config.setting(key)
    stored = config.load()
    _warn(stored, err)
    value, source = config.resolve(key, environ, path=stored.path)
    print(row.format(value), file=out)
    if source == config.SOURCE_ENV:
        print(f"note: {row.format(value)} comes from {row.env} in the environment", file=err)
    return 0


def config_set(
    key: str,
    value: str,
    out: TextIO,
    *,
    err: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    """Validate ``value`` for ``key`` and save it. Returns 0."""
    err = sys.stderr if err is None else err
    environ = os.environ if environ is None else environ
    row = config.setting(key)
    parsed = row.parse(value)
    path = config.config_path()
    changed = config.set(key, parsed, path=path)
    verb = "set" if changed else "unchanged"
    print(f"{verb} {key} {row.format(parsed)} in {display_path(path)}", file=out)
    _warn(config.load(path), err)
    if row.env:
        env_value = environ.get(row.env, "").strip()
        if env_value:
            print(
                f"note: {row.env}={env_value} in this environment overrides the saved value",
                file=err,
            )
    if row.kind == config.SWITCH and parsed:
        _hint_unregistered(key, err)
    return 0


def config_list(
    out: TextIO,
    *,
    err: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    """Print every setting: name, value, source, help. Returns 1 when a value is invalid."""
    err = sys.stderr if err is None else err
    stored = config.load()
    _warn(stored, err)
    rows: list[tuple[str, str, str, str]] = [("NAME", "VALUE", "SOURCE", "HELP")]
    status = 0
    for row in config.SETTINGS:
        try:
            value, source = config.resolve(row.name, environ, path=stored.path)
        except ConfigError as error:
            print(f"plangate: {error}", file=err)
            rows.append((row.name, "?", "invalid", row.help))
            status = 1
            continue
        if source == config.SOURCE_ENV:
            source = f"env {row.env}"
        rows.append((row.name, row.format(value), source, row.help))
    widths = [max(len(line[column]) for line in rows) for column in range(3)]
    for line in rows:
        cells = [line[column].ljust(widths[column]) for column in range(3)]
        print("  ".join([*cells, line[3]]), file=out)
    return status


def _warn(stored: config.ConfigFile, err: TextIO) -> None:
    for warning in stored.warnings():
        print(warning, file=err)


def _hint_unregistered(key: str, err: TextIO) -> None:
    path = os.path.join(claude_config_dir(), "settings.json")
    try:
        registered = settings_file.plangate_groups(settings_file.read(path).data)
    except ConfigError:
        return
    missing = [
        spec.event
        for spec in hook_registry.HOOKS
        if key in spec.switches and spec.event not in registered
    ]
    if missing:
        print(
            f"note: {key}'s hooks ({', '.join(missing)}) are not registered in "
            f"{display_path(path)}; run `plangate setup` to register them",
            file=err,
        )


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("config", help="read and change plangate's settings")
    parser.set_defaults(config_help=parser.print_help)
    actions = parser.add_subparsers(dest="config_command", metavar="SUBCOMMAND")
    get = actions.add_parser("get", help="print a setting's value in effect")
    get.add_argument("key")
    put = actions.add_parser(
        "set", help="change a setting (a person only: refused inside an agent session)"
    )
    put.add_argument("key")
    put.add_argument("value")
    actions.add_parser("list", help="every setting with its value and source")


def _spelled(key: str) -> str:
    """A setting spelled as a flag (``require-approval``) is that setting (``require_approval``)."""
    underscored = key.replace("-", "_")
    return underscored if underscored in config.BY_NAME else key


def run(args: argparse.Namespace) -> int:
    if args.config_command == "get":
        return config_get(_spelled(args.key), sys.stdout)
    if args.config_command == "set":
        again = f"plangate config set {shlex.join([args.key, args.value])}"
        agent_session.refuse_inside("config", "set", again=again)
        return config_set(_spelled(args.key), args.value, sys.stdout)
    if args.config_command == "list":
        return config_list(sys.stdout)
    args.config_help()
    return EXIT_CODES.usage
