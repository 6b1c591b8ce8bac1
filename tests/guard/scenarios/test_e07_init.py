"""E.7 Init binding: only a literal `plangate autoplan init` binds the invocation."""

from __future__ import annotations

import os

import pytest

from plangate.guard.literal_calls import literal_plangate_call, looks_like_unbindable_init
from testkit.session import Call, SimulatedSession

from .conftest import Flow, assert_allowed, assert_denied


def _typed_start(flow: Flow) -> None:
    """A run started by a typed request (the model loads the skill itself): the latest human
    turn is not the slash command, so a missing init is not ``init_own``."""
    flow.s.typed("Please review plan.md with the autoplan skill.")


def test_e07_37_literal_init_spellings_bind_and_lookalikes_do_not(
    flow: Flow, session: SimulatedSession
) -> None:
    exe = session.plangate
    plan, restore = flow.plan, flow.restore
    forms = [
        f"'{exe}' autoplan init '{plan}' '{plan}' '{restore}'",
        f'"{exe}" autoplan init "{plan}" "{plan}" "{restore}"',
        f"{exe} autoplan init {plan} {plan} {restore}",
        f'"{exe}" autoplan init \\\n  "{plan}" \\\n  "{plan}" \\\n  "{restore}"',
    ]
    for form in forms:
        call = literal_plangate_call(form, exe)
        assert call is not None and call.subcommand == "init", form
        assert call.arguments == [plan, plan, restore], form
    lookalikes = [
        f'"{exe}" autoplan init "{plan}" "{plan}" "{restore}" && true',
        f'"{exe}" autoplan init "{plan}" "{plan}" "{restore}"; true',
        f'"/usr/bin/true" autoplan init "{plan}" "{plan}" "{restore}"',
        f'plangate autoplan init "{plan}" "{plan}" "{restore}"',
        f'"{exe}" autoplan init "$HOME/plan.md" "{plan}" "{restore}"',
    ]
    for form in lookalikes:
        assert literal_plangate_call(form, exe) is None, form
    # Windows drive and UNC spellings need a Windows host: not applicable on this one.
    # The first literal form, run for real, binds the invocation.
    flow.start()
    session.run(Call.bash(forms[0], "plangate"))
    assert_allowed(flow.attempt(flow.driver_read("ceo")))


UNBINDABLE = {
    "semicolon": "{cmd}; true",
    "and_true": "{cmd} && true",
    "pipe": "{cmd} | cat",
    "escaped_dollar": '"{exe}" autoplan init "{plan}" "{plan}" "{restore}" "\\$HOME"',
    "backtick": '"{exe}" autoplan init "{plan}" "{plan}" "{restore}" `true`',
}


@pytest.mark.parametrize("form", sorted(UNBINDABLE))
def test_e07_38_init_with_shell_syntax_around_it_is_denied(
    flow: Flow, session: SimulatedSession, form: str
) -> None:
    cmd = flow.command("autoplan", "init", flow.plan, flow.plan, flow.restore)
    command = UNBINDABLE[form].format(
        cmd=cmd, exe=session.plangate, plan=flow.plan, restore=flow.restore
    )
    _typed_start(flow)
    session.run(Call.bash(command, "plangate"))
    outcome = flow.attempt(flow.driver_read("ceo"))
    assert_denied(outcome, "init_unbindable", disposition="corrective")
    assert "literal absolute paths" in outcome.text


