"""Runs for the viewer's tests, written the way the engine writes them.

Everything goes through the engine's own code: rows through :class:`Store`'s write
functions, commits through :mod:`plangate.runs.sandbox` (a real git worktree on the run's
branch), checks through :func:`plangate.runs.checks.run_check` (real commands, real
output), and every line of text through the engine's own sentences (:mod:`attempts`). Only
the agent and the planner are played by the test, as the scripted agent would.

:func:`build_all` makes four runs:

* ``LOGIN``: three plan versions, a failing check in each round, Waiting on you (out of
  attempts). Its scripted agent fixes the change when a reply starts turn 2, so a real
  worker can carry the run to done;
* ``AUDIT``: an escalation, a refused proposal, Waiting on you;
* ``README``: running, step 1 in progress, no commit yet;
* ``TYPO``: done, no plan.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from plangate.plan.model import Check, Criterion, Plan, Step
from plangate.plan.render import render_plan
from plangate.runs import attempts, sandbox
from plangate.runs.checks import failure as check_failure
from plangate.runs.checks import run_check, summary
from plangate.runs.creation import insert_new_run
from plangate.runs.model import CheckRecord, Failure, RunRecord, StepRecord
from plangate.runs.store import Store, now
from testkit.git import git

LOGIN = "5e1c0a7b"
AUDIT = "9d04be12"
README = "3f7a9c21"
TYPO = "c0ffee42"


LOGIN_PY = '''"""Logging in."""

from app.accounts import check_password


def login(account, password):
    if not check_password(account, password):
        return 401, {}
    return 200, {}
'''

LIMITS_PY = '''"""Failed logins per account, in a sliding window of one minute."""

import time

WINDOW_SECONDS = 60
LIMIT = 5


class FailedLogins:
    def __init__(self):
        self.seen = {}

    def add(self, account):
        now = time.monotonic()
        recent = [t for t in self.seen.get(account, []) if now - t < WINDOW_SECONDS]
        self.seen[account] = recent + [now]
        return len(self.seen[account])

    def too_many(self, account):
        return len(self.seen.get(account, [])) >= LIMIT
'''

LOGIN_STEP_2 = '''"""Logging in."""

from app.accounts import check_password
from app.limits import FailedLogins

failed = FailedLogins()


def login(account, password):
    if failed.too_many(account):
        return 429, {}
    if not check_password(account, password):
        failed.add(account)
        return 401, {}
    return 200, {}
'''

LOGIN_STEP_3 = LOGIN_STEP_2.replace(
    "    return 200, {}\n", "    failed.reset(account)\n    return 200, {}\n"
)
LIMITS_STEP_3 = (
    LIMITS_PY
    + """
    def reset(self, account):
        self.seen.pop(account, None)
"""
)
LOGIN_STEP_4 = LOGIN_STEP_3.replace(
    "        return 429, {}\n",
    '        wait = failed.wait_seconds(account)\n        return 429, {"Retry-After": wait}\n',
)
LIMITS_STEP_4 = (
    LIMITS_STEP_3
    + """
    def wait_seconds(self, account):
        oldest = min(self.seen.get(account, [time.monotonic()]))
        return max(0.0, WINDOW_SECONDS - (time.monotonic() - oldest))
