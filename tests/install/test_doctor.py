"""``plangate doctor``: healthy, then broken each way it checks, on real files, a real
interpreter and the real Claude Code CLI (the plugin installed through ``claude plugin``)."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import plangate
from plangate import hook_registry
from plangate.claude_cli import ClaudeNotFoundError, find_claude
from plangate.install import settings_file
from plangate.install.doctor import doctor
from plangate.install.setup import setup


class World:
    def __init__(self, home: Path, claude: Path) -> None:
        self.home = home
        self.claude = claude
        self.project = home / "project"
        self.project.mkdir()
        self.venv = home / "venv"
        self.make_python()

    def make_python(self) -> None:
        """A real interpreter of its own, which a test can remove, with plangate's compiled
        dependency (msgspec) in its site-packages as an installation has it."""
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", str(self.venv)], check=True, timeout=120
        )
        import msgspec

        (self.msgspec,) = self.venv.glob("lib/python*/site-packages")
        self.msgspec = self.msgspec / "msgspec"
        self.msgspec.symlink_to(Path(msgspec.__file__).parent, target_is_directory=True)

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    def setup(self, *, plugin: bool = False, project: bool = False, ceo: bool | None = None) -> str:
        out = io.StringIO()
        setup(
            project=project,
            uninstall=False,
            ceo_review_gate=ceo,
            autoplan_gate=None,
            out=out,
            err=io.StringIO(),
            cwd=str(self.project),
            python=self.python,
            environ={},
            plugin=plugin,
        )
        return out.getvalue()

    def doctor(self) -> tuple[int, list[str]]:
        out = io.StringIO()
        code = doctor(as_json=False, out=out, cwd=str(self.project))
        return code, out.getvalue().splitlines()

    def doctor_json(self) -> tuple[int, dict[str, dict[str, str]]]:
        out = io.StringIO()
        code = doctor(as_json=True, out=out, cwd=str(self.project))
        record = json.loads(out.getvalue())
        assert record["healthy"] is (code == 0)
        return code, {check["check"]: check for check in record["checks"]}


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    try:
        claude = find_claude()
    except ClaudeNotFoundError as error:
        pytest.fail(f"the Claude Code CLI is missing: {error}", pytrace=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("PLANGATE_STATE_ROOT", str(home / ".plangate"))
    monkeypatch.setenv("PLANGATE_CLAUDE_BIN", str(claude))
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
    monkeypatch.setenv("DISABLE_AUTOUPDATER", "1")
    for name in ("PLANGATE_CEO_REVIEW_GATE", "PLANGATE_AUTOPLAN_GATE", "CLAUDE_PLUGIN_ROOT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(home / "..")
    return World(home, claude)


def _line(lines: list[str], check: str) -> str:
    (found,) = [line for line in lines if line[8:].startswith(check + "  ")]
    return found


def test_healthy_then_the_interpreter_is_removed(world: World) -> None:
    world.setup()
    code, lines = world.doctor()
    assert code == 0, lines
    assert lines[-1] == "healthy"
    assert all(line.startswith("ok ") for line in lines[:-1]), lines
    assert _line(lines, "registration").endswith(
        "~/.claude/settings.json: PreToolUse, Stop, SubagentStop, UserPromptExpansion"
    )  # the workflow contract hooks are on by default
    assert _line(lines, "hooks").endswith(f"run plangate 0.1.0 with {world.python}")
    assert "autoplan, plan-ceo-review match plangate 0.1.0" in _line(lines, "skills")
    assert _line(lines, "claude").endswith(f"Claude Code 2.1.332 at {world.claude} (verified)")
    assert _line(lines, "state root").startswith("ok      state root")
    assert _line(lines, "gate switches").endswith(
        "ceo_review_gate off (default); autoplan_gate off (default); "
        "workflow_contracts on (default)"
    )

    shutil.rmtree(world.venv)
    code, lines = world.doctor()
    assert code == 1 and lines[-1] == "1 problem(s)"
    hooks = _line(lines, "hooks")
    assert hooks.startswith("problem hooks")
    assert f"the hooks' interpreter {world.python} does not exist" in hooks
    assert hooks.endswith("-> run `plangate setup` again with the plangate you use")


def test_an_edited_or_missing_skill_is_named(world: World) -> None:
    world.setup()
    skill = world.home / ".claude" / "skills" / "autoplan" / "SKILL.md"
    skill.write_text(skill.read_text(encoding="utf-8") + "\nMy own rule.\n", encoding="utf-8")
    code, checks = world.doctor_json()
    assert code == 1
    problem = checks["skills"]
    assert problem["status"] == "problem"
    assert (
        "autoplan differs from plangate 0.1.0's: ~/.claude/skills/autoplan/SKILL.md"
        in (problem["detail"])
    )
    assert "copy your changes elsewhere first" in problem["remedy"]
    assert checks["hooks"]["status"] == "ok"
    shutil.rmtree(world.home / ".claude" / "skills" / "plan-ceo-review")
    _, checks = world.doctor_json()
    assert "plan-ceo-review is not installed in ~/.claude/skills" in checks["skills"]["detail"]
    world.setup()
    assert world.doctor()[0] == 0


def test_user_and_project_settings_both_registering_is_a_duplicate(world: World) -> None:
    world.setup()
    world.setup(project=True)
    code, checks = world.doctor_json()
    assert code == 1
    detail = checks["registration"]["detail"]
    assert detail.startswith("duplicate registration: ~/.claude/settings.json and ")
    assert "project/.claude/settings.json both register PreToolUse" in detail
    assert "plangate setup --project --uninstall" in checks["registration"]["remedy"]


@pytest.mark.e2e
def test_the_plugin_healthy_then_duplicated_then_its_interpreter_removed(world: World) -> None:
    out = world.setup(plugin=True, ceo=True)
    assert "ran `claude plugin install plangate@plangate --json`" in out
    code, lines = world.doctor()
    assert code == 0, lines
    assert _line(lines, "registration").endswith(
        "plugin: PreToolUse, Stop, SubagentStop, UserPromptExpansion"
    )
    assert "match plangate 0.1.0 (plangate plugin, and Claude Code's installed copy " in _line(
        lines, "skills"
    )
    assert "ceo_review_gate on (from ~/.plangate/config.json)" in _line(lines, "gate switches")

    # Settings hooks written beside the plugin (by hand, or by an older plangate).
    project_settings = world.project / ".claude" / "settings.json"
    project_settings.parent.mkdir()
    block = hook_registry.hook_settings(True, False, world.python)
    project_settings.write_bytes(settings_file.render({"hooks": block}))
    code, checks = world.doctor_json()
    assert code == 1
    assert checks["registration"]["detail"].startswith("duplicate registration: ")
    assert "plugin both register PreToolUse, Stop, SubagentStop" in checks["registration"]["detail"]
    assert "plangate setup --plugin --uninstall" in checks["registration"]["remedy"]
    project_settings.unlink()

    shutil.rmtree(world.venv)
    code, checks = world.doctor_json()
    assert code == 1
    assert f"the hooks' interpreter {world.python} does not exist" in checks["hooks"]["detail"]
    assert (
        checks["hooks"]["remedy"] == "run `plangate setup --plugin` again with the plangate you use"
    )
    world.make_python()
    assert world.doctor()[0] == 0


@pytest.mark.e2e
def test_the_plugin_copy_claude_code_installed_is_checked(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``claude plugin install`` copies the plugin to ``plugins/cache/<marketplace>/<plugin>/
    <version>``: an edit there, or a copy of another version, is a problem whose remedy works."""
    world.setup(plugin=True)
    cache = world.home / ".claude" / "plugins" / "cache" / "plangate" / "plangate"
    skill = cache / plangate.__version__ / "skills" / "plan-ceo-review" / "SKILL.md"
    code, lines = world.doctor()
    assert code == 0, lines
    assert _line(lines, "skills").endswith(
        f"(plangate plugin, and Claude Code's installed copy "
        f"~/.claude/plugins/cache/plangate/plangate/{plangate.__version__})"
    )

    with skill.open("a", encoding="utf-8") as stream:
        stream.write("Skip the review.\n")
    code, checks = world.doctor_json()
    assert code == 1
    assert checks["skills"]["detail"] == (
        f"plan-ceo-review differs from plangate {plangate.__version__}'s: "
        f"~/.claude/plugins/cache/plangate/plangate/{plangate.__version__}/skills/"
        "plan-ceo-review/SKILL.md"
    )
    assert checks["skills"]["remedy"].startswith(
        "run `plangate setup --plugin --uninstall`, then `plangate setup --plugin`"
    )

    def uninstall() -> None:
        setup(
            project=False,
            uninstall=True,
            ceo_review_gate=None,
            autoplan_gate=None,
            out=io.StringIO(),
            err=io.StringIO(),
            cwd=str(world.project),
            environ={},
            plugin=True,
        )

    uninstall()  # the remedy, as named
    world.setup(plugin=True)
    assert world.doctor()[0] == 0
    assert "Skip the review." not in skill.read_text(encoding="utf-8")

    # A copy another plangate installed (here a real install of a plugin built as 0.0.9).
    uninstall()
    with monkeypatch.context() as older:
        older.setattr(plangate, "__version__", "0.0.9")
        world.setup(plugin=True)
    code, checks = world.doctor_json()
    assert code == 1
    assert (
        "Claude Code's installed copy ~/.claude/plugins/cache/plangate/plangate/0.0.9 is "
        f"plangate 0.0.9's, this is {plangate.__version__}"
    ) in checks["skills"]["detail"]
    uninstall()
    world.setup(plugin=True)
    assert world.doctor()[0] == 0


