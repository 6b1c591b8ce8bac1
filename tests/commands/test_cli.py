"""The command line's shape: one module per verb, no import cycle, one exit code table per
command (in code, and docs/exit-codes.md the same), every flag in the README's command
table, and internal errors kept in a crash log."""

from __future__ import annotations

import argparse
import ast
import os
import pkgutil
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import plangate
import plangate.commands
from plangate import cli
from plangate.errors import COMMON_EXIT_CODES, EXIT_INTERNAL, EXIT_INTERRUPTED, ExitCodes

SRC = Path(plangate.__file__).resolve().parent
REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
EXIT_CODES_DOC = REPO / "docs" / "exit-codes.md"


def _verb_modules() -> list[str]:
    return sorted(info.name for info in pkgutil.iter_modules(plangate.commands.__path__))


def test_every_module_in_commands_is_a_verb_the_cli_lists() -> None:
    assert sorted(cli.COMMANDS) == _verb_modules()
    assert len(set(cli.COMMANDS)) == len(cli.COMMANDS)


@pytest.mark.parametrize("name", _verb_modules())
def test_each_verb_module_adds_its_parser_and_runs(name: str) -> None:
    module = cli.command_module(name)
    assert callable(module.add_parser) and callable(module.run)
    assert isinstance(module.EXIT_CODES, ExitCodes)
    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers(dest="command")
    module.add_parser(subparsers)
    assert list(subparsers.choices) == [name]  # one verb, named as its module


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth (functions included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _package_files(package: str) -> list[Path]:
    return sorted((SRC / package).rglob("*.py"))


@pytest.mark.parametrize("package", ["commands", "runs"])
def test_no_import_of_the_cli_from_commands_or_runs(package: str) -> None:
    for path in _package_files(package):
        assert "plangate.cli" not in _imports(path), path


def test_runs_never_imports_commands() -> None:
    for path in _package_files("runs"):
        wrong = [name for name in _imports(path) if name.startswith("plangate.commands")]
        assert not wrong, (path, wrong)


def test_no_os_exit_outside_the_hook_runtime() -> None:
    allowed = SRC / "hook_io" / "runtime.py"
    for path in sorted(SRC.rglob("*.py")):
        if path == allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "_exit":
                pytest.fail(f"{path}:{node.lineno} calls os._exit")


def test_the_worker_is_spawned_as_python_m_plangate_worker() -> None:
    tree = ast.parse((SRC / "runs" / "engine.py").read_text(encoding="utf-8"))
    commands = [
        [item.value for item in node.elts if isinstance(item, ast.Constant)]
        for node in ast.walk(tree)
        if isinstance(node, ast.List)
    ]
    assert any(
        words[i : i + 3] == ["-m", "plangate", "worker"]
        for words in commands
        for i in range(len(words))
    )
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "plangate.runs.worker" not in text and 'plangate.commands.run"' not in text, path


# -- the exit code tables ------------------------------------------------------------------


def _tables() -> dict[str | None, ExitCodes]:
    tables: dict[str | None, ExitCodes] = {None: cli.EXIT_CODES}
    tables.update({name: cli.exit_codes(name) for name in cli.COMMANDS})
    return tables


@pytest.mark.parametrize("command", [None, *cli.COMMANDS])
def test_no_outcome_shares_a_code_with_usage_or_an_internal_error(command: str | None) -> None:
    codes = _tables()[command]
    assert codes.usage not in codes.outcomes
    assert EXIT_INTERNAL not in codes.codes and EXIT_INTERRUPTED not in codes.codes
    assert codes.failure is None or codes.failure in codes.outcomes
    table = codes.table()
    assert table[EXIT_INTERNAL] == COMMON_EXIT_CODES[EXIT_INTERNAL]


def test_report_follows_its_documented_contract() -> None:
    codes = cli.exit_codes("report")
    assert sorted(codes.codes) == [0, 1, 2, 3]
    assert codes.usage == 1 and codes.failure is None


def _documented_tables() -> dict[str, dict[int, str]]:
    """docs/exit-codes.md's tables: the common one first, then one under each ``## `plangate
    …``` heading, by title."""
    text = EXIT_CODES_DOC.read_text(encoding="utf-8")
    tables: dict[str, dict[int, str]] = {}
    title = "every command"
    for line in text.splitlines():
        heading = re.fullmatch(r"## `(plangate(?: [a-z-]+)?)`", line)
        if heading:
            title = heading.group(1)
            assert title not in tables, f"two tables for {title}"
            continue
        row = re.fullmatch(r"\| (\d+) \| (.+) \|", line)
        if row:
            table = tables.setdefault(title, {})
            assert int(row.group(1)) not in table, (title, line)
            table[int(row.group(1))] = row.group(2)
    return tables


def test_the_exit_codes_doc_has_the_tables_in_code() -> None:
    found = _documented_tables()
    expected = {"every command": dict(COMMON_EXIT_CODES), "plangate": dict(cli.EXIT_CODES.codes)}
    for name in cli.COMMANDS:
        expected[f"plangate {name}"] = dict(cli.exit_codes(name).codes)
    assert found == expected


def test_the_readme_links_the_exit_codes_and_holds_none_of_their_tables() -> None:
    text = README.read_text(encoding="utf-8")
    assert "(docs/exit-codes.md)" in text
    assert "| exit | meaning |" not in text


def _visible_flags(parser: argparse.ArgumentParser) -> set[str]:
    """The long flags ``--help`` shows for ``parser`` and its subcommands; ``--no-X`` of a
    ``--X | --no-X`` pair is counted as ``--X``."""
    flags: set[str] = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                flags |= _visible_flags(sub)
        if action.help == argparse.SUPPRESS:
            continue
        flags |= {o for o in action.option_strings if o.startswith("--") and o != "--help"}
    return {flag for flag in flags if not (flag.startswith("--no-") and f"--{flag[5:]}" in flags)}


def _synopses() -> dict[str, set[str]]:
    """The flags each verb's synopses in the README's command table name."""
    text = README.read_text(encoding="utf-8")
    table = text.split("| command | what it does |", 1)[1].split("\n\n", 1)[0]
    named: dict[str, set[str]] = {}
    for line in table.splitlines()[2:]:
        cell = line.split(" | ", 1)[0].removeprefix("| ")
        for synopsis in re.findall(r"`(plangate [^`]+)`", cell):
            verb = synopsis.split()[1]
            flags = set(re.findall(r"--[a-z][a-z-]*", synopsis.replace("--[no-]", "--")))
            if "[gate switches]" in synopsis:
                flags |= {"--ceo-review-gate", "--autoplan-gate"}
            named.setdefault(verb, set()).update(flags)
    return named


def test_each_synopsis_lists_every_flag() -> None:
    """The README's command table names every flag ``--help`` shows, and no other."""
    parser = cli.build_parser()
    verbs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    named = _synopses()
    assert set(named) == set(cli.COMMANDS)
    for verb, sub in verbs.choices.items():
        assert named[verb] == _visible_flags(sub), verb


# -- internal errors ---------------------------------------------------------------------

CRASH = """\
import sys
import plangate.commands.log as log
def boom(*args, **kwargs):
    raise ZeroDivisionError("division by zero")
log.log_summary = boom
from plangate.cli import main
raise SystemExit(main(["log"]))
"""


def _crash(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CRASH], env=env, capture_output=True, text=True, timeout=60
    )


