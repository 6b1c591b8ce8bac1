"""The /plan-ceo-review gate, one rule at a time, through
:func:`plangate.gates.stop_hook.decide`."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from plangate.gates import markers as mk
from plangate.gates import timing
from plangate.journal.verdict import Verdict
from testkit.clock import ClockWorld, FakeClock
from testkit.journals import use_id
from tests.gates.conftest import (
    RANKED,
    UNRANKED,
    Env,
    bash,
    ceo_session,
    write_file,
)

OFF_SWITCH_WORDS = ("PLANGATE_CEO_REVIEW_GATE", "ceo_review_gate", "config set", "turn off")


def _markers(output: dict[str, object]) -> list[tuple[str, str, dict[str, str]]]:
    texts = [str(output.get("reason", "")), str(output.get("systemMessage", ""))]
    found = []
    for text in texts:
        for line in mk.find_all(text):
            parsed = mk.parse(line)
            assert parsed is not None
            found.append(parsed)
    return found


def _events(output: dict[str, object]) -> list[str]:
    return [event for _, event, _ in _markers(output)]


def test_a_session_that_never_loaded_the_review_is_left_alone(env: Env) -> None:
    journal = env.journal()
    journal.prompt("Say hello.")
    use = journal.tool_use("Bash", {"command": "echo hello", "description": "x" * 5000})
    journal.bash_result(use_id(use), "hello")
    journal.text("Hello.")
    clock = FakeClock()
    assert env.decide_on(clock, env.payload(journal)) == {}
    assert clock.sleeps == 0  # the last text was read in full: settled at once
    assert not env.has_record(journal.session_id)


def test_a_load_too_large_for_the_index_still_arms(env: Env) -> None:
    journal = env.journal()
    journal.prompt("Review plan.md.")
    skill = env.skill_file("plan-ceo-review")
    use = journal.tool_use("Read", {"file_path": skill, "note": "x" * 6000})
    journal.read_result(use_id(use), skill, ["# review"])
    journal.text("Done.")
    assert env.decide(env.payload(journal))["decision"] == "block"


@pytest.mark.parametrize("load", ["command", "skill", "read"])
def test_each_way_of_loading_arms_the_gate_and_an_empty_run_is_blocked(env: Env, load: str) -> None:
    journal = ceo_session(env, load=load)
    journal.text("The review is done.")
    output = env.decide(env.payload(journal))
    assert output["decision"] == "block"
    reason = str(output["reason"])
    first = reason.splitlines()[0]
    assert first.startswith("PLANGATE_GATE ceo-review-gate blocked session=" + journal.session_id)
    parsed = mk.parse(first)
    assert parsed is not None
    assert parsed[2]["via"] == "stop" and parsed[2]["n"] == "1" and parsed[2]["files"] == "none"
    assert "Write a `## Findings` section into" in reason  # seed 001's heading leads
    assert "A `## Top risks` heading with such a list counts too" in reason
    assert "numbered list that starts at 1" in reason
    assert not any(word in reason for word in OFF_SWITCH_WORDS)
    assert "fired" in _events(output)
    run = next(iter(env.record(journal.session_id)["gates"]["ceo_review_gate"]["runs"].values()))
    assert run["blocked"] == 1 and run["fired_at"] and run["via"] == load


def test_the_block_names_the_last_markdown_file_the_run_wrote_and_why_it_fell_short(
    env: Env,
) -> None:
    journal = ceo_session(env)
    write_file(journal, env.project / "plan.md", UNRANKED)
    journal.text("Review written.")
    output = env.decide(env.payload(journal))
    reason = str(output["reason"])
    assert f"into {env.project / 'plan.md'} (the last Markdown file this run wrote)" in reason
    assert '- plan.md: no heading with "Findings" or "Top risks"' in reason
    assert mk.parse(reason.splitlines()[0])[2]["files"] == "plan.md"  # type: ignore[index]


def test_a_written_file_with_ranked_risks_releases(env: Env) -> None:
    journal = ceo_session(env)
    write_file(journal, env.project / "plan.md", RANKED)
    journal.text("Review written.")
    output = env.decide(env.payload(journal))
    assert "decision" not in output
    assert _events(output) == ["fired", "released"]
    released = _markers(output)[1][2]
    assert released["file"] == "plan.md" and released["blocked"] == "0"
    run = next(iter(env.record(journal.session_id)["gates"]["ceo_review_gate"]["runs"].values()))
    assert run["released_at"] and run["file"] == str(env.project / "plan.md")


def test_the_configured_output_comes_first_and_a_relative_path_is_from_the_cwd(env: Env) -> None:
    (env.project / "out").mkdir()
    (env.project / "out" / "review.md").write_text(RANKED, encoding="utf-8")
    journal = ceo_session(env)
    write_file(journal, env.project / "plan.md", UNRANKED)
    journal.text("Done.")
    output = env.decide(env.payload(journal), PLANGATE_CEO_REVIEW_OUTPUT="out/review.md")
    assert _markers(output)[-1][2]["file"] == "review.md"


def test_the_configured_output_is_named_in_the_block(env: Env) -> None:
    journal = ceo_session(env)
    journal.text("Done.")
    output = env.decide(env.payload(journal), PLANGATE_CEO_REVIEW_OUTPUT="out/review.md")
    reason = str(output["reason"])
    assert (
        f"into {env.project / 'out' / 'review.md'} (PLANGATE_CEO_REVIEW_OUTPUT names it)" in reason
    )
    assert "- out/review.md: missing" in reason


def test_a_heredoc_review_is_found_in_the_repository(env: Env) -> None:
    env.git_init()
    subprocess.run(
        ["git", "-C", str(env.project), "commit", "-q", "--allow-empty", "-m", "x"],
        check=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
        },
    )
    journal = ceo_session(env)
    bash(journal, "cat >> notes/review.md <<'EOF'\n## Findings\n1. x\nEOF")
    (env.project / "notes").mkdir()
    (env.project / "notes" / "review.md").write_text(
        "## Findings\n\n1. The import has no size limit.\n", encoding="utf-8"
    )
    journal.text("Done.")
    output = env.decide(env.payload(journal))
    assert _events(output) == ["fired", "released"]
    assert _markers(output)[-1][2]["file"] == "review.md"
    assert env.record(journal.session_id)["gates"]["ceo_review_gate"]["skipped"] == []


def test_no_git_is_skipped_once_per_session(env: Env) -> None:
    journal = ceo_session(env)
    journal.text("Done.")
    first = env.decide(env.payload(journal))
    assert "skipped" in _events(first)
    skipped = [m for m in _markers(first) if m[1] == "skipped"][0][2]
    assert skipped["reason"] == "no-git"
    journal.text("Still done.")
    second = env.decide(env.payload(journal))
    assert "skipped" not in _events(second)
    assert env.record(journal.session_id)["gates"]["ceo_review_gate"]["skipped"] == ["no-git"]


def test_a_repository_without_a_commit_still_counts_its_files(env: Env) -> None:
    env.git_init()
    (env.project / "review.md").write_text(RANKED, encoding="utf-8")
    journal = ceo_session(env)
    journal.text("Done.")
    output = env.decide(env.payload(journal))
    assert _events(output) == ["skipped", "fired", "released"]
    assert _markers(output)[0][2]["reason"] == "no-head"


def test_the_ceo_plans_folder_of_the_state_root_counts(env: Env) -> None:
    folder = env.state / "ceo-plans"
    folder.mkdir(parents=True)
    (folder / "plan-ceo-review.md").write_text(RANKED, encoding="utf-8")
    journal = ceo_session(env)
    journal.text("Done.")
    output = env.decide(env.payload(journal))
    assert _markers(output)[-1][1] == "released"
    assert _markers(output)[-1][2]["file"] == "plan-ceo-review.md"


def test_the_project_ceo_plans_folder_uses_the_slug(env: Env) -> None:
    folder = env.state / "projects" / "my-project" / "ceo-plans"
    folder.mkdir(parents=True)
    (folder / "review.md").write_text(RANKED, encoding="utf-8")
    journal = ceo_session(env)
    journal.text("Done.")
    output = env.decide(env.payload(journal), PLANGATE_PROJECT_SLUG="my-project")
    assert _markers(output)[-1][1] == "released"


def test_a_bad_slug_is_gate_slug_and_the_stop_goes_through(env: Env) -> None:
    journal = ceo_session(env)
    journal.text("Done.")
    output = env.decide(env.payload(journal), PLANGATE_PROJECT_SLUG="../elsewhere")
    assert "decision" not in output
    (error,) = [m for m in _markers(output) if m[1] == "error"]
    assert error[2]["code"] == "GATE_SLUG"
    entry = env.record(journal.session_id)["gates"]["ceo_review_gate"]
    assert entry["error_count"] == 1 and entry["errors"][0]["code"] == "GATE_SLUG"


def test_a_file_not_changed_after_the_load_does_not_count(env: Env) -> None:
    journal = ceo_session(env)
    write_file(journal, env.project / "plan.md", RANKED)
    old = time.time() - 3600
    os.utime(env.project / "plan.md", (old, old))
    journal.text("Done.")
    output = env.decide(env.payload(journal))
    assert output["decision"] == "block"
    assert "- plan.md: not changed since the review loaded" in str(output["reason"])


def test_a_file_in_a_skills_folder_never_counts(env: Env) -> None:
    journal = ceo_session(env)
    (env.project / "skills" / "x").mkdir(parents=True)
    write_file(journal, env.project / "skills" / "x" / "notes.md", RANKED)
    journal.text("Done.")
    output = env.decide(env.payload(journal))
    assert output["decision"] == "block"
    assert "inside a skills/ folder" in str(output["reason"])


def test_a_project_that_sits_under_a_skills_folder_still_counts(env: Env) -> None:
    project = env.root / "skills" / "app"
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    journal = ceo_session(env, cwd=str(project))
    write_file(journal, project / "plan.md", RANKED)
    journal.text("Done.")
    payload = env.payload(journal, cwd=str(project))
    output = env.decide(payload)
    assert _markers(output)[-1][1] == "released"


def test_three_blocks_then_exhausted_and_stop_hook_active_is_no_free_pass(env: Env) -> None:
    journal = ceo_session(env)
    for n in (1, 2, 3):
        journal.text(f"Done, attempt {n}.")
        output = env.decide(env.payload(journal, stop_hook_active=n > 1))
        assert output["decision"] == "block", n
        assert mk.parse(str(output["reason"]).splitlines()[0])[2]["n"] == str(n)  # type: ignore[index]
    journal.text("Done, attempt 4.")
    output = env.decide(env.payload(journal, stop_hook_active=True))
    assert "decision" not in output
    (exhausted,) = _markers(output)
    assert exhausted[1] == "exhausted" and exhausted[2]["blocked"] == "3"
    journal.text("Done, attempt 5.")
    assert env.decide(env.payload(journal, stop_hook_active=True)) == {}
    run = next(iter(env.record(journal.session_id)["gates"]["ceo_review_gate"]["runs"].values()))
    assert run["blocked"] == 3 and run["exhausted_at"] and run["observed"] == 5
    events = [line.split(" event=")[1].split()[0] for line in env.log("ceo-review-gate")]
    assert events == ["skipped", "fired", "blocked", "blocked", "blocked", "exhausted"]


def test_after_release_the_run_is_left_alone_and_a_new_load_starts_a_new_run(env: Env) -> None:
    journal = ceo_session(env)
    write_file(journal, env.project / "plan.md", RANKED)
    journal.text("Done.")
    env.decide(env.payload(journal))
    journal.text("Anything else?")
    assert env.decide(env.payload(journal)) == {}
    journal.slash_command("plan-ceo-review", "other.md")
    journal.text("Second review done.")
    output = env.decide(env.payload(journal))
    assert output["decision"] == "block"
    runs = env.record(journal.session_id)["gates"]["ceo_review_gate"]["runs"]
    assert len(runs) == 2


def test_an_interactive_question_is_never_held_but_a_final_answer_is(env: Env) -> None:
    journal = ceo_session(env)
    journal.records[-1]["promptSource"] = "typed"
    journal.records[-1]["entrypoint"] = "cli"
    journal.text("Which plan should I review?")
    environ = {"CLAUDE_CODE_ENTRYPOINT": "cli"}
    assert env.decide(env.payload(journal), **environ) == {}
    run = next(iter(env.record(journal.session_id)["gates"]["ceo_review_gate"]["runs"].values()))
    assert run["waiting"] == "question" and not run["fired_at"]
    journal.text("STATUS: NEEDS_CONTEXT\nI need the plan path")
    assert env.decide(env.payload(journal), **environ) == {}
    journal.text("The review is done.")
    assert env.decide(env.payload(journal), **environ)["decision"] == "block"


def test_an_ask_user_question_call_is_a_question(env: Env) -> None:
    journal = ceo_session(env)
    journal.records[-1]["promptSource"] = "typed"
    journal.parallel_tool_uses([("AskUserQuestion", {"questions": []})])
    journal.text("Waiting for your answer.")
    journal.records[-1]["message"]["id"] = journal.records[-2]["message"]["id"]
    assert env.decide(env.payload(journal), CLAUDE_CODE_ENTRYPOINT="cli") == {}


def test_a_question_in_a_session_nobody_answers_is_final(env: Env) -> None:
    journal = ceo_session(env)  # claude -p: promptSource sdk, entrypoint sdk-cli
    journal.text("Shall I write the review now?")
    assert env.decide(env.payload(journal))["decision"] == "block"


def test_a_stop_while_a_background_reviewer_runs_is_not_held(env: Env) -> None:
    journal = ceo_session(env)
    use = journal.tool_use(
        "Agent", {"prompt": "review", "description": "r", "run_in_background": True}
    )
    journal.async_launch_result(use_id(use))
    journal.text("Waiting for the reviewer.")
    assert env.decide(env.payload(journal)) == {}
    running = [{"id": "a1", "type": "subagent", "status": "running"}]
    journal.task_notification(use_id(use))
    journal.text("The reviewer reported.")
    assert env.decide(env.payload(journal, background_tasks=running)) == {}
    journal.text("Now done.")
    assert env.decide(env.payload(journal))["decision"] == "block"


def test_a_failed_skill_call_does_not_arm(env: Env) -> None:
    journal = env.journal()
    journal.prompt("Review it.")
    use = journal.tool_use("Skill", {"skill": "plan-ceo-review"})
    journal.tool_result(use_id(use), "Unknown skill", is_error=True)
    journal.text("Could not load it.")
    assert env.decide(env.payload(journal)) == {}


def test_the_gate_off_does_nothing(env: Env) -> None:
    journal = ceo_session(env)
    journal.text("Done.")
    assert env.decide(env.payload(journal), PLANGATE_CEO_REVIEW_GATE="off") == {}
    assert not env.has_record(journal.session_id)


def test_the_switch_comes_from_the_config_when_the_environment_is_silent(env: Env) -> None:
    from plangate import config

    journal = ceo_session(env)
    journal.text("Done.")
    del env.environ["PLANGATE_CEO_REVIEW_GATE"]
    assert env.decide(env.payload(journal)) == {}
    config.set("ceo_review_gate", True, path=str(env.state / "config.json"))
    assert env.decide(env.payload(journal))["decision"] == "block"
    journal.text("Done again.")
    # A settings file's env reaches the hooks: "off" there never turns off what the config
    # turns on (issue 32).
    output = env.decide(env.payload(journal), PLANGATE_CEO_REVIEW_GATE="off")
    assert output["decision"] == "block"


def test_an_unreadable_switch_is_recorded_and_the_stop_goes_through(env: Env) -> None:
    journal = ceo_session(env)
    journal.text("Done.")
    output = env.decide(env.payload(journal), PLANGATE_CEO_REVIEW_GATE="maybe")
    assert "decision" not in output
    (error,) = _markers(output)
    assert error[1] == "error" and error[2]["code"] == "GATE_STATE"
    assert "PLANGATE_CEO_REVIEW_GATE" in error[2]["why"]


def test_the_settle_wait_sees_a_load_written_late(env: Env) -> None:
    journal = env.journal()
    journal.prompt("Review plan.md.")
    path = env.write(journal)
    payload = env.payload(journal, last_assistant_message="Review finished.")
    count = len(journal.records)
    use = journal.tool_use("Skill", {"skill": "plan-ceo-review"})
    journal.tool_result(use_id(use), "Launching skill: plan-ceo-review")
    journal.text("Review finished.")

    def late(clock: FakeClock) -> None:
        if clock.sleeps == 6:  # 0.3 s on the gate's clock: Claude Code writes the lines now
            journal.append_new(path, count)

    clock = FakeClock(late)
    output = env.decide_on(clock, payload)
    assert output["decision"] == "block"
    assert clock.sleeps == 6  # it read again until the late lines came, then stopped


def test_an_unsettled_transcript_is_judged_as_it_is_after_the_budget(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(timing, "MIN_DEADLINE_MS", 0)  # below the floor: a timeout
    journal = ceo_session(env)
    journal.text("Old text.")
    payload = env.payload(journal, last_assistant_message="A message never written.")
    clock = FakeClock()
    output = env.decide_on(clock, payload, PLANGATE_SKILL_GATE_DEADLINE_MS="1000")
    assert output["decision"] == "block"
    assert 0.5 <= clock.elapsed < 0.55  # half the 1 s deadline, then one more read


def test_a_stale_read_never_counts_as_the_new_stop(env: Env) -> None:
    journal = ceo_session(env)
    journal.text("Done.")
    env.decide(env.payload(journal))
    # The next stop says "Done." again, but the transcript has not caught up yet.
    clock = FakeClock()
    env.decide_on(clock, env.payload(journal), PLANGATE_SKILL_GATE_DEADLINE_MS="600")
    assert clock.elapsed >= 0.3  # it waited the settle budget for a newer text


def test_subagent_stop_gates_only_a_subagent_that_loaded_the_review(env: Env) -> None:
    journal = env.journal()
    journal.prompt("Get a review.")
    session = env.payload(journal)
    folder = Path(session["transcript_path"]).with_suffix("") / "subagents"
    folder.mkdir(parents=True)

    def agent_file(agent: str, loads: bool) -> Path:
        sub = env.journal(session_id=journal.session_id, seed=hash(agent) % 1000)
        sub.subagent("Review the plan", agent_id=agent, parent=None)
        if loads:
            record = sub.tool_use("Read", {"file_path": env.skill_file("plan-ceo-review")})
            record["isSidechain"], record["agentId"] = True, agent
            result = sub.read_result(use_id(record), env.skill_file("plan-ceo-review"), ["x"])
            result["isSidechain"], result["agentId"] = True, agent
        done = sub.text("Reviewed.")
        done["isSidechain"], done["agentId"] = True, agent
        path = folder / f"agent-{agent}.jsonl"
        sub.write(path)
        return path

    def stop(agent: str, path: object) -> dict[str, object]:
        payload = dict(session, hook_event_name="SubagentStop", agent_id=agent)
        payload["agent_transcript_path"] = path
        payload["last_assistant_message"] = "Reviewed."
        return env.decide(payload, "SubagentStop", PLANGATE_SKILL_GATE_DEADLINE_MS="400")

    assert stop("explore1", str(agent_file("explore1", False))) == {}
    assert stop("noop", "") == {}
    assert stop("gone", str(folder / "agent-gone.jsonl")) == {}
    output = stop("rev1", str(agent_file("rev1", True)))
    assert output["decision"] == "block"
    blocked = mk.parse(str(output["reason"]).splitlines()[0])
    assert blocked is not None and blocked[2]["via"] == "subagent-stop"
    assert blocked[2]["agent"] == "rev1"
    runs = env.record(journal.session_id)["gates"]["ceo_review_gate"]["runs"]
    (run,) = runs.values()
    assert run["agent"] == "rev1"


def test_subagent_stop_reads_only_this_sessions_own_subagent_transcripts(env: Env) -> None:
    """Issue 14: a SubagentStop payload naming another session's journal (or a symlink into
    it) got that journal judged. Only ``<session>/subagents/agent-<id>.jsonl`` beside this
    session's own journal is read; anything else is GATE_TRANSCRIPT, with no decision."""
    other = env.journal()
    other.prompt("Another session.")
    record = other.tool_use("Read", {"file_path": env.skill_file("plan-ceo-review")})
    other.read_result(use_id(record), env.skill_file("plan-ceo-review"), ["x"])
    other.text("Reviewed.")
    foreign = Path(env.payload(other)["transcript_path"])
    journal = env.journal()
    journal.prompt("Get a review.")
    session = env.payload(journal)
    folder = Path(session["transcript_path"]).with_suffix("") / "subagents"
    folder.mkdir(parents=True)
    link = folder / "agent-rev1.jsonl"
    link.symlink_to(foreign)
    for path, agent in ((foreign, "rev1"), (link, "rev1"), (folder / "agent-rev2.jsonl", "rev1")):
        payload = dict(session, hook_event_name="SubagentStop", agent_id=agent)
        payload.update(agent_transcript_path=str(path), last_assistant_message="Reviewed.")
        output = env.decide(payload, "SubagentStop", PLANGATE_SKILL_GATE_DEADLINE_MS="400")
        assert "decision" not in output, (path, output)
        assert "GATE_TRANSCRIPT" in str(output.get("systemMessage", "")), (path, output)


