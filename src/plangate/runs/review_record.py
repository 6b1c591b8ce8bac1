"""What a plan's ``## Review record`` says: the phases that reviewed it, their decisions, top
risks and open questions, read from the conventions ``/autoplan`` writes (its ``SKILL.md``).

One ``### Phase <N> <name>`` heading per phase (``### Phase 3: Eng`` is read too); under it a
decision table whose header names the columns (``| id | finding | source | severity |
decision | change to the plan | reason |``) or ``Decision:``/``Reason:`` lines; then lists. A
line that mentions *top risks* starts the phase's risk list, one that mentions *open
questions* its question list; a numbered list with no such line is the top risks (Phase 4:
the open questions). Text that follows none of this is kept out, never guessed at::

    record = read_review_record(plan.review_record)
    [phase.title for phase in record.phases]      # ["Phase 1 CEO", "Phase 3 Eng", …]
    record.taste                                  # the decisions marked `taste`
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PHASE_HEADING = re.compile(r"^###\s+Phase\s+(\d+(?:\.\d+)?)\s*[:.\-–—]?\s*(.*?)\s*#*\s*$")
_LIST_ITEM = re.compile(r"^\s{0,3}(?:\d+[.)]|[-*+])\s+(.+?)\s*$")
_NUMBERED = re.compile(r"^\s{0,3}\d+[.)]\s")
_FIELD = re.compile(r"^\s*\**(Decision|Reason)\**\s*:\**\s*(.*?)\s*$", re.IGNORECASE)
_SEPARATOR_CELL = re.compile(r"^:?-{1,}:?$")
TASKS_PHASE = "4"


@dataclass(frozen=True, slots=True)
class Decision:
    """One decision of a phase: a table row, or a ``Decision:`` line with its ``Reason:``."""

    phase: str
    id: str
    finding: str
    severity: str
    decision: str  # accepted, adapted, rejected, deferred, taste; "" when not stated
    change: str
    reason: str


@dataclass(frozen=True, slots=True)
class PhaseReview:
    """One ``### Phase N`` entry of the review record."""

    number: str
    name: str
    decisions: tuple[Decision, ...] = ()
    top_risks: tuple[str, ...] = ()
    open_questions: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        return f"Phase {self.number} {self.name}".rstrip()


@dataclass(frozen=True, slots=True)
class ReviewRecord:
    """The phases of a review record, in the order written."""

    phases: tuple[PhaseReview, ...] = ()

    @property
    def taste(self) -> tuple[Decision, ...]:
        """The decisions left to taste: the gate lists them so the person can flip them."""
        return tuple(d for p in self.phases for d in p.decisions if d.decision == "taste")

    @property
    def open_questions(self) -> tuple[str, ...]:
        """Every phase's open questions, then each ``deferred`` decision as a question."""
        asked = [q for p in self.phases for q in p.open_questions]
        for phase in self.phases:
            for d in phase.decisions:
                if d.decision == "deferred":
                    asked.append(f"{d.id or phase.title}: {d.finding or d.change} (deferred)")
        return tuple(asked)


def _cells(line: str) -> list[str] | None:
    stripped = line.strip()
    if not (stripped.startswith("|") and stripped.endswith("|") and len(stripped) > 1):
        return None
    parts = re.split(r"(?<!\\)\|", stripped[1:-1])
    return [part.strip().replace("\\|", "|") for part in parts]


def _column(header: list[str], *names: str) -> int | None:
    for index, cell in enumerate(header):
        if any(cell.lower().strip("* ").startswith(name) for name in names):
            return index
    return None


class _PhaseReader:
    """Reads the lines under one phase heading."""

    def __init__(self, number: str, name: str) -> None:
        self.number = number
        self.name = name
        self.decisions: list[Decision] = []
        self.lists: dict[str, list[str]] = {"risks": [], "questions": []}
        self.header: list[str] | None = None
        self.label: str | None = None
        self.pending: dict[str, str] | None = None

    def cell(self, row: list[str], *names: str) -> str:
        index = _column(self.header or [], *names)
        return row[index] if index is not None and index < len(row) else ""

    def table_row(self, row: list[str]) -> None:
        if self.header is None:
            self.header = row
            return
        if all(_SEPARATOR_CELL.match(cell) for cell in row if cell):
            return
        self.decisions.append(
            Decision(
                phase=self.number,
                id=self.cell(row, "id"),
                finding=self.cell(row, "finding"),
                severity=self.cell(row, "severity").lower(),
                decision=self.cell(row, "decision").strip("`* ").lower(),
                change=self.cell(row, "change"),
                reason=self.cell(row, "reason"),
            )
        )

    def flush_field(self) -> None:
        if self.pending is not None:
            self.decisions.append(
                Decision(
                    self.number, "", "", "", "", self.pending["decision"], self.pending["reason"]
                )
            )
            self.pending = None

    def line(self, line: str) -> None:
        field = _FIELD.match(line)
        if line.strip() and (field is None or field.group(1).lower() != "reason"):
            self.flush_field()  # a Decision: line ends at the next line but its Reason:
        cells = _cells(line)
        if cells is not None:
            self.table_row(cells)
            return
        self.header = None
        if field:
            key = field.group(1).lower()
            if key == "decision":
                self.pending = {"decision": field.group(2), "reason": ""}
            elif self.pending is not None:
                self.pending["reason"] = field.group(2)
                self.flush_field()
            return
        lowered = line.lower()
        item = _LIST_ITEM.match(line)
        if item is None and line.strip():
            if "top risk" in lowered:
                self.label = "risks"
            elif "open question" in lowered:
                self.label = "questions"
            else:
                self.label = "other"
            rest = line.split(":", 1)[1].strip() if ":" in line else ""
            if self.label != "other" and rest and rest.lower() != "none":
                self.lists[self.label].append(rest)
            return
        if item is None:
            return
        label = self.label
        if label is None and _NUMBERED.match(line):
            label = "questions" if self.number == TASKS_PHASE else "risks"
        if label in self.lists and item.group(1).lower().rstrip(".") != "none":
            self.lists[label].append(item.group(1))

    def done(self) -> PhaseReview:
        self.flush_field()
        return PhaseReview(
            self.number,
            self.name,
            tuple(self.decisions),
            tuple(self.lists["risks"]),
            tuple(self.lists["questions"]),
        )


def read_review_record(text: str) -> ReviewRecord:
    """The phases a review record's text holds (none when it follows no convention)."""
    phases: list[PhaseReview] = []
    reader: _PhaseReader | None = None
    fence: str | None = None
    for line in text.splitlines():
        marker = line.lstrip()[:3]
        if marker in ("```", "~~~"):
            fence = None if fence == marker else (fence or marker)
            continue
        if fence is not None:
            continue
        heading = _PHASE_HEADING.match(line)
        if heading:
            if reader is not None:
                phases.append(reader.done())
            reader = _PhaseReader(heading.group(1), heading.group(2))
            continue
        if line.startswith("####"):  # a heading inside the phase: a label at most
            if reader is not None:
                reader.line(line.lstrip("#").strip())
            continue
        if line.startswith("#"):
            if reader is not None:
                phases.append(reader.done())
            reader = None
            continue
        if reader is not None:
            reader.line(line)
    if reader is not None:
        phases.append(reader.done())
    return ReviewRecord(tuple(phases))
