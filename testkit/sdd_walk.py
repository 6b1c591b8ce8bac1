"""A scripted person and model walking one cc-sdd feature through its phases, as data.

A walk is a list of :class:`Turn`: what the person types (``/kiro-spec-init …``, an approval
in words) and the model's answer as :class:`~plangate.harness.autoplan.Player` steps: the
Reads the skill asks for, the Writes of the files the phase leaves in
``.kiro/specs/<feature>/``, the Write of ``spec.json`` where the skill says to set a field,
the source and test files and the ticked checkboxes of the implementation. :class:`CcSddFeature`
builds the turns of one feature in a project where the kit is installed
(:mod:`testkit.kits`); :func:`walk` plays them in ``claude -p`` runs, one per turn, the later
ones with ``--continue``, and the terminal-UI tests type the same prompts.

Variants are new lists: drop the approval turns, put a source Write into the requirements
turn, leave a task unticked — ``dataclasses.replace(turn, steps=...)`` changes one turn. The
texts are this repository's own, shaped as the kit's templates ask (headings, EARS criteria,
``- [ ] N.M`` tasks); none of the kit's text is copied here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from plangate.harness.autoplan import Player, Step
from plangate.harness.claude import ClaudeEnv, ClaudeResult
from plangate.harness.standin import Text, text, tool_use
from plangate.harness.standin.script import TurnLike
from plangate.processes import run_bounded

PHASES = ("requirements", "design", "tasks")
#: The tools a person lets the walk's model use without asking.
TOOLS = ("Read", "Write", "Edit", "Bash", "Glob", "Grep")
CREATED = "2026-12-01T09:00:00Z"
DESCRIPTION = "A search box that lists the notes containing a word"


@dataclass(frozen=True)
class Turn:
    """One prompt the person types and the model's steps in answer to it."""

    name: str
    prompt: str
    steps: tuple[Step, ...]
    #: The skill the prompt loads (a typed ``/skill``), or None for words.
    skill: str | None = None
    #: Files (absolute) the turn must leave behind.
    leaves: tuple[Path, ...] = ()

    @property
    def last_words(self) -> str:
        """What the model says last in the turn (its final text step), or ``""``."""
        last = self.steps[-1] if self.steps else ""
        if isinstance(last, str):
            return last
        blocks = last if isinstance(last, list) else []
        return " ".join(b.text for b in blocks if isinstance(b, Text))


@dataclass
class TurnResult:
    turn: Turn
    result: ClaudeResult
    #: The main-conversation requests the model answered in this turn.
    requests: list[Any] = field(default_factory=list)


def spec_json(feature: str, phase: str, generated: Iterable[str], approved: Iterable[str]) -> str:
    """``spec.json`` with the fields of the kit's ``init.json`` template."""
    made, ok = set(generated), set(approved)
    data = {
        "feature_name": feature,
        "created_at": CREATED,
        "updated_at": CREATED,
        "language": "en",
        "phase": phase,
        "approvals": {p: {"generated": p in made, "approved": p in ok} for p in PHASES},
        "ready_for_implementation": False,
    }
    return json.dumps(data, indent=2) + "\n"


REQUIREMENTS = """# Requirements Document

## Introduction
People who keep many short notes want to find the ones that mention a word without opening
each note.

## Requirements

### Requirement 1: Find notes by a word
**Objective:** As a note keeper, I want to type a word and see the notes that contain it, so
that I find a note quickly

#### Acceptance Criteria
1. When the person searches for a word, the notes service shall list every note whose text
   contains that word, ignoring case
2. The notes service shall list the matching notes in the order of their names

### Requirement 2: Say when nothing matches
**Objective:** As a note keeper, I want to know that no note holds the word, so that I stop
looking

#### Acceptance Criteria
1. If no note contains the word, then the notes service shall return an empty list
"""

DESIGN = """# Design Document: notes search

## Overview
A single function searches the notes held in memory; the web page calls it.

### Goals
- Answer a one-word search over all notes

### Non-Goals
- Ranking, phrases, stemming

## Boundary Commitments

### This Spec Owns
- The search function and its tests

### Out of Boundary
- Storing notes

## Architecture
One module, `notes_search.py`, with a pure function.

## File Structure Plan

### Directory Structure
- `notes_search.py`: the search function
- `test_notes_search.py`: its unit tests

## Requirements Traceability
| Requirement | Component |
| --- | --- |
| 1.1, 1.2 | search |
| 2.1 | search |

## Components and Interfaces

### Search

#### search
`search(notes: dict[str, str], word: str) -> list[str]` returns the sorted names of the notes
whose text contains the word, compared case-insensitively.

## Data Models
Notes are a mapping from a note's name to its text.

## Error Handling
An empty word matches nothing.

## Testing Strategy
Unit tests with the standard library's unittest.
"""

