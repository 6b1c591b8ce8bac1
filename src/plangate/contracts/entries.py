"""Phase entries by a Read or an Agent dispatch (or a shell command reading a skill's
``SKILL.md``): which call enters which phase, and the ``if`` conditions that start the
contract hook for those calls only.

A phase's ``reads`` (path templates) and ``agents`` (``subagent_type`` names) make a Read or
an Agent call a phase entry. Its entry skills' files are read templates of their own for the
shell: Codex CLI has no Skill tool, and its model starts a skill by reading the skill's
``SKILL.md`` where Codex finds skills (:data:`SKILL_FOLDERS`, ``$CODEX_HOME/skills``) with
its shell tool (``Bash`` to its hooks); a command naming one (:mod:`.shell_reads`) enters
that phase, and one naming several phases' files the latest of them. :func:`entered_by`
says which phase a call enters (the fold counts it, the PreToolUse hook decides it).
:func:`conditions` turns the contracts known when ``plangate setup`` runs into Claude Code
``if`` conditions (permission-rule syntax), one handler each, so that any other Read starts
no process:

* a read template becomes ``Read(<glob>)``: named paths expanded, every variable ``*``;
  relative to the project it gets a leading ``**/`` (any folder the session starts in),
  an absolute one ``//<path>``, a home one stays ``~/<path>``;
* any ``agents`` at all make one ``Agent`` condition (Agent calls are rare; the guard
  starts on each one already).

The conditions only spare processes: every call they let through is judged in full here.
A contract added after setup has its entries registered by the next ``plangate setup``
(``plangate doctor`` names the workflows whose entries are not covered). A contract that
does not parse when setup runs is registered from its fallback (its last good version, or
the entries the broken file names; :mod:`.compiled`), and setup and doctor name it.
Standard library only (hook path).
"""

from __future__ import annotations

import os

from plangate.contracts.templates import absolute, extract, fill, is_glob, matches

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from plangate.contracts.discovery import Found
    from plangate.contracts.model import Contract, Phase

READ = "Read"
AGENT = "Agent"
BASH = "Bash"
ENTRY_TOOLS = (READ, AGENT)
SKILL_FOLDERS = (".agents/skills", "~/.agents/skills")
"""Where Codex CLI finds skills besides ``$CODEX_HOME/skills`` (the project's, the user's)."""
SKILL_FILE = "SKILL.md"


def entered_by(
    contracts: Iterable[Contract],
    tool: str,
    tool_input: dict[str, object],
    cwd: str,
    project: str,
    values: dict[str, dict[str, str]] | None = None,
) -> tuple[Contract, Phase, dict[str, str]] | None:
    """The first phase (of the first contract, in order) that this Read or Agent call
    enters, with the variables its path gives; None for a call that enters none.
    ``values`` holds each workflow's variables known so far (by contract name)."""
    if tool == BASH:
        command = tool_input.get("command")
        if not isinstance(command, str):
            return None
        return _shell_entry(contracts, command, cwd, project, values or {})
    for contract in contracts:
        known = (values or {}).get(contract.name, {})
        for phase in contract.phases:
            if tool == READ and phase.reads:
                path = tool_input.get("file_path")
                if not isinstance(path, str) or not path:
                    continue
                target = absolute(path, cwd)
                for template in phase.reads:
                    pattern = absolute(fill(template, known, contract.paths), project)
                    if matches(pattern, target):
                        found = _variables(contract, template, target, project)
                        return contract, phase, {**found, **known}
            elif tool == AGENT and tool_input.get("subagent_type") in phase.agents:
                return contract, phase, dict(known)
    return None


def skill_files(phase: Phase, project: str) -> list[str]:
    """The ``SKILL.md`` files (absolute) of ``phase``'s entry skills where Codex finds skills;
    a plugin's namespaced skill (``kit:name``) has none."""
    home = os.environ.get("CODEX_HOME") or "~/.codex"
    folders = (*SKILL_FOLDERS, os.path.join(home, "skills"))
    return [
        absolute(os.path.join(folder, ref.lstrip("/"), SKILL_FILE), project)
        for ref in phase.entry
        if ":" not in ref
        for folder in folders
    ]


def _shell_entry(
    contracts: Iterable[Contract],
    command: str,
    cwd: str,
    project: str,
    values: dict[str, dict[str, str]],
) -> tuple[Contract, Phase, dict[str, str]] | None:
    """The latest phase (of the first contract, in order) whose entry skill's ``SKILL.md``
    the shell command names."""
    from plangate.contracts import shell_reads

    if not shell_reads.may_name(command):
        return None
    names = shell_reads.named(command, cwd)
    globs = [name for name in names if is_glob(name)]
    plain = {name for name in names if os.path.basename(name) == SKILL_FILE}
    plain |= {os.path.realpath(name) for name in plain}
    if not globs and not plain:
        return None
    for contract in contracts:
        hit: Phase | None = None
        for phase in contract.phases:
            for target in skill_files(phase, project):
                if (
                    target in plain
                    or any(_globbed(glob, target) for glob in globs)
                    or plain
                    and os.path.realpath(target) in plain
                ):
                    hit = phase
        if hit is not None:
            return contract, hit, dict(values.get(contract.name, {}))
    return None


def _globbed(glob: str, path: str) -> bool:
    """Whether the shell's ``glob`` names ``path``: a ``*`` or ``?`` that begins a segment
    does not match a name beginning with a dot (the shell's rule: ``*/SKILL.md`` is not
    ``.agents/SKILL.md``)."""
    if not matches(glob, path):
        return False
    parts = glob.split(os.sep)
    names = path.split(os.sep)
    if "**" in parts or len(parts) != len(names):
        return True
    return all(
        not name.startswith(".") or part.startswith(".")
        for part, name in zip(parts, names, strict=True)
    )