@pytest.mark.parametrize("form", sorted(UNBINDABLE) + ["redirect", "substitution"])
def test_e07_38c_after_a_typed_autoplan_an_unbindable_init_says_so(
    flow: Flow, session: SimulatedSession, form: str
) -> None:
    """The usual start is the typed ``/autoplan plan.md``: an init tried there through a
    pipe, a redirect, a chain or a substitution is ``init_unbindable`` (seed 000 names the
    pipe and the redirect), not the ``init_own`` a typed request with no init at all gets."""
    exe, plan, restore = session.plangate, flow.plan, flow.restore
    cmd = flow.command("autoplan", "init", plan, plan, restore)
    forms = {
        **{
            name: text.format(cmd=cmd, exe=exe, plan=plan, restore=restore)
            for name, text in UNBINDABLE.items()
        },
        "redirect": cmd + " > /dev/null",
        "substitution": f'"{exe}" autoplan init "$(realpath {plan})" "{plan}" "{restore}"',
    }
    flow.start()
    session.run(Call.bash(forms[form], "plangate"))
    outcome = flow.attempt(flow.driver_read("ceo"))
    assert_denied(outcome, "init_unbindable", disposition="corrective")
    assert "literal absolute paths" in outcome.text
    # Re-run literally and the run is bound; a typed /autoplan with no init tried is init_own.
    flow.init()
    assert_allowed(flow.attempt(flow.driver_read("ceo")))
    flow.start()
    assert_denied(flow.attempt(flow.driver_read("ceo")), "init_own")


def test_e07_38b_init_with_an_escaped_quote_is_not_an_init(
    flow: Flow, session: SimulatedSession
) -> None:
    command = f'"{session.plangate}" autoplan init "{flow.plan}" "{flow.plan}" "{flow.restore}\\""'
    _typed_start(flow)
    session.run(Call.bash(command, "plangate"))
    assert_denied(flow.attempt(flow.driver_read("ceo")), "init_required")


def test_e07_39_no_init_at_all_is_init_required(flow: Flow) -> None:
    _typed_start(flow)
    outcome = flow.attempt(flow.driver_read("ceo"))
    assert_denied(outcome, "init_required", disposition="corrective")
    assert "shell variable" not in outcome.text


def test_e07_40_other_commands_are_not_an_init(flow: Flow, session: SimulatedSession) -> None:
    _typed_start(flow)
    flow.bash(flow.command("autoplan", "checkpoint", flow.restore, "ceo"))  # fails: no init
    script = os.path.join(session.project_dir, "other.sh")
    with open(script, "w", encoding="utf-8") as handle:
        handle.write("echo '{}'\n")
    session.run(Call.bash(f"bash {script} init {flow.plan}"))
    assert_denied(flow.attempt(flow.driver_read("ceo")), "init_required")


@pytest.mark.parametrize("form", ["substitution", "redirect"])
def test_e07_41_substituted_or_redirected_init_cannot_be_bound(
    flow: Flow, session: SimulatedSession, form: str
) -> None:
    exe = session.plangate
    if form == "substitution":
        command = f'"{exe}" autoplan init "$(realpath {flow.plan})" "{flow.plan}" "{flow.restore}"'
    else:
        command = (
            flow.command("autoplan", "init", flow.plan, flow.plan, flow.restore) + " > /dev/null"
        )
    _typed_start(flow)
    session.run(Call.bash(command))
    outcome = flow.attempt(flow.driver_read("ceo"))
    assert_denied(outcome, "init_unbindable")
    assert "cannot" not in outcome.text or "literal" in outcome.text


@pytest.mark.parametrize("form", ["variable_piped", "quoted_variable", "chained_echo"])
def test_e07_42_variable_init_is_unbindable_until_a_literal_rerun(
    flow: Flow, session: SimulatedSession, form: str
) -> None:
    exe, plan, restore = session.plangate, flow.plan, flow.restore
    commands = {
        "variable_piped": f'P="{plan}"; "{exe}" autoplan init "$P" "$P" "{restore}" | tail -1',
        "quoted_variable": f'PLANGATE="{exe}"\n"$PLANGATE" autoplan init "{plan}" "{plan}" '
        f'"{restore}"',
        "chained_echo": flow.command("autoplan", "init", plan, plan, restore) + " && echo done",
    }
    assert looks_like_unbindable_init(commands[form])
    _typed_start(flow)
    session.run(Call.bash(commands[form]))
    assert_denied(flow.attempt(flow.driver_read("ceo")), "init_unbindable")
    rerun = flow.init()
    assert rerun.json()["reused"] is True
    assert_allowed(flow.attempt(flow.driver_read("ceo")))