RESEARCH = """# Research & Design Decisions: notes search

## Summary
A greenfield feature with no dependency: light discovery was enough.

## Research Log
Nothing outside the standard library is needed.

## Design Decisions
A pure function keeps the search testable without a web server.

## Risks & Mitigations
Many notes make a linear scan slow; an index can come later.

## References
None.
"""

TASKS = """# Implementation Plan

- [ ] 1. Search notes by a word
- [ ] 1.1 Find the notes that contain a word
  - Lists the names of the notes whose text holds the word, in name order, ignoring case
  - Done when the unit test for a matching search passes
  - _Requirements: 1.1, 1.2_
- [ ] 1.2 Return nothing when no note matches
  - An empty list comes back for a word no note holds
  - Done when the unit test for an empty result passes
  - _Requirements: 2.1_
"""

SOURCE = '''"""Finds the notes that contain a word."""


def search(notes: dict[str, str], word: str) -> list[str]:
    """The sorted names of the notes whose text contains ``word``, ignoring case."""
    wanted = word.strip().lower()
    if not wanted:
        return []
    return sorted(name for name, body in notes.items() if wanted in body.lower())
'''

TEST = """import unittest

from notes_search import search

NOTES = {"b-shopping": "Milk and bread", "a-ideas": "Bread recipes", "c-todo": "Call Ann"}


class SearchTest(unittest.TestCase):
    def test_lists_matching_notes_in_name_order(self) -> None:
        self.assertEqual(search(NOTES, "bread"), ["a-ideas", "b-shopping"])

    def test_nothing_matches(self) -> None:
        self.assertEqual(search(NOTES, "cheese"), [])


if __name__ == "__main__":
    unittest.main()
"""