def _variables(contract: Contract, template: str, path: str, project: str) -> dict[str, str]:
    expanded = template
    for name, named in contract.paths.items():
        expanded = expanded.replace("{" + name + "}", named)
    found = extract(expanded, path, project)
    return {name: value for name, value in found.items() if name in contract.variables}


def read_condition(template: str, contract: Contract) -> str:
    """The ``if`` condition that lets through every Read a read template matches."""
    pattern = fill(template, {}, contract.paths)
    pattern = pattern.replace("{", "").replace("}", "")  # a stray brace: matched as text
    if pattern.startswith("~" + os.sep) or pattern == "~":
        return f"{READ}({pattern})"
    if os.path.isabs(pattern):
        return f"{READ}(/{os.path.normpath(pattern)})"
    parts = [part for part in pattern.split("/") if part not in ("", ".")]
    if not parts or ".." in parts:
        return READ  # a template reaching out of the project: every Read
    return f"{READ}(**/{'/'.join(parts)})"


def conditions(contracts: Iterable[Contract]) -> tuple[str, ...]:
    """The ``if`` conditions for these contracts' Read and Agent entries, sorted, each once
    (none: no contract has such an entry, and no handler is registered)."""
    found: set[str] = set()
    for contract in contracts:
        for phase in contract.phases:
            found.update(read_condition(template, contract) for template in phase.reads)
            if phase.agents:
                found.add(AGENT)
    if READ in found:
        found = {c for c in found if not c.startswith(READ + "(")}
    return tuple(sorted(found))


class Survey:
    """The contracts found for a project that parse, and the broken files with the
    fallback each keeps (:meth:`plangate.contracts.compiled.Cache.fallback`)."""

    __slots__ = ("contracts", "broken", "fallbacks")

    def __init__(self) -> None:
        self.contracts: list[Contract] = []
        self.broken: list[tuple[Found, tuple[Contract, str] | None]] = []
        self.fallbacks: dict[str, list[tuple[Contract, str]]] = {}
        """Every fallback of each broken file (its good version, the entries it names)."""

    def covered(self) -> list[Contract]:
        """What setup registers entries for: the contracts that parse and the fallbacks of
        those that do not (a broken contract keeps its Read and Agent entries)."""
        kept = [contract for item, _ in self.broken for contract, _ in self.fallbacks[item.path]]
        return [*self.contracts, *kept]


def broken_note(
    item: Found, fallback: tuple[Contract, str] | None, setup: str = "plangate setup"
) -> tuple[str, str]:
    """What setup and doctor say of a contract that does not parse, and its remedy; ``setup``
    is the set-up command that registers the entries again (``plangate setup --plugin`` when
    plangate is installed as a plugin)."""
    from plangate.contracts.compiled import GOOD

    error = item.error
    assert error is not None
    if fallback is None:
        entries = "no Read or Agent entry of it is known, so none is registered"
    elif fallback[1] == GOOD:
        entries = "its Read and Agent entries are registered from its last good version"
    else:
        entries = "its Read and Agent entries are registered as the broken file names them"
    starts = "every skill start in the project" if item.skill is None else f"the skill {item.skill}"
    message = (
        f"the contract {error.where()} does not parse ({error.message}): {starts} and its "
        f"Read and Agent phase entries are refused (contract_invalid); {entries}"
    )
    remedy = f"{error.remedy}, then run `plangate contract check {item.path}`"
    if fallback is None:
        remedy += f" and `{setup}` again"
    return message, remedy


def survey(project: str, state_root: str | None = None, *, record: bool = False) -> Survey:
    """Every contract found for ``project`` (beside the skills, the project's, the user's,
    the library's), whether it applies there yet or not: a library contract whose skills
    are installed later is covered from the start. The hook's cache is read, not written;
    with ``record`` (setup) the contracts that parse are kept as their files' good versions
    (:meth:`~plangate.contracts.compiled.Cache.remember`), for when a file breaks later."""
    from plangate.contracts import compiled, discovery
    from plangate.errors import ContractError

    cache = compiled.Cache(state_root)
    kept = compiled.Cache(state_root) if record else None
    found = Survey()
    for item in discovery.candidates(project, state_root):
        try:
            contract = cache.load(item.path)
        except ContractError as error:
            item.error = error
            found.broken.append((item, cache.fallback(item.path)))
            found.fallbacks[item.path] = cache.fallbacks(item.path)
            continue
        item.contract = contract
        found.contracts.append(contract)
        if kept is not None:
            kept.remember(item.path, contract)
    if kept is not None:
        kept.save()
    return found


def known(project: str, state_root: str | None = None) -> list[Contract]:
    """The contracts whose entries setup registers for ``project`` (:meth:`Survey.covered`)."""
    return survey(project, state_root).covered()


def uncovered(contracts: Iterable[Contract], registered: Iterable[object]) -> list[str]:
    """The workflows with a Read or Agent entry that no registered condition lets through."""
    have = {str(condition) for condition in registered}
    missing: list[str] = []
    for contract in contracts:
        wanted = conditions([contract])
        if READ in have:
            wanted = tuple(c for c in wanted if not c.startswith(READ + "("))
        if any(condition not in have for condition in wanted) and contract.name not in missing:
            missing.append(contract.name)
    return missing