def test_an_internal_error_exits_70_with_its_traceback_in_a_private_crash_log(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"
    done = _crash({**os.environ, "PLANGATE_STATE_ROOT": str(state)})
    assert done.returncode == EXIT_INTERNAL
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    (log,) = (state / "logs").iterdir()
    assert re.fullmatch(r"crash-\d{8}T\d{6}Z-\d+\.log", log.name)
    assert line == (
        "plangate log: internal error (a bug): ZeroDivisionError: division by zero; the "
        f"traceback is in {log}; please report it with the command you ran"
    )
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    text = log.read_text()
    assert "command: plangate log\n" in text
    assert "Traceback (most recent call last)" in text and "in boom" in text


def test_an_unwritable_state_root_puts_the_crash_log_in_the_temporary_folder(
    tmp_path: Path,
) -> None:
    state = tmp_path / "not-a-folder"
    state.write_text("")
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "PLANGATE_STATE_ROOT": str(state), "TMPDIR": str(temp)}
    done = _crash(env)
    assert done.returncode == EXIT_INTERNAL
    (line,) = done.stderr.splitlines()
    (log,) = temp.iterdir()
    assert log.name.startswith("plangate-crash-") and stat.S_IMODE(log.stat().st_mode) == 0o600
    assert f"the traceback is in {log} (the state root {state} cannot be written: " in line
    assert "in boom" in log.read_text()


