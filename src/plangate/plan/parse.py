"""Reading a plan: :func:`parse_plan`. The format is described in ``docs/plan-format.md``."""

from __future__ import annotations

from types import MappingProxyType

from plangate.plan import _inline as inline
from plangate.plan.errors import PlanFormatError
from plangate.plan.model import Check, Criterion, Plan, Step
from plangate.plan.sections import (
    CHECKS,
    CRITERIA,
    GOAL,
    IMPLEMENTATION,
    REVIEW,
    SECTION_NAMES,
    Line,
    duplicate_section,
    is_blank,
    scan,
    section_name,
)

_ORDER = {name: index for index, name in enumerate(SECTION_NAMES)}
_IN_ORDER = ", ".join(f"`## {name}`" for name in SECTION_NAMES)
_MISSING_REMEDY = {
    GOAL: "add a `## Goal` section after the title, saying in a few sentences what the plan "
    "achieves",
    IMPLEMENTATION: "add a `## Implementation plan` section after `## Goal`, with one "
    "`### Step <n>: <title>` heading per step",
    CHECKS: "add a `## Checks` section after `## Implementation plan`, with one line "
    "`- `<command>`` per check",
    CRITERIA: "add a `## Acceptance criteria` section after `## Checks`, with one line "
    "`- AC1: <text>` per criterion",
}
_FILES_REMEDY = (
    "list the paths in backticks, separated by commas (`Files: `src/app.py`, `tests/test_app.py``),"
    " or write `Files: none`"
)
_SERVES_REMEDY = (
    "list acceptance criterion ids separated by commas (`Serves: AC1, AC2`), or write "
    "`Serves: none`"
)
_CHECK_REMEDY = (
    "write each check as `- `<command>``, optionally named (`- Tests: `pytest -q``) and with a "
    "timeout after it (`(timeout 300s)`)"
)
_CRITERION_REMEDY = "write each criterion as `- AC1: <text>`; indent a line to continue the text"


def parse_plan(text: str, *, source: str = "<plan>") -> Plan:
    """Read a plan from Markdown ``text``; ``source`` names the text in error messages.

    Raises :class:`PlanFormatError` naming the line and the remedy when ``text`` is not in
    the plan format. A plan that parses may still have problems: see
    :func:`~plangate.plan.validate_plan`.
    """
    return _Parser(text, source).plan()


def _is_comment(text: str) -> bool:
    stripped = text.strip()
    return stripped.startswith("<!--") and stripped.endswith("-->")


def block_text(lines: list[Line]) -> str:
    """Free text: the lines as written, without blank lines at either end."""
    texts = [line.text for line in lines]
    start, end = 0, len(texts)
    while start < end and is_blank(texts[start]):
        start += 1
    while end > start and is_blank(texts[end - 1]):
        end -= 1
    return "\n".join(texts[start:end])