"""
)
# What the agent writes when a reply starts turn 2: the header as a whole number of seconds.
LOGIN_FIXED = LOGIN_STEP_4.replace('{"Retry-After": wait}', '{"Retry-After": str(int(wait) + 1)}')

CHECK_LOGIN = '''"""The login tests: prints what pytest would; exits 1 on a failure."""

import pathlib
import sys

login = pathlib.Path("src/app/login.py").read_text()
limits_file = pathlib.Path("src/app/limits.py")
limits = limits_file.read_text() if limits_file.exists() else ""
tests = [
    ("test_sixth_attempt_is_refused", "return 429" in login and "FailedLogins" in limits,
     "AssertionError: the sixth failed login returned 401, expected 429"),
    ("test_success_resets_the_count", "failed.reset(" in login,
     "AssertionError: after a good password the count is still 5; expected 0"),
    ("test_refusal_says_when_to_retry", '"Retry-After": str(' in login,
     "AssertionError: Retry-After must be a whole number of seconds as a string"),
]
print("============================= test session starts ==============================")
print(f"collected {len(tests)} items")
print()
for name, passed, _ in tests:
    print(f"tests/test_login.py::{name} {'PASSED' if passed else 'FAILED'}")
failed = [(name, why) for name, passed, why in tests if not passed]
if failed:
    print()
    print("=================================== FAILURES ===================================")
    for name, why in failed:
        print(f"_______________________________ {name} _______________________________")
        print()
        print(f"    def {name}():")
        print(">       assert_login_behaves()")
        print(f"E       {why}")
        print()
        print("tests/test_login.py:27: AssertionError")
    print("=========================== short test summary info ============================")
    for name, why in failed:
        print(f"FAILED tests/test_login.py::{name} - {why}")
counts = f"{len(failed)} failed, {len(tests) - len(failed)} passed in 0.04s"
print(f"{'=' * 25} {counts} {'=' * 26}")
sys.exit(1 if failed else 0)
'''

TESTS = Check("python3 tests/check_login.py", 60, "Tests")
LINT = Check(
    "python3 -c \"import ast; ast.parse(open('src/app/login.py').read())\"", None, "Syntax"
)
CRITERIA = (
    Criterion("AC1", "The sixth failed login for an account within a minute is refused."),
    Criterion("AC2", "A refused login says when to try again."),
)
STEP_1 = Step(
    1,
    "Count failed logins",
    ("src/app/limits.py",),
    ("AC1",),
    "Add a sliding-window counter keyed by account. Keep it in memory: one process serves "
    "logins today.",
)
STEP_2 = Step(
    2,
    "Refuse the sixth attempt",
    ("src/app/login.py",),
    ("AC1", "AC2"),
    "Return 429 once the counter says so.",
)
STEP_3 = Step(
    3,
    "Reset the count after a good password",
    ("src/app/limits.py", "src/app/login.py"),
    ("AC1",),
    "A successful login clears the account's failures, so a person who remembers their "
    "password is never locked out.",
)
STEP_4 = Step(
    4,
    "Say when to try again",
    ("src/app/limits.py", "src/app/login.py"),
    ("AC2",),
    "Send a Retry-After header with the seconds until the oldest failure leaves the window.",
)


def login_plan(steps: Sequence[Step]) -> str:
    return render_plan(
        Plan(
            title="Rate-limit the login endpoint",
            goal="Stop password guessing: at most five failed logins per account per minute.",
            steps=tuple(steps),
            checks=(TESTS, LINT),
            criteria=CRITERIA,
        )
    )


def make_repo(path: Path) -> tuple[Path, str]:
    """A repository with a login module and its check; its folder and HEAD."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    files = {
        "README.md": "# demo app\n\nA login service.\n",
        "src/app/__init__.py": "",
        "src/app/login.py": LOGIN_PY,
        "tests/check_login.py": CHECK_LOGIN,
    }
    for name, text in files.items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path, git(path, "rev-parse", "HEAD").strip()


