"""A parsed workflow contract: plain ``__slots__`` classes, built by :mod:`.loader` (from
TOML) or :mod:`.compiled` (from the hook path's cache). Standard library only."""

from __future__ import annotations

DEFAULT_PLACEHOLDERS = ("{{", "TBD", "TODO")
"""What counts as a template placeholder unless an artifact says otherwise."""


class Artifact:
    """One file a phase must leave behind, and what it must hold."""

    __slots__ = ("path", "headings", "min_items", "min_checkboxes", "placeholders", "line")

    def __init__(
        self,
        path: str,
        *,
        headings: tuple[str, ...] = (),
        min_items: int = 0,
        min_checkboxes: int = 0,
        placeholders: tuple[str, ...] = DEFAULT_PLACEHOLDERS,
        line: int = 0,
    ) -> None:
        self.path = path
        self.headings = headings
        self.min_items = min_items
        self.min_checkboxes = min_checkboxes
        self.placeholders = placeholders
        self.line = line


class Flag:
    """A file the workflow itself records an approval in (cc-sdd's ``spec.json``): ``key`` is
    a dotted path to a boolean."""

    __slots__ = ("file", "key")

    def __init__(self, file: str, key: str) -> None:
        self.file = file
        self.key = key


class Approval:
    """Whether a person must approve a phase before the next one, and how they say so."""

    __slots__ = ("required", "words", "pattern", "flag")

    def __init__(
        self,
        required: bool = False,
        words: tuple[str, ...] = (),
        pattern: str | None = None,
        flag: Flag | None = None,
    ) -> None:
        self.required = required
        self.words = words
        self.pattern = pattern
        self.flag = flag


class Phase:
    """One phase: how it is entered, what it leaves, its approval, what it may edit."""

    __slots__ = ("name", "entry", "reads", "agents", "binds", "artifacts", "approval", "editable")

    def __init__(
        self,
        name: str,
        *,
        entry: tuple[str, ...] = (),
        reads: tuple[str, ...] = (),
        agents: tuple[str, ...] = (),
        binds: bool = True,
        artifacts: tuple[Artifact, ...] = (),
        approval: Approval | None = None,
        editable: tuple[str, ...] | None = None,
    ) -> None:
        self.name = name
        self.entry = entry
        self.reads = reads
        self.agents = agents
        self.binds = binds
        self.artifacts = artifacts
        self.approval = approval or Approval()
        self.editable = editable  # None: anything may be edited

    def __repr__(self) -> str:
        return f"Phase({self.name!r})"


class Done:
    """The definition of done for the final stop, armed once phase ``after`` is entered."""

    __slots__ = ("after", "files", "all_checked", "check", "check_timeout")

    def __init__(
        self,
        after: str,
        *,
        files: tuple[str, ...] = (),
        all_checked: tuple[str, ...] = (),
        check: str | None = None,
        check_timeout: int = 60,
    ) -> None:
        self.after = after
        self.files = files
        self.all_checked = all_checked
        self.check = check
        self.check_timeout = check_timeout


class Contract:
    """One workflow. ``variables`` maps a name to the 1-based word of an entry skill's
    arguments it comes from; ``paths`` are named templates (``{spec}``)."""

    __slots__ = ("name", "skills", "variables", "paths", "phases", "done", "source")

    def __init__(
        self,
        name: str,
        *,
        skills: tuple[str, ...],
        phases: tuple[Phase, ...],
        variables: dict[str, int] | None = None,
        paths: dict[str, str] | None = None,
        done: Done | None = None,
        source: str = "",
    ) -> None:
        self.name = name
        self.skills = skills
        self.variables = variables or {}
        self.paths = paths or {}
        self.phases = phases
        self.done = done
        self.source = source

    def __repr__(self) -> str:
        return f"Contract({self.name!r}, {len(self.phases)} phases)"

    def phase(self, name: str) -> Phase | None:
        return next((phase for phase in self.phases if phase.name == name), None)

    def index(self, name: str) -> int:
        return next(i for i, phase in enumerate(self.phases) if phase.name == name)

    def all_skills(self) -> tuple[str, ...]:
        """The workflow's skills and every phase's entry skills, once each."""
        names = list(self.skills)
        for phase in self.phases:
            names.extend(name for name in phase.entry if name not in names)
        return tuple(dict.fromkeys(names))
