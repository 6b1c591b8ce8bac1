"""The gate switches as ``plangate setup`` resolves, saves and reports them (one line each)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TextIO

from plangate import config
from plangate.config import display_path


def resolve_switches(
    flags: dict[str, bool | None], environ: Mapping[str, str], err: TextIO
) -> tuple[config.ConfigFile, dict[str, bool], dict[str, str]]:
    stored = config.load()
    for warning in stored.warnings():
        print(warning, file=err)
    switches: dict[str, bool] = {}
    sources: dict[str, str] = {}
    for name, flag in flags.items():
        switches[name], sources[name] = config.gate_switch(name, environ, explicit=flag)
    return stored, switches, sources


def save_switches(
    flags: dict[str, bool | None],
    switches: dict[str, bool],
    sources: dict[str, str],
    stored_path: str,
    environ: Mapping[str, str],
    out: TextIO,
    err: TextIO,
) -> None:
    for name, flag in flags.items():
        if flag is None:
            print(
                f"{name} {on_off(switches[name])} ({source_text(name, sources[name])})",
                file=out,
            )
            continue
        changed = config.set(name, flag)
        verb = "saved" if changed else "unchanged"
        print(f"{verb} {name} {on_off(flag)} in {display_path(stored_path)}", file=out)
        env_name = config.setting(name).env
        env_value = environ.get(env_name, "").strip().lower()
        if env_value in (config.ON, config.OFF) and (env_value == config.ON) != flag:
            print(
                f"note: {env_name}={env_value} in this environment overrides the saved "
                f"{name} wherever it is set",
                file=err,
            )


def on_off(value: bool) -> str:
    return "on" if value else "off"


def source_text(name: str, source: str) -> str:
    if source == config.SOURCE_ENV:
        return f"from {config.setting(name).env} in the environment, not saved"
    if source == config.SOURCE_CONFIG:
        return f"from {display_path(config.config_path())}"
    return "default"