def test_e07_43_a_new_initialization_excludes_earlier_publications(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.through("ceo")
    flow.init(restore=os.path.join(flow.artifacts, "plan-restore-2.md"))
    flow.restore = os.path.join(flow.artifacts, "plan-restore-2.md")
    assert_allowed(flow.attempt(flow.driver_read("ceo")))
    outcome = flow.attempt(flow.driver_read("design"))
    assert_denied(outcome, "close_required")
    assert "Detail: 1." in outcome.text


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ("crlf", None),
        ("lf", None),
        ("trailing_text", "init_mismatch"),
        ("no_newline", "init_mismatch"),
    ],
)
def test_e07_44_restore_header_line_endings(
    flow: Flow, session: SimulatedSession, change: str, code: str | None
) -> None:
    flow.begin()
    with open(flow.plan, "rb") as handle:
        data = handle.read()
    header, _, rest = data.partition(b"\n")
    if change == "crlf":
        data = header + b"\r\n" + rest
    elif change == "trailing_text":
        data = header + b" edited\n" + rest
    elif change == "no_newline":
        data = header
    with open(flow.plan, "wb") as handle:
        handle.write(data)
    outcome = flow.attempt(flow.driver_read("ceo"))
    if code is None:
        assert_allowed(outcome)
    else:
        assert_denied(outcome, code, disposition="fallback")
        assert "Fallback:" in outcome.text


# --- seed 000's init edge cases (issue 22) ------------------------------------------------


def _init_call(flow: Flow) -> Call:
    return Call.bash(flow.command("autoplan", "init", flow.plan, flow.plan, flow.restore), "init")


@pytest.mark.parametrize("results", [0, 2])
def test_e07_45_zero_or_duplicate_init_results_are_init_mismatch(
    flow: Flow, session: SimulatedSession, results: int
) -> None:
    flow.start()
    call = _init_call(flow)
    session.message(calls=[call], run=results == 2)
    if results == 2:
        session.result(call, call.text)  # the same result written a second time
    outcome = flow.attempt(flow.driver_read("ceo"))
    assert_denied(outcome, "init_mismatch", disposition="fallback")
    assert f"the init has {results} results" in outcome.text


def test_e07_46_a_failed_init_after_a_good_one_is_init_failed(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.begin()
    failed = _init_call(flow)
    session.message(calls=[failed], run=False)
    session.error_result(failed, "Exit code 1\nplangate: the restore point is busy")
    outcome = flow.attempt(flow.driver_read("ceo"))
    assert_denied(outcome, "init_failed", disposition="corrective")
    assert "same three literal paths" in outcome.text


def test_e07_47_a_later_good_init_binds_after_a_failed_one(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.start()
    failed = _init_call(flow)
    session.message(calls=[failed], run=False)
    session.error_result(failed, "Exit code 1\nplangate: the plan cannot be read")
    assert_denied(flow.attempt(flow.driver_read("ceo")), "init_failed")
    flow.init()
    assert_allowed(flow.attempt(flow.driver_read("ceo")))


def test_e07_48_a_later_good_init_of_other_paths_rebinds(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.through("ceo")
    second = os.path.join(flow.artifacts, "plan-restore-2.md")
    assert flow.init(restore=second).json()["restorePath"] == second
    # The new binding starts a new run: the CEO report of the first one does not count.
    assert_denied(flow.attempt(flow.driver_read("design")), "phase_order")


def test_e07_49_init_output_that_is_not_its_json_says_to_drop_the_cd(
    flow: Flow, session: SimulatedSession
) -> None:
    flow.start()
    call = _init_call(flow)
    session.message(calls=[call], run=False)
    session.result(call, "Switched to the project folder.\n{}")
    outcome = flow.attempt(flow.driver_read("ceo"))
    assert_denied(outcome, "init_failed", disposition="corrective")
    assert "without a leading `cd`" in outcome.text
    assert "Detail:" not in outcome.text