def test_doctor_says_which_parser_the_hooks_use(world: World) -> None:
    """The hooks' interpreter decides: msgspec where it can import it, else the standard
    library, the fallback (a warning: the verdicts are the same, only slower)."""
    import msgspec

    world.setup()
    code, lines = world.doctor()
    assert code == 0, lines
    assert _line(lines, "parser") == (
        "ok      parser         the hooks parse journals of 16 MiB and more with "
        f"msgspec {msgspec.__version__}"
    )

    world.msgspec.unlink()  # a platform without a msgspec wheel
    code, checks = world.doctor_json()
    assert code == 0
    assert checks["parser"]["status"] == "warn"
    assert checks["parser"]["detail"] == (
        "the hooks parse journals of 16 MiB and more with the standard library: "
        f"{world.python} cannot import msgspec, so cold reads of long journals take about "
        "twice as long (the verdicts are the same)"
    )
    assert "uv tool upgrade --reinstall plangate" in checks["parser"]["remedy"]


def test_nothing_registered_and_a_gate_on_without_its_hook(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, checks = world.doctor_json()
    assert code == 1
    assert checks["registration"]["detail"].startswith("no plangate hooks are registered")
    assert "plangate setup --plugin" in checks["registration"]["remedy"]
    world.setup()
    monkeypatch.setenv("PLANGATE_AUTOPLAN_GATE", "on")
    code, checks = world.doctor_json()
    assert code == 1
    assert checks["gate switches"]["detail"] == (
        "ceo_review_gate off (default); autoplan_gate on (from PLANGATE_AUTOPLAN_GATE); "
        "workflow_contracts on (default); autoplan_gate is on but no Stop hook is registered"
    )  # the contracts' own Stop hook is not the gate's
    assert checks["contracts"]["status"] == "ok"
    assert checks["contracts"]["detail"] == ("no contract here enters a phase by a Read or Agent")


def test_no_cli_names_the_npm_command(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    world.setup()
    monkeypatch.delenv("PLANGATE_CLAUDE_BIN")
    monkeypatch.setenv("PATH", str(world.home / "no-bin"))
    code, checks = world.doctor_json()
    assert code == 1
    assert checks["claude"]["remedy"] == (
        "install it with `npm install -g @anthropic-ai/claude-code@2.1.332`"
    )


def test_the_command_line(world: World) -> None:
    world.setup()
    done = subprocess.run(
        [str(Path(sys.executable).parent / "plangate"), "doctor", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=world.project,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["healthy"] is True


@pytest.mark.corpus
def test_an_unverified_version_is_told_what_the_survey_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real journals of Claude Code 2.1.38 (the public corpus), surveyed as doctor does."""
    from plangate.install.checks import survey_summary
    from testkit.journals import journal_path
    from tests import corpus
    from tests.commands.test_journal_survey import root_record

    found = corpus.require()
    config = tmp_path / "claude"
    config.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    for name in ("spotter/short.jsonl", "spotter/tool_heavy.jsonl"):
        root = root_record(found / name)
        target = journal_path(config, str(root["cwd"]), str(root["sessionId"]))
        shutil.copyfile(found / name, target)
    assert survey_summary("2.1.38") == (
        "`plangate journal survey` finds 2 journal(s) of Claude Code 2.1.38 in the last 14 "
        "days, 2 ready"
    )
    assert survey_summary("2.1.400") == (
        "`plangate journal survey` finds no journal of Claude Code 2.1.400 in the last 14 days"
    )


@pytest.mark.parametrize("plugin", [False, True], ids=["settings", "plugin"])
def test_the_hook_filter_is_checked(world: World, plugin: bool) -> None:
    world.setup(plugin=plugin)
    code, lines = world.doctor()
    assert code == 0, lines
    assert _line(lines, "hook filter").startswith("ok ")
    # A registration from before the `if` conditions: one handler without one.
    if plugin:
        path = world.home / ".plangate" / "claude-plugin" / "plangate" / "hooks" / "hooks.json"
    else:
        path = world.home / ".claude" / "settings.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    group = data["hooks"]["PreToolUse"][0]  # the guard's (then the contracts')
    assert group["matcher"] == "Read|Agent"
    group["hooks"] = [{k: v for k, v in group["hooks"][0].items() if k != "if"}]
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    code, lines = world.doctor()
    line = _line(lines, "hook filter")
    assert line.startswith("warn ") and "has no `if` conditions" in line, line
    assert "run `plangate setup" in line
    assert code == 0, lines  # a warning: the guard still decides every call right


def test_with_no_hooks_registered_the_hook_filter_is_not_ok(world: World) -> None:
    """Issue 34: with no hooks registered, doctor once printed "ok hook filter"."""
    code, lines = world.doctor()
    assert code == 1, lines
    line = _line(lines, "hook filter")
    assert line.startswith("warn ") and "the guard's hook is not registered" in line, line


@pytest.mark.parametrize("plugin", [False, True], ids=["settings", "plugin"])
def test_a_broken_contract_names_the_setup_that_works(world: World, plugin: bool) -> None:
    """Issue 34: in plugin mode the remedy for a broken contract named `plangate setup`, which
    then refuses because the plugin is installed; it names `setup --plugin` there."""
    folder = world.project / ".plangate" / "contracts"
    folder.mkdir(parents=True)
    (folder / "mine.toml").write_text("[workflow]\nname = 1\n", encoding="utf-8")
    world.setup(plugin=plugin)
    code, checks = world.doctor_json()
    assert code == 1
    remedy = checks["contracts"]["remedy"]
    if plugin:
        assert "`plangate setup --plugin` again" in remedy, remedy
    else:
        assert "`plangate setup` again" in remedy and "--plugin" not in remedy, remedy
