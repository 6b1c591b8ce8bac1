"""Third-party spec-driven kits, installed into projects the way their users install them.

plangate's workflow contracts are proven on kits nobody here wrote, never on copies of their
text in this repository. ``make setup`` brings each kit from its registry at a pinned version:

- **cc-sdd** 3.0.2 from npm, a devDependency in ``package.json`` (``npm ci`` puts its
  ``cc-sdd`` command in ``node_modules/.bin``); a user runs ``npx cc-sdd@3.0.2 --claude-skills``;
- **spec-kit** (``specify-cli`` 1.2.3 from PyPI) in a virtual environment of its own,
  ``.kits/spec-kit`` (its dependencies stay out of plangate's ``.venv``); a user runs
  ``specify init --here --integration claude``.

:class:`KitCache` runs a kit's own installer once per test session into a template folder and
copies that folder into each project a test asks for, so that a test gets a fresh, real
installation in milliseconds::

    cache = KitCache(tmp_path_factory.mktemp("kits"))
    project = cache.install(CC_SDD, tmp_path / "project")
    assert (project / ".claude/skills/kiro-impl/SKILL.md").is_file()

A kit that is not installed (or not at its pinned version) raises :class:`KitMissing`, whose
message names the kit, what is wrong and the remedy; the tests' fixtures turn it into a skip
that CI (``PLANGATE_REQUIRE_ALL=1``) does not allow (``tests/conftest.py``, ``CI_NEEDS``).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from plangate.processes import run_bounded

ROOT = Path(__file__).resolve().parents[1]
#: How long one kit installer may take (cc-sdd: about 4 s, spec-kit: about 1 s here).
INSTALL_TIMEOUT = 180.0
REMEDY = "run `make setup` in the repository (it installs the pinned kits from their registries)"


class KitMissing(Exception):
    """A kit cannot be installed into a project here; the message says why and the remedy."""


@dataclass(frozen=True)
class Kit:
    """One kit: its pinned version, how its installer is found and run, what it must leave."""

    name: str
    version: str
    #: The installer's command line, or :class:`KitMissing` when it is not installed.
    installer: Callable[[Kit], Sequence[str]]
    #: Files (relative to the project) every correct installation has.
    leaves: tuple[str, ...]
    #: The folder of the kit's skills in a project.
    skills_dir: str = ".claude/skills"

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}"

    def skills(self, project: Path) -> list[str]:
        """The names of the skills this kit installed in ``project``."""
        folder = project / self.skills_dir
        return sorted(p.parent.name for p in folder.glob("*/SKILL.md"))

    def typed_only(self, project: Path) -> set[str]:
        """The skills of this kit in ``project`` that only a person may start, by typing
        them (``disable-model-invocation: true`` in their frontmatter): Claude Code offers
        them to no Skill call of the model, and refuses one itself, before any hook."""
        folder = project / self.skills_dir
        return {
            name
            for name in self.skills(project)
            if skill_frontmatter(folder / name / "SKILL.md").get("disable-model-invocation")
            == "true"
        }


def skill_frontmatter(skill: Path) -> dict[str, str]:
    """The top-level ``key: value`` lines of a SKILL.md's frontmatter (quotes stripped)."""
    head = skill.read_text(encoding="utf-8").split("---")[1]
    found = re.findall(r"^([\w-]+):[ \t]*(.*)$", head, flags=re.M)
    return {key: value.strip().strip('"') for key, value in found}


def _cc_sdd_installer(kit: Kit) -> list[str]:
    return _cc_sdd(kit, "--claude-skills")


def _cc_sdd_codex_installer(kit: Kit) -> list[str]:
    return _cc_sdd(kit, "--codex-skills")


def _cc_sdd(kit: Kit, agent: str) -> list[str]:
    package = ROOT / "node_modules" / "cc-sdd" / "package.json"
    command = ROOT / "node_modules" / ".bin" / "cc-sdd"
    if not package.is_file() or not command.exists():
        raise KitMissing(f"{kit.label} is not installed in {ROOT / 'node_modules'}: {REMEDY}")
    found = json.loads(package.read_text(encoding="utf-8")).get("version")
    if found != kit.version:
        raise KitMissing(f"node_modules has cc-sdd {found}, the tests need {kit.version}: {REMEDY}")
    node = shutil.which("node")
    if node is None:
        raise KitMissing(f"{kit.label} needs Node.js (`node` is not on PATH): install Node.js")
    # Exactly what `npx cc-sdd@3.0.2 <agent> --yes` runs, with the language fixed so that the
    # installed text does not depend on the machine's locale.
    return [node, str(command.resolve()), agent, "--lang", "en", "--yes"]