class CcSddFeature:
    """The turns that walk one feature of a cc-sdd project from spec-init to implementation."""

    def __init__(
        self, project: Path, feature: str = "notes-search", description: str = DESCRIPTION
    ) -> None:
        self.project = project
        self.feature = feature
        self.description = description
        self.spec_dir = project / ".kiro" / "specs" / feature
        self.spec = self.spec_dir / "spec.json"
        self.requirements = self.spec_dir / "requirements.md"
        self.design = self.spec_dir / "design.md"
        self.research = self.spec_dir / "research.md"
        self.tasks = self.spec_dir / "tasks.md"
        self.templates = project / ".kiro" / "settings" / "templates" / "specs"
        self.source = project / "notes_search.py"
        self.test = project / "test_notes_search.py"

    # --- single steps --------------------------------------------------------------------

    def read(self, path: Path) -> TurnLike:
        return tool_use("Read", file_path=str(path))

    def write(self, path: Path, content: str) -> TurnLike:
        return tool_use("Write", file_path=str(path), content=content)

    def write_spec(self, phase: str, generated: Iterable[str], approved: Iterable[str]) -> TurnLike:
        return self.write(self.spec, spec_json(self.feature, phase, generated, approved))

    def bash(self, command: str, description: str) -> TurnLike:
        return tool_use("Bash", command=command, description=description)

    def skill(self, name: str, args: str = "") -> TurnLike:
        """The model's own Skill tool call (the CLI refuses it for a typed-only skill)."""
        return tool_use("Skill", skill=name, args=args or self.feature)

    def tick(self, line: str) -> TurnLike:
        """Edits tasks.md: the task line ``line`` (without its checkbox) becomes ``[x]``."""
        return tool_use(
            "Edit",
            file_path=str(self.tasks),
            old_string=f"- [ ] {line}",
            new_string=f"- [x] {line}",
        )

    # --- the turns -----------------------------------------------------------------------

    def spec_init(self) -> Turn:
        initial = (
            f"# Requirements Document\n\n## Project Description (Input)\n{self.description}\n\n"
            "## Requirements\n<!-- Will be generated in /kiro-spec-requirements phase -->\n"
        )
        return Turn(
            name="spec-init",
            prompt=f"/kiro-spec-init {self.description}",
            skill="kiro-spec-init",
            steps=(
                tool_use("Glob", pattern=".kiro/specs/*"),
                self.read(self.templates / "init.json"),
                self.read(self.templates / "requirements-init.md"),
                self.write_spec("initialized", (), ()),
                self.write(self.requirements, initial),
                f"Feature name: `{self.feature}`.\n\n"
                f"Next: `/kiro-spec-requirements {self.feature}`",
            ),
            leaves=(self.spec, self.requirements),
        )

    def requirements_phase(self) -> Turn:
        return Turn(
            name="requirements",
            prompt=f"/kiro-spec-requirements {self.feature}",
            skill="kiro-spec-requirements",
            steps=(
                self.read(self.spec),
                self.read(self.requirements),
                self.read(self.templates / "requirements.md"),
                self.write(self.requirements, REQUIREMENTS),
                self.write_spec("requirements-generated", ["requirements"], ()),
                "Requirements written (2 areas, EARS criteria); review gate passed. Approve them, "
                f"then run `/kiro-spec-design {self.feature}`.",
            ),
            leaves=(self.requirements,),
        )

    def approve(self, phase: str, generated: Sequence[str], approved: Sequence[str]) -> Turn:
        """The person approves ``phase`` in words; the model records it in spec.json."""
        spec_phase = f"{generated[-1]}-generated"
        return Turn(
            name=f"approve-{phase}",
            prompt=f"The {phase} look right to me: I approve them.",
            steps=(
                self.read(self.spec),
                self.write_spec(spec_phase, generated, approved),
                f"Recorded: {phase} approved in spec.json.",
            ),
        )

    def design_phase(self) -> Turn:
        return Turn(
            name="design",
            prompt=f"/kiro-spec-design {self.feature}",
            skill="kiro-spec-design",
            steps=(
                self.read(self.spec),
                self.read(self.requirements),
                self.read(self.templates / "design.md"),
                self.read(self.templates / "research.md"),
                self.write(self.design, DESIGN),
                self.write(self.research, RESEARCH),
                self.write_spec("design-generated", ["requirements", "design"], ["requirements"]),
                "Design written (light discovery); review gate passed. Approve it, then run "
                f"`/kiro-spec-tasks {self.feature}`.",
            ),
            leaves=(self.design, self.research),
        )

    def tasks_phase(self) -> Turn:
        return Turn(
            name="tasks",
            prompt=f"/kiro-spec-tasks {self.feature}",
            skill="kiro-spec-tasks",
            steps=(
                self.read(self.spec),
                self.read(self.requirements),
                self.read(self.design),
                self.read(self.templates / "tasks.md"),
                self.write(self.tasks, TASKS),
                self.write_spec("tasks-generated", PHASES, ["requirements", "design"]),
                "2 sub-tasks in 1 group, no parallel markers. Tasks generated. Approve and "
                "proceed to implementation?",
            ),
            leaves=(self.tasks,),
        )

    def approve_tasks(self) -> Turn:
        return Turn(
            name="approve-tasks",
            prompt="Yes, approve the tasks.",
            steps=(
                self.read(self.spec),
                self.write_spec("tasks-generated", PHASES, PHASES),
                f"Tasks approved. Start implementation with `/kiro-impl {self.feature}`",
            ),
        )

    def impl(self) -> Turn:
        unittest = "python3 -m unittest -q test_notes_search"
        return Turn(
            name="impl",
            prompt=f"/kiro-impl {self.feature}",
            skill="kiro-impl",
            steps=(
                self.read(self.spec),
                self.read(self.tasks),
                self.bash("git status --porcelain", "Note the baseline"),
                self.write(self.test, TEST),
                self.bash(f"{unittest} || true", "RED: the tests fail before the code"),
                self.write(self.source, SOURCE),
                self.bash(unittest, "GREEN: run the tests"),
                self.tick("1.1 Find"),
                self.tick("1.2 Return"),
                self.tick("1. Search"),
                self.bash(
                    f"git add {self.source.name} {self.test.name} && "
                    "git commit -q -m 'notes search: find notes by a word'",
                    "Commit the task's files",
                ),
                [text("1.1 and 1.2 done, tests pass, tasks.md ticked; commit made.")],
            ),
            leaves=(self.source, self.test),
        )

    def happy_path(self) -> list[Turn]:
        """Every phase in order, each approved by the person before the next."""
        return [
            self.spec_init(),
            self.requirements_phase(),
            self.approve("requirements", ["requirements"], ["requirements"]),
            self.design_phase(),
            self.approve("design", ["requirements", "design"], ["requirements", "design"]),
            self.tasks_phase(),
            self.approve_tasks(),
            self.impl(),
        ]

    # --- the ways off the path (what the contracts must refuse or hold) -----------------

    def impl_before_approval(self) -> list[Turn]:
        """The happy path without the person's approval of the tasks."""
        return [t for t in self.happy_path() if t.name != "approve-tasks"]

    def self_approval(self) -> list[Turn]:
        """The tasks turn sets ``tasks.approved`` itself, no person asked; then impl."""
        path = [t for t in self.happy_path() if t.name != "approve-tasks"]
        at = [t.name for t in path].index("tasks")
        tasks = path[at]
        approved = self.write_spec("tasks-generated", PHASES, PHASES)
        path[at] = replace(tasks, steps=(*tasks.steps[:-1], approved, "Tasks approved."))
        return path

    def source_edit_in_requirements(self) -> list[Turn]:
        """The first two turns, the requirements turn also writing source code."""
        requirements = self.requirements_phase()
        early = self.write(self.source, SOURCE)
        steps = (*requirements.steps[:-1], early, requirements.steps[-1])
        return [self.spec_init(), replace(requirements, steps=steps)]

    def stop_with_open_tasks(self) -> list[Turn]:
        """The happy path whose implementation ticks only task 1.1 and stops."""
        path = self.happy_path()
        impl = path[-1]
        kept = tuple(
            s for s in impl.steps if s not in (self.tick("1.2 Return"), self.tick("1. Search"))
        )
        path[-1] = replace(impl, steps=kept)
        return path

    def open_tasks(self) -> list[str]:
        """The task lines of tasks.md still unticked."""
        lines = self.tasks.read_text(encoding="utf-8").splitlines()
        return [line for line in lines if line.startswith("- [ ]")]