class _Parser:
    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source

    def error(self, code: str, line: int | None, problem: str, remedy: str) -> PlanFormatError:
        return PlanFormatError(problem, remedy, code=code, line=line, source=self.source)

    def plan(self) -> Plan:
        scanned = scan(self.text)
        if scanned.fence_line:
            raise self.error(
                "unclosed_fence",
                scanned.fence_line,
                f"the code fence opened here ({scanned.fence}) is never closed",
                f"close it with a line of {scanned.fence}",
            )
        lines = scanned.lines
        first = 0
        while first < len(lines) and (
            is_blank(lines[first].text) or _is_comment(lines[first].text)
        ):
            first += 1
        if first == len(lines) or lines[first].level != 1:
            raise self.error(
                "no_title",
                lines[first].number if first < len(lines) else len(lines) + 1,
                "the plan does not start with its title",
                "begin the plan with a line `# Plan: <title>`",
            )
        title_line = lines[first]
        title = title_line.heading
        prefix = inline.TITLE_PREFIX.match(title)
        title = (title[prefix.end() :] if prefix else title).strip()
        if not title:
            raise self.error(
                "empty_title",
                title_line.number,
                "the title is empty",
                "write the title after `# Plan: `",
            )

        heads: list[tuple[str, int]] = []  # (section, index of its heading line)
        for index in range(first + 1, len(lines)):
            line = lines[index]
            if line.level == 1:
                raise self.error(
                    "second_title",
                    line.number,
                    f"a second title `# {inline.shorten(line.heading)}` (the plan's title is on "
                    f"line {title_line.number})",
                    "a plan has one `#` heading; use `###` or deeper headings inside a section",
                )
            if line.level == 2:
                name = section_name(line.heading)
                if name is None:
                    raise self.error(
                        "unknown_section",
                        line.number,
                        f"unknown section `## {inline.shorten(line.heading)}`",
                        f"the sections are {_IN_ORDER}; put other text inside one of them, "
                        "under a `###` heading in the goal or the review record",
                    )
                for seen, at in heads:
                    if seen == name:
                        raise duplicate_section(name, line.number, lines[at].number, self.source)
                if heads and _ORDER[name] < _ORDER[heads[-1][0]]:
                    raise self.error(
                        "section_order",
                        line.number,
                        f"`## {name}` comes after `## {heads[-1][0]}`",
                        f"put the sections in this order: {_IN_ORDER}",
                    )
                heads.append((name, index))
            elif not heads and not is_blank(line.text):
                raise self.error(
                    "stray_text",
                    line.number,
                    "text between the title and the first section",
                    "move it into `## Goal`",
                )

        present = {name for name, _ in heads}
        for name in SECTION_NAMES[:-1]:
            if name not in present:
                later = [at for seen, at in heads if _ORDER[seen] > _ORDER[name]]
                line_number = lines[later[0]].number if later else len(lines) + 1
                raise self.error(
                    "missing_section",
                    line_number,
                    f"no `## {name}` section",
                    _MISSING_REMEDY[name],
                )

        bodies: dict[str, list[Line]] = {}
        spans: dict[str, tuple[int, int]] = {}
        for position, (name, at) in enumerate(heads):
            after = heads[position + 1][1] if position + 1 < len(heads) else len(lines)
            bodies[name] = lines[at + 1 : after]
            end = lines[after].start if after < len(lines) else len(self.text)
            spans[name] = (lines[at].start, end)

        start, end = spans[IMPLEMENTATION]
        return Plan(
            title=title,
            goal=block_text(bodies[GOAL]),
            steps=self.steps(bodies[IMPLEMENTATION]),
            checks=self.checks(bodies[CHECKS]),
            criteria=self.criteria(bodies[CRITERIA]),
            review_record=block_text(bodies.get(REVIEW, [])),
            sections=MappingProxyType(spans),
            implementation_text=self.text[start:end],
        )

    # -- ## Implementation plan ------------------------------------------------------------

    def steps(self, lines: list[Line]) -> tuple[Step, ...]:
        heads = [index for index, line in enumerate(lines) if line.level == 3]
        for line in lines[: heads[0] if heads else len(lines)]:
            if not is_blank(line.text):
                raise self.error(
                    "text_before_step",
                    line.number,
                    "text before the first step of `## Implementation plan`",
                    "start the section with `### Step 1: <title>`; background belongs in `## Goal`",
                )
        steps = []
        for position, at in enumerate(heads):
            after = heads[position + 1] if position + 1 < len(heads) else len(lines)
            steps.append(self.step(lines[at], lines[at + 1 : after]))
        return tuple(steps)

    def step(self, head: Line, lines: list[Line]) -> Step:
        match = inline.STEP_HEADING.fullmatch(head.heading)
        if match is None:
            raise self.error(
                "bad_step_heading",
                head.number,
                f"`### {inline.shorten(head.heading)}` is not a step heading",
                "write steps as `### Step <n>: <title>`; use `####` for headings inside a step",
            )
        number = int(match["n"])
        title = match["title"].strip()
        if not title:
            raise self.error(
                "empty_step_title",
                head.number,
                f"step {number} has no title",
                f"write it after the colon: `### Step {number}: <title>`",
            )
        index = 0
        while index < len(lines) and is_blank(lines[index].text):
            index += 1
        files: tuple[str, ...] | None = None
        serves: tuple[str, ...] | None = None
        while index < len(lines):
            line = lines[index]
            field = inline.FIELD.fullmatch(line.text)
            if field is None:
                break
            key = field["key"].capitalize()
            if (files if key == "Files" else serves) is not None:
                raise self.error(
                    "duplicate_field",
                    line.number,
                    f"a second `{key}:` line in step {number}",
                    f"put everything on one `{key}:` line",
                )
            if key == "Files":
                files = self.files(field["value"], line.number)
            else:
                serves = self.serves(field["value"], line.number)
            index += 1
        body = lines[index:]
        for line in body:
            if is_blank(line.text):
                continue
            field = inline.FIELD.fullmatch(line.text)
            if field is not None:
                key = field["key"].capitalize()
                raise self.error(
                    "misplaced_field",
                    line.number,
                    f"the `{key}:` line of step {number} is separated from the step heading",
                    "put `Files:` and `Serves:` directly under the step heading, before the "
                    "step's text",
                )
            break
        return Step(
            number=number,
            title=title,
            files=files or (),
            serves=serves or (),
            body=block_text(body),
        )

    def files(self, value: str, line: int) -> tuple[str, ...]:
        value = value.strip()
        if value.casefold() == inline.NONE:
            return ()
        paths: list[str] = []
        position = 0
        while True:
            while position < len(value) and value[position] in " \t":
                position += 1
            if position < len(value) and value[position] == "`":
                span = inline.read_code_span(value, position)
                if span is None:
                    raise self.error(
                        "bad_files",
                        line,
                        "a backtick on the `Files:` line is never closed",
                        _FILES_REMEDY,
                    )
                path, position = span
            else:
                start = position
                while position < len(value) and value[position] not in ", \t`":
                    position += 1
                path = value[start:position]
            if not path:
                raise self.error(
                    "bad_files", line, "a path is missing on the `Files:` line", _FILES_REMEDY
                )
            paths.append(path)
            while position < len(value) and value[position] in " \t":
                position += 1
            if position == len(value):
                return tuple(paths)
            if value[position] != ",":
                raise self.error(
                    "bad_files",
                    line,
                    f"unexpected `{inline.shorten(value[position:])}` on the `Files:` line",
                    _FILES_REMEDY,
                )
            position += 1

    def serves(self, value: str, line: int) -> tuple[str, ...]:
        value = value.strip()
        if value.casefold() == inline.NONE:
            return ()
        ids = tuple(part.strip() for part in value.split(","))
        for criterion_id in ids:
            if not inline.is_criterion_id(criterion_id):
                shown = f"`{inline.shorten(criterion_id)}`" if criterion_id else "nothing"
                raise self.error(
                    "bad_serves",
                    line,
                    f"{shown} on the `Serves:` line is not an acceptance criterion id",
                    _SERVES_REMEDY,
                )
        return ids

    # -- ## Checks -------------------------------------------------------------------------

    def checks(self, lines: list[Line]) -> tuple[Check, ...]:
        return tuple(self.check(line) for line in lines if not is_blank(line.text))

    def check(self, line: Line) -> Check:
        def bad(problem: str) -> PlanFormatError:
            return self.error("bad_check", line.number, problem, _CHECK_REMEDY)

        item = inline.LIST_ITEM.match(line.text)
        if item is None:
            raise bad("not a check: every line of `## Checks` is a list item `- `<command>``")
        rest = line.text[item.end() :]
        name = None
        if not rest.startswith("`"):
            colon = rest.find(":")
            name = rest[:colon].strip() if colon >= 0 else ""
            if colon < 0 or not name or "`" in name:
                raise bad("the check has no command in backticks")
            rest = rest[colon + 1 :].lstrip(" \t")
        span = inline.read_code_span(rest, 0) if rest.startswith("`") else None
        if span is None:
            raise bad("the check has no command in backticks")
        command, end = span
        if not command.strip():
            raise bad("the check's command is empty")
        tail = inline.TIMEOUT.fullmatch(rest, end)
        if tail is None:
            raise bad(f"unexpected `{inline.shorten(rest[end:].strip())}` after the command")
        timeout = None
        if tail["n"] is not None:
            timeout = int(tail["n"]) * (60 if (tail["unit"] or "s").lower() == "m" else 1)
        return Check(command=command, timeout_seconds=timeout, name=name)

    # -- ## Acceptance criteria ------------------------------------------------------------

    def criteria(self, lines: list[Line]) -> tuple[Criterion, ...]:
        items: list[list[str]] = []
        for line in lines:
            if is_blank(line.text):
                continue
            match = inline.CRITERION_ITEM.fullmatch(line.text)
            if match is not None:
                if match["id"].casefold() == inline.NONE:
                    raise self.error(
                        "bad_criterion",
                        line.number,
                        "`none` cannot be a criterion id",
                        "use another id, such as AC1",
                    )
                items.append([match["id"], match["text"].strip()])
            elif items and line.text[0] in " \t":
                items[-1][1] = f"{items[-1][1]} {line.text.strip()}".strip()
            else:
                raise self.error(
                    "bad_criterion", line.number, "not an acceptance criterion", _CRITERION_REMEDY
                )
        return tuple(Criterion(id=criterion_id, text=text) for criterion_id, text in items)