def spec_kit_venv() -> Path:
    """The virtual environment ``make setup`` installs spec-kit into."""
    return ROOT / ".kits" / "spec-kit"


def _spec_kit_installer(kit: Kit) -> list[str]:
    venv = spec_kit_venv()
    command = venv / "bin" / "specify"
    dist = sorted(venv.glob(f"lib/python*/site-packages/specify_cli-{kit.version}.dist-info"))
    if not command.is_file():
        raise KitMissing(f"{kit.label} (specify-cli) is not installed in {venv}: {REMEDY}")
    if not dist:
        raise KitMissing(f"{venv} does not hold specify-cli {kit.version}: {REMEDY}")
    return [
        str(command),
        *("init", "--here", "--force", "--non-interactive", "--integration", "claude"),
        *("--ignore-agent-tools", "--script", "sh"),
    ]


CC_SDD = Kit(
    name="cc-sdd",
    version="3.0.2",
    installer=_cc_sdd_installer,
    leaves=(
        "CLAUDE.md",
        ".claude/skills/kiro-spec-init/SKILL.md",
        ".claude/skills/kiro-impl/SKILL.md",
        ".kiro/settings/templates/specs/init.json",
        ".kiro/settings/templates/specs/tasks.md",
    ),
)
CC_SDD_CODEX = Kit(
    name="cc-sdd-codex",
    version="3.0.2",
    installer=_cc_sdd_codex_installer,
    leaves=(
        "AGENTS.md",
        ".agents/skills/kiro-spec-init/SKILL.md",
        ".agents/skills/kiro-impl/SKILL.md",
        ".kiro/settings/templates/specs/init.json",
    ),
    skills_dir=".agents/skills",
)
"""cc-sdd 3.0.2 installed for Codex CLI by its own installer (``--codex-skills``)."""
SPEC_KIT = Kit(
    name="spec-kit",
    version="1.2.3",
    installer=_spec_kit_installer,
    leaves=(
        ".claude/skills/speckit-specify/SKILL.md",
        ".claude/skills/speckit-implement/SKILL.md",
        ".specify/templates/tasks-template.md",
        ".specify/scripts/bash/check-prerequisites.sh",
    ),
)
KITS = (CC_SDD, CC_SDD_CODEX, SPEC_KIT)


def run_installer(kit: Kit, project: Path, home: Path) -> None:
    """Runs ``kit``'s own installer in ``project`` (HOME is ``home``, so nothing of the
    machine's user is read or written); raises :class:`KitMissing` when it cannot."""
    argv = list(kit.installer(kit))
    project.mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LC_ALL": "C.UTF-8",
        "NO_COLOR": "1",
        "CI": "1",
    }
    try:
        done = run_bounded(argv, timeout=INSTALL_TIMEOUT, cwd=project, env=env)
    except OSError as error:
        raise KitMissing(f"the {kit.label} installer cannot start ({error}): {REMEDY}") from error
    if done.timed_out or done.returncode != 0:
        how = "timed out" if done.timed_out else f"exited {done.returncode}"
        raise KitMissing(
            f"the {kit.label} installer {how} in {project}: {done.stderr[-800:]}"
            f"{done.stdout[-800:]}\n{REMEDY}"
        )
    missing = [name for name in kit.leaves if not (project / name).is_file()]
    if missing:
        raise KitMissing(f"the {kit.label} installer left no {', '.join(missing)}: {REMEDY}")


class KitCache:
    """Installs each kit once (into ``root``) and copies that installation into projects."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._templates: dict[str, Path] = {}
        self._failures: dict[str, str] = {}

    def template(self, kit: Kit) -> Path:
        """The folder the kit's installer ran in, installing it the first time."""
        if kit.name in self._failures:
            raise KitMissing(self._failures[kit.name])
        if kit.name not in self._templates:
            folder = self.root / f"{kit.name}-{kit.version}"
            try:
                run_installer(kit, folder / "project", folder / "home")
            except KitMissing as error:
                self._failures[kit.name] = str(error)
                raise
            self._templates[kit.name] = folder / "project"
        return self._templates[kit.name]

    def install(self, kit: Kit, project: Path) -> Path:
        """Puts a copy of the kit's installation into ``project`` (created when missing; files
        already there are kept unless the kit has a file of the same name); returns it."""
        shutil.copytree(self.template(kit), project, dirs_exist_ok=True, symlinks=True)
        return project
