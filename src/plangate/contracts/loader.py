"""A contract file → :class:`~plangate.contracts.model.Contract`, or a
:class:`~plangate.errors.ContractError` naming the line and the remedy.

The format is on one page, ``docs/contracts.md``. Every key is checked: an unknown key, a
value of the wrong type, a phase named twice, a path template with a variable nobody sets,
a pattern that is not a regular expression are all errors, never ignored. Every error of a
file is found in one read: the first is raised, carrying the others in ``more`` (so
``plangate contract check`` lists them all); a part that fails is left out of what is read
after it, so one mistake is not reported again as another.
"""

from __future__ import annotations

from plangate.contracts import model
from plangate.contracts.locate import Lines
from plangate.errors import ContractError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    T = TypeVar("T")

DOCS = "docs/contracts.md"
WORKFLOW_KEYS = ("name", "skills", "variables", "paths")
PHASE_KEYS = ("name", "entry", "reads", "agents", "binds", "editable", "artifact", "approval")
ARTIFACT_KEYS = ("path", "headings", "min_items", "min_checkboxes", "placeholders")
APPROVAL_KEYS = ("required", "words", "pattern", "flag")
FLAG_KEYS = ("file", "key")
DONE_KEYS = ("after", "files", "all_checked", "check", "check_timeout")
TOP_KEYS = ("workflow", "phase", "done")
BUILTIN_VARIABLES = ("project",)
NONE: tuple[str, ...] = ()


class _Skip(Exception):
    """The part being read failed (its error is noted): go on with the next part."""


class _Reader:
    """Typed access to one table, with errors placed on their line and all of them kept."""

    def __init__(self, path: str, lines: Lines) -> None:
        self.path = path
        self.lines = lines
        self.errors: list[ContractError] = []

    def note(self, where: tuple[str, ...], key: str | None, message: str, remedy: str) -> None:
        """An error that leaves the rest of the part readable."""
        line = self.lines.line(where, key)
        self.errors.append(ContractError(message, remedy, path=self.path, line=line))

    def fail(self, where: tuple[str, ...], key: str | None, message: str, remedy: str) -> None:
        """An error that ends the part being read (:meth:`part` goes on with the next)."""
        self.note(where, key, message, remedy)
        raise _Skip

    def part(self, default: T, read: Callable[..., T], *args: Any) -> T:
        """``read(*args)``, or ``default`` when it failed (its error noted)."""
        try:
            return read(*args)
        except _Skip:
            return default

    def raise_errors(self) -> None:
        """The first error found, carrying the others in the order they were found, if any
        (the order the file is read in: the first is the one an earlier plangate raised)."""
        if not self.errors:
            return
        first = self.errors[0]
        first.more = self.errors[1:]
        raise first

    def table(
        self, value: object, where: tuple[str, ...], allowed: tuple[str, ...], label: str
    ) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(where, None, f"{label} must be a table", f"write it as [{label}]")
        assert isinstance(value, dict)
        for key in value:
            if key not in allowed:
                self.note(
                    where,
                    key,
                    f"unknown key {key!r} in {label}",
                    f"use one of: {', '.join(allowed)} (see {DOCS})",
                )
        return value

    def text(self, table: dict[str, Any], key: str, where: tuple[str, ...], label: str) -> str:
        value = table.get(key)
        if not isinstance(value, str) or not value.strip():
            self.fail(where, key, f"{label}.{key} must be a non-empty string", f'write {key} = "…"')
        assert isinstance(value, str)
        return value.strip()

    def texts(
        self, table: dict[str, Any], key: str, where: tuple[str, ...], label: str
    ) -> tuple[str, ...]:
        value = table.get(key, [])
        if isinstance(value, str):
            value = [value]
        ok = isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)
        if not ok:
            self.fail(
                where,
                key,
                f"{label}.{key} must be a list of non-empty strings",
                f'write {key} = ["…", "…"]',
            )
        return tuple(v.strip() for v in value)

    def count(self, table: dict[str, Any], key: str, where: tuple[str, ...], label: str) -> int:
        value = table.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            self.fail(where, key, f"{label}.{key} must be a whole number >= 0", f"write {key} = 3")
        assert isinstance(value, int)
        return value

    def flag(self, table: dict[str, Any], key: str, where: tuple[str, ...], label: str) -> bool:
        value = table.get(key)
        if not isinstance(value, bool):
            self.fail(where, key, f"{label}.{key} must be true or false", f"write {key} = true")
        assert isinstance(value, bool)
        return value