@dataclass
class Writer:
    """Writes one run's rows as the workflow would."""

    store: Store
    run: RunRecord

    @property
    def id(self) -> str:
        return self.run.id

    def event(self, key: str, kind: str, text: str, turn: int = 1) -> None:
        with self.store.transaction() as conn:
            self.store.add_event(conn, self.id, key, turn, kind, text)

    def state(self, **values: object) -> None:
        with self.store.transaction() as conn:
            self.store.update_run(conn, self.id, **values)

    def version(
        self,
        key: str,
        plan_text: str,
        *,
        found: Sequence[Failure] = (),
        attempt: int = 0,
        refusal: str | None = None,
    ) -> None:
        trigger = attempts.trigger_of(found) if found else "initial"
        why = attempts.why_line(trigger, found)
        with self.store.transaction() as conn:
            record = self.store.add_version(
                conn,
                self.id,
                key,
                accepted=refusal is None,
                trigger=trigger,
                why=why,
                refusal=refusal,
                attempts_used=attempt,
                plan_text=plan_text,
                failure_items=found,
            )
            if record.number is not None and key != "initial":
                self.store.update_run(conn, self.id, version=record.number, state="running")
                self.store.add_event(
                    conn,
                    self.id,
                    f"{key}/version",
                    1,
                    "plan_changed",
                    attempts.plan_changed_line(record.number, trigger),
                )
            elif refusal is not None:
                self.store.add_event(
                    conn,
                    self.id,
                    f"{key}/refused",
                    1,
                    "version_refused",
                    f"No new plan: {refusal}.",
                )

    def step(
        self,
        worktree: Path,
        attempt: int,
        version: int,
        step: Step,
        files: dict[str, str],
        message: str,
    ) -> str:
        key = f"t1/a{attempt}/v{version}/s{step.number}"
        for name, text in files.items():
            target = worktree / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        title = f"Step {step.number}: {step.title}"
        sha = sandbox.commit(worktree, key, title, message)
        changed = tuple(sandbox.commit_files(worktree, sha))
        record = StepRecord(key, 1, attempt, version, step.number, "done", sha, changed, message)
        with self.store.transaction() as conn:
            self.store.add_step(conn, self.id, record)
            self.store.add_event(conn, self.id, f"{key}/agent", 1, "agent", message)
            count = len(changed)
            self.store.add_event(
                conn,
                self.id,
                f"{key}/done",
                1,
                "step",
                f"{title} done (commit {sha[:10]}, {count} file{'s' * (count != 1)} changed).",
            )
            self.store.update_run(conn, self.id, state="running", last_message=message)
        return sha

    def checks(self, worktree: Path, attempt: int, declared: Sequence[Check]) -> list[Failure]:
        round_key = f"t1/a{attempt}"
        self.state(state="checking")
        records: list[CheckRecord] = [
            run_check(check, worktree, round_key=round_key, index=index)
            for index, check in enumerate(declared)
        ]
        with self.store.transaction() as conn:
            self.store.add_checks(conn, self.id, records)
            for record in records:
                text = summary(record)
                self.store.add_event(
                    conn,
                    self.id,
                    f"{round_key}/check{record.index}",
                    1,
                    "check_passed" if record.passed else "check_failed",
                    text[0].upper() + text[1:] + ".",
                )
        return [check_failure(r) for r in records if not r.passed]

    def spend(self, used: int, found: Sequence[Failure]) -> None:
        with self.store.transaction() as conn:
            self.store.add_failures(conn, self.id, 1, used, found)
            self.store.update_run(conn, self.id, attempts_used=used)
            self.store.add_event(
                conn,
                self.id,
                f"t1/spent{used}",
                1,
                "attempt",
                f"Attempt {used} of {self.run.attempts_allowed} spent.",
            )

    def wait(self, reason: str, detail: str) -> None:
        with self.store.transaction() as conn:
            self.store.update_run(
                conn,
                self.id,
                state="waiting",
                waiting_reason=reason,
                waiting_detail=detail,
                executor=None,
            )
            self.store.add_event(
                conn, self.id, "t1/waiting", 1, "waiting", f"Waiting on you: {reason} ({detail})."
            )


def new_run(
    store: Store,
    run_id: str,
    repo: Path,
    base: str,
    state_root: Path,
    *,
    title: str,
    plan_text: str | None,
    task: str | None = None,
    agent: str = "scripted:/nonexistent.json",
    attempts_allowed: int = 3,
    start: bool = True,
) -> tuple[Writer, Path]:
    """Record a run as ``Engine.create`` does, and make its worktree as ``prepare`` does."""
    worktree = state_root / "runs" / run_id / "worktree"
    stamp = now()
    record = RunRecord(
        id=run_id,
        created_at=stamp,
        updated_at=stamp,
        repo=str(repo),
        base_commit=base,
        branch=f"plangate/run-{run_id}",
        worktree=str(worktree),
        agent=agent,
        task=task,
        plan_source=None,
        has_plan=plan_text is not None,
        attempts_allowed=attempts_allowed,
        review=False,
        extra_checks=(),
        state="queued",
        turn=1,
        attempts_used=0,
        version=1 if plan_text is not None else 0,
        title=title,
    )
    insert_new_run(store, record, plan_text)
    writer = Writer(store, record)
    if start:
        sandbox.create(str(repo), worktree, record.branch, base)
        where = "version 1 of the plan" if plan_text is not None else "the task, without a plan"
        writer.event(
            "t1/start",
            "start",
            f"Run started on branch {record.branch} from {base[:10]}, working from {where}.",
        )
        writer.state(state="running")
    return writer, worktree