def test_one_stop_judged_twice_is_counted_once(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two registrations of the hook run side by side for one stop: neither has seen the
    other's record, both block with the same reason, and the block counts once."""
    from plangate.gates import session_record

    journal = ceo_session(env)
    journal.text("Done.")
    first = env.decide(env.payload(journal))
    monkeypatch.setattr(session_record, "snapshot", lambda *args, **kwargs: None)
    second = env.decide(env.payload(journal))
    assert second["decision"] == "block" and second["reason"] == first["reason"]
    assert "systemMessage" not in second
    run = next(iter(env.record(journal.session_id)["gates"]["ceo_review_gate"]["runs"].values()))
    assert run["blocked"] == 1 and run["observed"] == 1


def test_arming_deletes_session_folders_untouched_for_seven_days(env: Env) -> None:
    old = env.state / "skill-gates" / "an-old-session"
    old.mkdir(parents=True)
    (old / "record.json").write_text("{}")
    recent = env.state / "skill-gates" / "a-recent-session"
    recent.mkdir()
    stamp = time.time() - 8 * 86400
    for path in (old / "record.json", old):
        os.utime(path, (stamp, stamp))
    journal = ceo_session(env)
    journal.text("Done.")
    env.decide(env.payload(journal))  # fires
    assert not old.exists() and recent.exists()
    assert env.has_record(journal.session_id)


def test_the_settle_wait_reads_an_unchanged_transcript_once(env: Env) -> None:
    """A long journal costs its read every time: while nothing is written, the settle loop
    judges the read it has; a line written makes it read again."""
    reads: list[str] = []

    class Counted(ClockWorld):
        def read_journal(self, path: str, **options: Any) -> Verdict:
            reads.append(path)
            return super().read_journal(path, **options)

    journal = ceo_session(env)
    journal.text("Old text.")
    path = env.write(journal)
    payload = env.payload(journal, last_assistant_message="A message never written.")
    count = len(journal.records)
    journal.text("Still working.")

    def late(clock: FakeClock) -> None:
        if clock.sleeps == 4:
            journal.append_new(path, count)

    clock = FakeClock(late)
    output = env.decide_in(Counted(clock), payload, PLANGATE_SKILL_GATE_DEADLINE_MS="1000")
    assert output["decision"] == "block"
    assert clock.sleeps >= 9  # it waited the whole settle budget
    assert len(reads) == 2  # the first read, and one after the line was written