def load_file(path: str) -> model.Contract:
    """Parse the contract at ``path``; :class:`ContractError` when it cannot be used."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise ContractError(
            f"cannot read the contract: {error.strerror or error}",
            "check the path and its permissions",
            path=path,
        ) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ContractError(
            "the contract is not UTF-8 text", "save it as UTF-8", path=path
        ) from None
    return load_text(text, path)


def load_text(text: str, path: str = "<contract>") -> model.Contract:
    import tomllib

    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        line = _toml_line(message)
        raise ContractError(
            f"not valid TOML: {message.split(' (at ')[0]}",
            "fix the TOML syntax on that line (strings in double quotes, one key = value a line)",
            path=path,
            line=line,
        ) from None
    reader = _Reader(path, Lines(text))
    contract = reader.part(None, _contract, raw, reader, path)
    reader.raise_errors()
    assert contract is not None  # no error noted: the whole contract was read
    return contract


def _toml_line(message: str) -> int:
    marker = "(at line "
    if marker not in message:
        return 0
    digits = message.split(marker, 1)[1].split(",", 1)[0].split(")", 1)[0]
    return int(digits) if digits.isdigit() else 0


def _contract(raw: dict[str, Any], reader: _Reader, path: str) -> model.Contract:
    reader.table(raw, (), TOP_KEYS, "the contract")
    if "workflow" not in raw:
        reader.fail(
            (), None, "no [workflow] table", f'start with [workflow] and name = "…" ({DOCS})'
        )
    workflow = reader.table(raw["workflow"], ("workflow",), WORKFLOW_KEYS, "workflow")
    where = ("workflow",)
    name = reader.part("", reader.text, workflow, "name", where, "workflow")
    if any(ch.isspace() for ch in name) or "/" in name:
        reader.note(
            where, "name", "workflow.name may not hold spaces or /", 'write name = "my-flow"'
        )
    skills = reader.part(NONE, reader.texts, workflow, "skills", where, "workflow")
    variables: dict[str, int] = reader.part({}, _variables, workflow.get("variables", {}), reader)
    paths: dict[str, str] = reader.part({}, _paths, workflow.get("paths", {}), reader)
    phases_raw = raw.get("phase")
    if not isinstance(phases_raw, list) or not phases_raw:
        reader.fail((), None, "no [[phase]] tables", f"declare each phase with [[phase]] ({DOCS})")
    assert isinstance(phases_raw, list)
    phases: list[model.Phase] = []
    for index, value in enumerate(phases_raw):
        phase = reader.part(None, _phase, value, ("phase", str(index)), reader)
        if phase is None:
            continue
        if any(p.name == phase.name for p in phases):
            reader.note(
                ("phase", str(index)),
                "name",
                f"phase {phase.name!r} is declared twice",
                "give every phase its own name",
            )
            continue
        phases.append(phase)
    if not skills and not any(p.entry for p in phases):
        reader.note(
            where, None, "no skill belongs to the workflow", 'list them: skills = ["my-skill"]'
        )
    done = reader.part(None, _done, raw.get("done"), reader, phases)
    if not phases:
        raise _Skip  # every phase failed: nothing to check the templates against
    contract = model.Contract(
        name,
        skills=skills,
        variables=variables,
        paths=paths,
        phases=tuple(phases),
        done=done,
        source=path,
    )
    _check_templates(contract, reader)
    return contract


def _variables(value: object, reader: _Reader) -> dict[str, int]:
    where = ("workflow", "variables")
    if not isinstance(value, dict):
        reader.fail(
            ("workflow",),
            "variables",
            "workflow.variables must be a table",
            "write variables = { feature = 1 }",
        )
    assert isinstance(value, dict)
    found: dict[str, int] = {}
    for key, position in value.items():
        if isinstance(position, bool) or not isinstance(position, int) or position < 1:
            reader.note(
                where,
                key,
                f"variable {key!r} must be the 1-based word of the skill's arguments",
                f"write {key} = 1 for the first word",
            )
            continue
        if key in BUILTIN_VARIABLES:
            reader.note(where, key, f"{key!r} is built in", "choose another variable name")
            continue
        found[key] = position
    return found


def _paths(value: object, reader: _Reader) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(v, str) and v.strip() for v in value.values()
    ):
        reader.fail(
            ("workflow",),
            "paths",
            "workflow.paths must be a table of path templates",
            'write paths = { spec = "docs/{feature}" }',
        )
    assert isinstance(value, dict)
    return {str(k): str(v).strip() for k, v in value.items()}


def _phase(value: object, where: tuple[str, ...], reader: _Reader) -> model.Phase:
    table = reader.table(value, where, PHASE_KEYS, "phase")
    name = reader.text(table, "name", where, "phase")
    artifacts_raw = table.get("artifact", [])
    if not isinstance(artifacts_raw, list):
        reader.note(
            where,
            "artifact",
            "phase.artifact must be [[phase.artifact]] tables",
            "write [[phase.artifact]]",
        )
        artifacts_raw = []
    artifacts: list[model.Artifact] = []
    for i, item in enumerate(artifacts_raw):
        artifact = reader.part(None, _artifact, item, where + ("artifact", str(i)), reader)
        if artifact is not None:
            artifacts.append(artifact)
    editable: tuple[str, ...] | None = None
    if "editable" in table:
        editable = reader.part(NONE, reader.texts, table, "editable", where, "phase")
    texts = {
        key: reader.part(NONE, reader.texts, table, key, where, "phase")
        for key in ("entry", "reads", "agents")
    }
    binds = True
    if "binds" in table:
        binds = reader.part(True, reader.flag, table, "binds", where, "phase")
    approval = reader.part(None, _approval, table.get("approval"), where + ("approval",), reader)
    if approval is None or len(artifacts) != len(artifacts_raw):
        raise _Skip  # its errors are noted; the phase is not used for later checks
    return model.Phase(
        name,
        entry=texts["entry"],
        reads=texts["reads"],
        agents=texts["agents"],
        binds=binds,
        artifacts=tuple(artifacts),
        approval=approval,
        editable=editable,
    )


def _artifact(value: object, where: tuple[str, ...], reader: _Reader) -> model.Artifact:
    table = reader.table(value, where, ARTIFACT_KEYS, "phase.artifact")
    placeholders: tuple[str, ...] = model.DEFAULT_PLACEHOLDERS
    if "placeholders" in table:
        if table["placeholders"] is False:
            placeholders = ()
        else:
            placeholders = reader.texts(table, "placeholders", where, "phase.artifact")
    return model.Artifact(
        reader.text(table, "path", where, "phase.artifact"),
        headings=reader.texts(table, "headings", where, "phase.artifact"),
        min_items=reader.count(table, "min_items", where, "phase.artifact"),
        min_checkboxes=reader.count(table, "min_checkboxes", where, "phase.artifact"),
        placeholders=placeholders,
        line=reader.lines.line(where),
    )


def _approval(value: object, where: tuple[str, ...], reader: _Reader) -> model.Approval:
    if value is None:
        return model.Approval()
    if isinstance(value, bool):
        return model.Approval(required=value, words=("approve", "approved", "lgtm"))
    table = reader.table(value, where, APPROVAL_KEYS, "phase.approval")
    required = (
        reader.flag(table, "required", where, "phase.approval") if "required" in table else True
    )
    words = reader.texts(table, "words", where, "phase.approval")
    pattern: str | None = None
    if "pattern" in table:
        pattern = reader.text(table, "pattern", where, "phase.approval")
        import re

        try:
            re.compile(pattern)
        except re.error as error:
            reader.fail(
                where,
                "pattern",
                f"pattern is not a regular expression: {error}",
                "fix the pattern (Python re syntax)",
            )
    if required and not words and pattern is None:
        reader.fail(
            where,
            "words",
            "an approval needs the words or the pattern a person approves with",
            'write words = ["approve design"] or pattern = "…"',
        )
    flag: model.Flag | None = None
    if "flag" in table:
        flag_raw = reader.table(table["flag"], where + ("flag",), FLAG_KEYS, "phase.approval.flag")
        flag = model.Flag(
            reader.text(flag_raw, "file", where + ("flag",), "phase.approval.flag"),
            reader.text(flag_raw, "key", where + ("flag",), "phase.approval.flag"),
        )
    return model.Approval(required, words, pattern, flag)


def _done(value: object, reader: _Reader, phases: list[model.Phase]) -> model.Done | None:
    if value is None:
        return None
    where = ("done",)
    table = reader.table(value, where, DONE_KEYS, "done")
    after = reader.text(table, "after", where, "done") if "after" in table else phases[-1].name
    if not any(phase.name == after for phase in phases):
        reader.fail(
            where, "after", f"done.after names no phase: {after!r}", "name one of the phases"
        )
    check = reader.text(table, "check", where, "done") if "check" in table else None
    timeout = (
        reader.count(table, "check_timeout", where, "done") if "check_timeout" in table else 60
    )
    done = model.Done(
        after,
        files=reader.texts(table, "files", where, "done"),
        all_checked=reader.texts(table, "all_checked", where, "done"),
        check=check,
        check_timeout=timeout or 60,
    )
    if not done.files and not done.all_checked and done.check is None:
        reader.fail(where, None, "[done] says nothing", "give files, all_checked or check")
    return done


def _check_templates(contract: model.Contract, reader: _Reader) -> None:
    """Every ``{name}`` in a template is a variable, a named path or ``{project}``."""
    from plangate.contracts.templates import names_in

    known = set(contract.variables) | set(contract.paths) | set(BUILTIN_VARIABLES)

    def check(template: str, where: tuple[str, ...], key: str) -> None:
        for name in names_in(template):
            if name not in known:
                reader.note(
                    where,
                    key,
                    f"{{{name}}} in {template!r} is no variable or named path",
                    "declare it under [workflow] variables or paths "
                    f"({', '.join(sorted(known))} are known)",
                )

    for key, template in contract.paths.items():
        check(template, ("workflow", "paths"), key)
    for i, phase in enumerate(contract.phases):
        where = ("phase", str(i))
        for template in phase.reads + (phase.editable or ()):
            check(template, where, "editable" if template in (phase.editable or ()) else "reads")
        for j, artifact in enumerate(phase.artifacts):
            check(artifact.path, where + ("artifact", str(j)), "path")
        if phase.approval.flag is not None:
            check(phase.approval.flag.file, where + ("approval", "flag"), "file")
    if contract.done is not None:
        for template in contract.done.files + contract.done.all_checked:
            check(template, ("done",), "files")
