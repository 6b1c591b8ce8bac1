"""The /plan-ceo-review gate: the run's final stop waits until one output file, modified
after the load, ranks the top risks (:mod:`plangate.gates.findings`).

Files are tried in this order, stopping at the first that meets it:

1. ``PLANGATE_CEO_REVIEW_OUTPUT`` (relative paths from the session's folder);
2. files the run wrote with Write, Edit or MultiEdit, newest first;
3. Markdown files in the git repository at the session's folder that differ from HEAD or
   are untracked and not ignored, newest first (Bash is never parsed: a review written by a
   heredoc is found here or in step 4);
4. ``<state root>/ceo-plans/*.md`` and ``<state root>/projects/<slug>/ceo-plans/*.md``.

A file in a ``skills/`` folder (judged from the repository root) never counts.
"""

from __future__ import annotations

import os

from plangate.gates import findings, skill_loads
from plangate.gates.errors import GATE_SLUG, GATE_TIMEOUT, GATE_TRANSCRIPT, GateError
from plangate.gates.timing import parse_timestamp
from plangate.locations import project_slug

TYPE_CHECKING = False
if TYPE_CHECKING:
    from plangate.gates.judgement import Context, Judgement
    from plangate.gates.timing import Deadline
    from plangate.journal.events import Event

OUTPUT_ENV = "PLANGATE_CEO_REVIEW_OUTPUT"
SLUG_ENV = "PLANGATE_PROJECT_SLUG"
CEO_PLANS = "ceo-plans"
FILE_MAX_BYTES = 4 * 1024 * 1024
SCAN_MAX = 200
MARKDOWN = (".md", ".markdown")
NO_GIT = "no-git"
NO_HEAD = "no-head"


def repository_root(cwd: str) -> str | None:
    """The nearest folder at or above ``cwd`` with a ``.git`` entry."""
    folder = os.path.abspath(cwd)
    while True:
        if os.path.lexists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def in_skills_folder(path: str, root: str) -> bool:
    """Whether ``path`` lies in a ``skills/`` folder, judged from ``root`` when inside it."""
    inside = path == root or path.startswith(root.rstrip(os.sep) + os.sep)
    relative = os.path.relpath(path, root) if inside else path
    parts = relative.replace("\\", "/").split("/")[:-1]
    return "skills" in parts


def falls_short(path: str, loaded: float, root: str) -> str | None:
    """Why ``path`` does not meet the gate, or None when it does."""
    if in_skills_folder(path, root):
        return "inside a skills/ folder"
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return "missing"
    except OSError as error:
        return f"unreadable ({error.strerror})"
    if not os.path.isfile(path):
        return "not a file"
    if info.st_mtime <= loaded:
        return "not changed since the review loaded"
    if info.st_size > FILE_MAX_BYTES:
        return "over 4 MiB"
    try:
        with open(path, "rb") as stream:
            text = stream.read(FILE_MAX_BYTES).decode("utf-8", "replace")
    except OSError as error:
        return f"unreadable ({error.strerror})"
    check = findings.check_text(text)
    return None if check.ok else check.why


def _git(args: list[str], deadline: Deadline) -> tuple[int, bytes]:
    from plangate.processes import run_bounded

    env = dict(os.environ)
    env.update({"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"})
    try:
        done = run_bounded(
            ["git", *args], env=env, timeout=max(0.05, deadline.remaining()), grace=0.1
        )
    except OSError:
        return 127, b""
    if done.timed_out:
        raise GateError(GATE_TIMEOUT, "git did not answer before the deadline")
    return done.returncode, done.stdout_bytes


def changed_markdown(cwd: str, deadline: Deadline) -> tuple[str | None, list[str], list[str]]:
    """``(top level, changed Markdown files, skip reasons)`` of the repository at ``cwd``."""
    code, out = _git(["-C", cwd, "rev-parse", "--show-toplevel"], deadline)
    top = out.decode("utf-8", "replace").strip()
    if code != 0 or not top:
        return None, [], [NO_GIT]
    skipped: list[str] = []
    code, _ = _git(["-C", top, "rev-parse", "--verify", "-q", "HEAD"], deadline)
    if code != 0:
        skipped.append(NO_HEAD)  # no commit yet: every file counts as changed
    code, out = _git(
        [
            "-C",
            top,
            "-c",
            "core.quotepath=off",
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--ignore-submodules",
        ],
        deadline,
    )
    if code != 0:
        return top, [], skipped + [NO_GIT]
    files: list[str] = []
    tokens = out.decode("utf-8", "surrogateescape").split("\0")
    index = 0
    while index < len(tokens):
        entry = tokens[index]
        index += 1
        if len(entry) < 4:
            continue
        status, name = entry[:2], entry[3:]
        if status[0] in "RC":
            index += 1  # the old name of a rename or copy
        if "D" in status or not name.lower().endswith(MARKDOWN):
            continue
        files.append(os.path.join(top, name))
    return top, files, skipped


def _newest_first(paths: list[str], after: float) -> list[str]:
    dated: list[tuple[float, str]] = []
    for path in paths:
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            continue
        if mtime > after:
            dated.append((mtime, path))
    dated.sort(reverse=True)
    return [path for _, path in dated[:SCAN_MAX]]