def build_login(store: Store, repo: Path, base: str, root: Path) -> None:
    """Three versions; a failing check each round; out of attempts."""
    script = root / "login-script.json"
    script.write_text(
        json.dumps(
            {
                "steps": [
                    {
                        "step": None,
                        "turn": 2,
                        "write": {"src/app/login.py": LOGIN_FIXED},
                        "message": "Retry-After is now a whole number of seconds, as a string.",
                    }
                ],
                "log": str(root / "login-agent.log"),
            }
        )
    )
    run, worktree = new_run(
        store,
        LOGIN,
        repo,
        base,
        root / "state",
        title="Rate-limit the login endpoint",
        plan_text=login_plan([STEP_1, STEP_2]),
        agent=f"scripted:{script}",
    )
    declared = (TESTS, LINT)
    run.step(worktree, 0, 1, STEP_1, {"src/app/limits.py": LIMITS_PY}, "Added FailedLogins.")
    run.step(
        worktree,
        0,
        1,
        STEP_2,
        {"src/app/login.py": LOGIN_STEP_2},
        "login() now refuses the sixth failed attempt with 429.",
    )
    found = run.checks(worktree, 0, declared)
    run.event("t1/a0/gate", "gate_passed", "Evidence gate passed.")
    run.spend(1, found)
    run.state(state="replanning")
    run.version("t1/a1", login_plan([STEP_1, STEP_2, STEP_3]), found=found, attempt=1)
    run.step(
        worktree,
        1,
        2,
        STEP_3,
        {"src/app/limits.py": LIMITS_STEP_3, "src/app/login.py": LOGIN_STEP_3},
        "A good password now clears the account's failures.",
    )
    found = run.checks(worktree, 1, declared)
    run.event("t1/a1/gate", "gate_passed", "Evidence gate passed.")
    run.spend(2, found)
    run.state(state="replanning")
    run.version("t1/a2", login_plan([STEP_1, STEP_2, STEP_3, STEP_4]), found=found, attempt=2)
    message = (
        "Added Retry-After with the wait in seconds. The test still fails: it wants a "
        "string of whole seconds, and the plan does not say how to write the value."
    )
    run.step(
        worktree,
        2,
        3,
        STEP_4,
        {"src/app/limits.py": LIMITS_STEP_4, "src/app/login.py": LOGIN_STEP_4},
        message,
    )
    found = run.checks(worktree, 2, declared)
    run.event("t1/a2/gate", "gate_passed", "Evidence gate passed.")
    run.spend(3, found)
    run.wait(attempts.REASON_CHECK, attempts.DETAIL_OUT_OF_ATTEMPTS)


def build_audit(store: Store, repo: Path, base: str, root: Path) -> None:
    """An escalation, then a proposal that rewrites an executed step: refused, waiting."""
    audit_1 = Step(
        1, "Write the audit log", ("src/app/audit.py",), ("AC1",), "Append one line per login."
    )
    audit_2 = Step(2, "Log every login", ("src/app/login.py",), ("AC1",), "Call the audit log.")
    plan = render_plan(
        Plan(
            title="Add an audit log",
            goal="Every login attempt leaves one line in the audit log.",
            steps=(audit_1, audit_2),
            checks=(Check("git diff --check", None, "Whitespace"),),
            criteria=(Criterion("AC1", "Every login attempt is logged."),),
        )
    )
    run, worktree = new_run(
        store, AUDIT, repo, base, root / "state", title="Add an audit log", plan_text=plan
    )
    run.step(
        worktree,
        0,
        1,
        audit_1,
        {"src/app/audit.py": '"""The audit log."""\n\n\ndef record(line):\n    pass\n'},
        "Wrote the audit log module.",
    )
    summary_line = "step 2 needs `src/app/session.py`, which the plan does not name"
    key = "t1/a0/v1/s2"
    record = StepRecord(key, 1, 0, 1, 2, "escalated", None, (), "", summary_line)
    with store.transaction() as conn:
        store.add_step(conn, AUDIT, record)
        store.add_event(
            conn,
            AUDIT,
            f"{key}/escalated",
            1,
            "escalated",
            f"The agent escalated at step 2: {summary_line}.",
        )
    found = [Failure("escalation", summary_line)]
    run.spend(1, found)
    run.state(state="replanning")
    rewritten = render_plan(
        Plan(
            title="Add an audit log",
            goal="Every login attempt leaves one line in the audit log.",
            steps=(
                Step(
                    1,
                    "Write the audit log and the session hook",
                    ("src/app/audit.py", "src/app/session.py"),
                    ("AC1",),
                    "Both at once.",
                ),
                Step(
                    2,
                    "Log every login",
                    ("src/app/login.py", "src/app/session.py"),
                    ("AC1",),
                    "Call the audit log.",
                ),
            ),
            checks=(Check("git diff --check", None, "Whitespace"),),
            criteria=(Criterion("AC1", "Every login attempt is logged."),),
        )
    )
    refusal = "new version refused: it rewrites step 1, which was already carried out"
    run.version("t1/a1", rewritten, found=found, attempt=1, refusal=refusal)
    run.wait(attempts.REASON_ESCALATION, refusal)