SPEC = """# Feature Specification: notes search

## User Scenarios & Testing

### User Story 1 - Find notes by a word (Priority: P1)
A note keeper types a word and sees the notes that contain it.

**Acceptance Scenarios**:
1. **Given** three notes, **When** the keeper searches for a word two of them hold, **Then**
   both are listed in name order.

## Requirements

### Functional Requirements
- **FR-001**: The system MUST list every note whose text contains the searched word.
- **FR-002**: The system MUST return an empty list when no note contains it.

## Success Criteria
- **SC-001**: A search over 1,000 notes answers within one second.
"""


class SpecKitFeature:
    """The first two phases of one feature of a spec-kit project: specify, then plan, where
    the model runs the kit's own script (which finds the feature through ``.specify/feature.json``
    and copies the plan template)."""

    def __init__(self, project: Path, folder: str = "001-notes-search") -> None:
        self.project = project
        self.feature_dir = project / "specs" / folder
        self.spec = self.feature_dir / "spec.md"
        self.plan = self.feature_dir / "plan.md"
        self.pointer = project / ".specify" / "feature.json"
        self.folder = folder

    def specify(self) -> Turn:
        return Turn(
            name="specify",
            prompt=f"/speckit-specify {DESCRIPTION}",
            skill="speckit-specify",
            steps=(
                tool_use("Bash", command=f"mkdir -p specs/{self.folder}", description="Spec dir"),
                tool_use(
                    "Read", file_path=str(self.project / ".specify/templates/spec-template.md")
                ),
                tool_use("Write", file_path=str(self.spec), content=SPEC),
                tool_use(
                    "Write",
                    file_path=str(self.pointer),
                    content=json.dumps({"feature_directory": f"specs/{self.folder}"}) + "\n",
                ),
                f"Spec ready in specs/{self.folder}. Next: /speckit-plan",
            ),
            leaves=(self.spec, self.pointer),
        )

    def plan_setup(self) -> Turn:
        return Turn(
            name="plan",
            prompt="/speckit-plan Use the standard library only",
            skill="speckit-plan",
            steps=(
                tool_use(
                    "Bash",
                    command=".specify/scripts/bash/setup-plan.sh --json",
                    description="Set up the plan",
                ),
                tool_use("Read", file_path=str(self.plan)),
                "The plan template is in place; filling it in comes next.",
            ),
            leaves=(self.plan,),
        )


def git_init(project: Path) -> None:
    """Makes ``project`` a git repository (kiro-impl commits each task)."""
    done = run_bounded(["git", "init", "-q", str(project)], timeout=60)
    if done.returncode != 0 or done.timed_out:
        raise RuntimeError(f"git init {project} failed: {done.stderr}")


def walk(env: ClaudeEnv, player: Player, turns: Sequence[Turn], **options: Any) -> list[TurnResult]:
    """Plays ``turns`` as ``claude -p`` runs in ``env``, one per turn, each after the first
    with ``--continue``; stops after a run that failed. ``options`` go to
    :meth:`ClaudeEnv.run` (default tools: :data:`TOOLS`; timeout 180 s)."""
    options.setdefault("allowed_tools", list(TOOLS))
    options.setdefault("timeout", 180)
    done: list[TurnResult] = []
    for turn in turns:
        player.steps = list(turn.steps)
        before = len(player.requests)
        result = env.run(turn.prompt, continue_session=bool(done), **options)
        done.append(TurnResult(turn, result, player.requests[before:]))
        if not result.ok:
            break
    return done