def test_plangate_raise_lets_the_exception_through(tmp_path: Path) -> None:
    env = {**os.environ, "PLANGATE_STATE_ROOT": str(tmp_path / "state"), cli.RAISE_ENV: "1"}
    done = _crash(env)
    assert done.returncode == 1  # Python's own exit for an uncaught exception
    assert "ZeroDivisionError: division by zero" in done.stderr
    assert not (tmp_path / "state" / "logs").exists()


def test_no_crash_log_at_all_still_prints_the_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "not-a-folder"
    state.write_text("")
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(state))
    monkeypatch.setattr(cli, "_temporary_file", lambda name, text: (None, "no room"))
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        assert cli.crashed("log", ["log"]) == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert "RuntimeError: boom" in err and "Traceback" in err
    assert err.splitlines()[-1].startswith(
        "plangate log: internal error (a bug): RuntimeError: boom; the traceback is above "
        f"(no crash log: {state / 'logs'}/crash-"
    )
    last = err.splitlines()[-1]
    assert f"STATE_FOLDER_UNSAFE: {state} is not a folder" in last and "; no room)" in last


def test_an_expected_error_from_a_command_that_promises_none_is_a_bug(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from plangate.commands import report
    from plangate.errors import StateError

    def fails(*args: object, **kwargs: object) -> int:
        raise StateError("the state is gone", "make it again")

    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(tmp_path / "state"))
    monkeypatch.setattr(report, "report", fails)
    assert cli.exit_codes("report").failure is None
    assert cli.main(["report"]) == EXIT_INTERNAL  # not 1, report's usage code
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("plangate report: internal error (a bug): StateError: the state is")
    assert len(list((tmp_path / "state" / "logs").iterdir())) == 1


def test_help_lists_every_command_once_grouped_and_no_line_is_cut() -> None:
    """Issue 34: ``plangate --help`` listed the commands twice (argparse's list and the groups)
    and its last line stopped mid-sentence."""
    text = cli.build_parser().format_help()
    assert text.startswith("usage: plangate [-h] [--version] COMMAND ...\n")
    assert "positional arguments" not in text
    listed = [
        line.split()[0]
        for line in text.splitlines()
        if line.startswith("  ") and line[2] != " " and not line.lstrip().startswith("-")
    ]
    assert sorted(set(listed)) == sorted(cli.COMMANDS), listed
    for name in cli.COMMANDS:
        assert listed.count(name) == {"contract": 4, "journal": 2}.get(name, 1), name
    assert text.rstrip().endswith("a workflow contract and a governed run")


@pytest.mark.parametrize(
    ("argv", "loaded"),
    [(["--help"], []), (["journal", "--help"], ["plangate.commands.journal"])],
    ids=["help", "journal"],
)
def test_a_command_imports_what_it_runs(argv: list[str], loaded: list[str]) -> None:
    """Issue 34: every command's module (and what it imports: install, socket, …) was loaded
    for any command, about 40 ms of plangate's start-up; now only the one run."""
    script = (
        "import contextlib, io, sys; from plangate import cli\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    cli.main({argv!r})\n"
        "print(sorted(m for m in sys.modules if m.startswith('plangate.commands.')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == repr(loaded), done.stdout + done.stderr