def slug_for(environ: dict[str, str], root: str) -> str:
    """The project's folder name under ``<state root>/projects/``; ``GATE_SLUG`` if unusable."""
    configured = environ.get(SLUG_ENV, "").strip()
    if configured:
        if (
            "/" in configured
            or "\\" in configured
            or configured in (".", "..")
            or (not configured.isprintable())
        ):
            raise GateError(GATE_SLUG, f"{SLUG_ENV} is not a plain folder name")
        return configured
    if not os.path.isabs(root):
        raise GateError(GATE_SLUG, "the session's folder is not an absolute path")
    slug = project_slug(root).strip("-")
    if not slug:
        raise GateError(GATE_SLUG, "the session's folder gives no project name")
    return project_slug(root)


def ceo_plans(state_root: str, slug: str) -> list[str]:
    found: list[str] = []
    for folder in (
        os.path.join(state_root, CEO_PLANS),
        os.path.join(state_root, "projects", slug, CEO_PLANS),
    ):
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        found.extend(os.path.join(folder, n) for n in names if n.lower().endswith(MARKDOWN))
    return found


def _short(path: str, root: str) -> str:
    inside = path.startswith(root.rstrip(os.sep) + os.sep)
    return os.path.relpath(path, root) if inside else path


def _target(
    ctx: Context, run: list[Event], everything: list[Event], load: skill_loads.Load, root: str
) -> tuple[str | None, str]:
    """Where the review should go, and why there."""
    configured = ctx.environ.get(OUTPUT_ENV, "").strip()
    if configured:
        return skill_loads.resolve(configured, ctx.cwd), f"{OUTPUT_ENV} names it"
    for path in skill_loads.written_files(run, ctx.cwd):
        if path.lower().endswith(MARKDOWN) and not in_skills_folder(path, root):
            return path, "the last Markdown file this run wrote"
    for path in skill_loads.read_files(run, ctx.cwd) + skill_loads.read_files(everything, ctx.cwd):
        lowered = path.lower()
        if (
            lowered.endswith(MARKDOWN)
            and os.path.basename(lowered) != "skill.md"
            and not in_skills_folder(path, root)
        ):
            return path, "the last plan file this session read"
    for word in load.arguments.split():
        if not word.startswith("--") and word.lower().endswith(MARKDOWN):
            return skill_loads.resolve(word, ctx.cwd), "the plan the review was asked about"
    return None, ""


def evaluate(
    judgement: Judgement,
    ctx: Context,
    run: list[Event],
    everything: list[Event],
    load: skill_loads.Load,
    deadline: Deadline,
) -> None:
    """Fill ``judgement``: met (with the file) or the block instructions and files checked."""
    loaded = parse_timestamp(load.timestamp)
    if loaded is None:
        raise GateError(GATE_TRANSCRIPT, "the record that loaded the review has no timestamp")
    root = repository_root(ctx.cwd) or ctx.cwd
    checked: list[tuple[str, str]] = []
    seen: set[str] = set()

    def meets(path: str) -> bool:
        real = os.path.realpath(path)
        if real in seen:
            return False
        seen.add(real)
        deadline.check("checking the review's output files")
        why = falls_short(path, loaded, root)
        if why is None:
            judgement.met = True
            judgement.file = path
            return True
        checked.append((path, why))
        return False

    configured = ctx.environ.get(OUTPUT_ENV, "").strip()
    if configured and meets(skill_loads.resolve(configured, ctx.cwd)):
        return
    for path in skill_loads.written_files(run, ctx.cwd):
        if meets(path):
            return
    top, changed, skipped = changed_markdown(ctx.cwd, deadline)
    judgement.skipped.extend(skipped)
    if top is not None:
        root = top
    for path in _newest_first(changed, loaded):
        if meets(path):
            return
    slug = slug_for(ctx.environ, root)
    for path in _newest_first(ceo_plans(ctx.state_root, slug), loaded):
        if meets(path):
            return
    judgement.files = [_short(path, root) for path, _ in checked]
    judgement.instructions = instructions(ctx, run, everything, load, root, checked)


def instructions(
    ctx: Context,
    run: list[Event],
    everything: list[Event],
    load: skill_loads.Load,
    root: str,
    checked: list[tuple[str, str]],
) -> str:
    target, why = _target(ctx, run, everything, load, root)
    if target is not None:
        where = f"{target} ({why})"
    else:
        where = (
            "the plan file you reviewed (or, if it must not change, a new file in "
            f"{os.path.join(ctx.state_root, CEO_PLANS)})"
        )
    lines = [
        "The /plan-ceo-review run is not finished: no output file ranks the top risks yet.",
        f"Write a `## Findings` section into {where}. Right under that heading put a "
        "numbered list that starts at 1 and ranks the top risks, most serious first, each "
        "item a real risk in one sentence with why it matters (nothing left from the "
        "template: no [risk], TBD or ...). A `## Top risks` heading with such a list counts "
        "too. Save the file with Write or Edit (a list only in your reply does not count), "
        "then end your turn.",
    ]
    if checked:
        lines.append("Checked:")
        lines.extend(f"- {_short(path, root)}: {why}" for path, why in checked[:10])
        if len(checked) > 10:
            lines.append(f"- and {len(checked) - 10} more")
    return "\n".join(lines)