def build_readme(store: Store, repo: Path, base: str, root: Path) -> None:
    """Running: step 1 of version 1 in progress, nothing committed."""
    step = Step(1, "Describe the rate limit", ("README.md",), ("AC1",), "One paragraph.")
    plan = render_plan(
        Plan(
            title="Document the rate limit",
            goal="People know why a login is refused.",
            steps=(step,),
            checks=(Check("grep -q limit README.md", None, "Docs"),),
            criteria=(Criterion("AC1", "The README explains the limit."),),
        )
    )
    new_run(
        store,
        README,
        repo,
        base,
        root / "state",
        title="Document the rate limit",
        plan_text=plan,
        start=False,
    )
    run = Writer(store, store.run(README) or _missing(README))
    run.event(
        "t1/start",
        "start",
        f"Run started on branch plangate/run-{README} from {base[:10]}, "
        "working from version 1 of the plan.",
    )
    run.state(state="running")


def build_typo(store: Store, repo: Path, base: str, root: Path) -> None:
    """Done, without a plan."""
    run, worktree = new_run(
        store,
        TYPO,
        repo,
        base,
        root / "state",
        title="",
        plan_text=None,
        task="Fix the typo in the README: 'A login service' should say 'The login service'.",
    )
    (worktree / "README.md").write_text("# demo app\n\nThe login service.\n")
    key = "t1/a0/v0/fix"
    sha = sandbox.commit(worktree, key, "Task", "Fixed the typo.")
    record = StepRecord(key, 1, 0, 0, None, "done", sha, ("README.md",), "Fixed the typo.")
    with store.transaction() as conn:
        store.add_step(conn, TYPO, record)
        store.add_event(conn, TYPO, f"{key}/agent", 1, "agent", "Fixed the typo.")
        store.add_event(
            conn, TYPO, f"{key}/done", 1, "step", f"Task done (commit {sha[:10]}, 1 file changed)."
        )
    run.checks(worktree, 0, [Check("grep -q 'The login service' README.md")])
    with store.transaction() as conn:
        store.update_run(conn, TYPO, state="done", executor=None)
        store.add_event(
            conn,
            TYPO,
            "t1/done",
            1,
            "done",
            "Done: every step is carried out, the checks pass and the evidence gate passed.",
        )


def _missing(run_id: str) -> RunRecord:
    raise AssertionError(f"run {run_id} was not recorded")


def build_all(root: Path, url: str | None = None) -> tuple[str, Path]:
    """The four runs in a fresh database (by default a SQLite file under ``root``); its URL
    and the repository."""
    state = root / "state"
    state.mkdir(parents=True, exist_ok=True)
    url = url or f"sqlite:///{state / 'runs.db'}"
    repo, base = make_repo(root / "repo")
    store = Store(url)
    try:
        build_typo(store, repo, base, root)
        build_audit(store, repo, base, root)
        build_login(store, repo, base, root)
        build_readme(store, repo, base, root)
    finally:
        store.close()
    return url, repo
