"""Which contracts apply in a project folder, and why. Standard library only (hook path).

Looked for, in this order; for one workflow name the first found wins and the rest are
listed as shadowed:

1. beside a skill: ``<skills folder>/<skill>/plangate.toml``, in the project's
   ``.claude/skills`` and the user's ``$CLAUDE_CONFIG_DIR/skills``;
2. the project: ``<project>/.plangate/contracts/*.toml``;
3. the user: ``<state root>/contracts/*.toml``;
4. the library shipped with plangate (``plangate/contracts/library/*.toml``), which applies
   only where one of its workflow's skills is installed (project or user skills folder).
"""

from __future__ import annotations

import os

from plangate import locations
from plangate.contracts import model
from plangate.errors import ContractError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

CONTRACT_FILE = "plangate.toml"
PROJECT_DIR = os.path.join(".plangate", "contracts")
USER_DIR = "contracts"
SKILL = "skill"
PROJECT = "project"
USER = "user"
LIBRARY = "library"
ORIGINS = (SKILL, PROJECT, USER, LIBRARY)


def library_dir() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "library")


class Found:
    """One contract file: where it came from, why it applies, and what it holds (or the
    error it gave). ``applies`` is False for a shadowed or not-installed one."""

    __slots__ = ("path", "origin", "why", "skill", "contract", "error", "applies")

    def __init__(self, path: str, origin: str, why: str, skill: str | None = None) -> None:
        self.path = path
        self.origin = origin
        self.why = why
        self.skill = skill
        self.contract: model.Contract | None = None
        self.error: ContractError | None = None
        self.applies = True

    def as_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "origin": self.origin,
            "workflow": self.contract.name if self.contract is not None else None,
            "applies": self.applies,
            "why": self.why,
            "error": None
            if self.error is None
            else {
                "line": self.error.line,
                "message": self.error.message,
                "remedy": self.error.remedy,
            },
        }


CODEX_SKILLS = (".agents", "skills")
"""Where Codex CLI 0.171.0 finds a project's skills (cc-sdd's ``--codex-skills`` installs
there): a contract applies there as beside Claude Code's skills."""


def skill_folders(project_dir: str) -> list[str]:
    return [
        os.path.join(project_dir, ".claude", "skills"),
        os.path.join(locations.claude_config_dir(), "skills"),
        os.path.join(project_dir, *CODEX_SKILLS),
    ]


def _listdir(folder: str) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def candidates(project_dir: str, state_root: str | None = None) -> list[Found]:
    """Every contract file that may apply, in precedence order, not yet parsed."""
    found: list[Found] = []
    for folder in skill_folders(project_dir):
        for name in _listdir(folder):
            path = os.path.join(folder, name, CONTRACT_FILE)
            if os.path.isfile(path):
                found.append(Found(path, SKILL, f"beside the skill {name} in {folder}", name))
    project = os.path.join(project_dir, PROJECT_DIR)
    for name in _listdir(project):
        if name.endswith(".toml"):
            found.append(Found(os.path.join(project, name), PROJECT, f"in the project ({project})"))
    root = state_root if state_root is not None else locations.state_root()
    user = os.path.join(root, USER_DIR)
    for name in _listdir(user):
        if name.endswith(".toml"):
            found.append(Found(os.path.join(user, name), USER, f"in your plangate folder ({user})"))
    library = library_dir()
    for name in _listdir(library):
        if name.endswith(".toml"):
            found.append(Found(os.path.join(library, name), LIBRARY, "shipped with plangate"))
    return found


def installed_skill(contract: model.Contract, project_dir: str) -> str | None:
    """The folder of one of the workflow's skills installed here, or None."""
    for folder in skill_folders(project_dir):
        for skill in contract.all_skills():
            bare = skill.split(":", 1)[-1]
            path = os.path.join(folder, bare)
            if os.path.isdir(path):
                return path
    return None


def discover(
    project_dir: str,
    load: Callable[[str], model.Contract],
    state_root: str | None = None,
) -> list[Found]:
    """Every candidate, parsed with ``load``; ``applies`` and ``why`` say the outcome."""
    found = candidates(project_dir, state_root)
    taken: dict[str, Found] = {}
    for item in found:
        try:
            item.contract = load(item.path)
        except ContractError as error:
            item.error = error
            item.why += "; it does not parse, so its workflow is refused until it is fixed"
            if item.origin == LIBRARY:
                item.applies = False  # a shipped contract is tested; never blocks a project
            continue
        contract = item.contract
        if item.origin == LIBRARY:
            skill = installed_skill(contract, project_dir)
            if skill is None:
                item.applies = False
                item.why += "; none of its skills is installed here"
                continue
            item.why += f"; its skill is installed at {skill}"
        earlier = taken.get(contract.name)
        if earlier is not None:
            item.applies = False
            item.why += f"; shadowed by {earlier.path}"
            continue
        taken[contract.name] = item
    return found


def applying(found: list[Found]) -> tuple[list[model.Contract], list[Found]]:
    """The contracts that apply, and the broken files that do."""
    contracts = [f.contract for f in found if f.applies and f.contract is not None]
    broken = [f for f in found if f.applies and f.error is not None]
    return contracts, broken


def covered(project: str) -> bool:
    """Whether any contract applies (or would, but does not parse) in ``project``: one that is
    not the library's, or a library contract whose skills are installed here. The hooks' first
    question (a few ``stat`` calls and the contracts cache)."""
    from plangate.contracts import compiled

    found = candidates(project)
    if any(item.origin != LIBRARY for item in found):
        return True
    cache = compiled.Cache()
    try:
        for item in found:
            try:
                contract = cache.load(item.path)
            except Exception:  # noqa: BLE001 - a shipped contract that fails is tested for
                continue
            if installed_skill(contract, project) is not None:
                return True
        return False
    finally:
        cache.save()
