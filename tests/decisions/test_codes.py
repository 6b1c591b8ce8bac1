"""Every refusal code is a named constant, defined once, with a disposition and an
``explain`` section; no code reaches a refusal or a decision as a string literal."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import plangate
from plangate.commands.explain import sections
from plangate.decisions import reasons

PACKAGE = Path(plangate.__file__).resolve().parent
CODES = frozenset(reasons.KNOWN_CODES) | frozenset(reasons.SEED_CODES_NOT_RAISED)

#: Calls that take a code: the guard's refusal, a decision and its constructors, a contract
#: ruling, the runner's answer.
TAKES_A_CODE = frozenset({"Refusal", "Decision", "Ruling", "Answer", "Observation"})
DECISION_CONSTRUCTORS = frozenset({"deny", "unverified"})


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _literals(node: ast.AST) -> list[ast.Constant]:
    """The known codes spelled as string literals in ``node`` (``"a" if x else "b"`` too)."""
    return [
        found
        for found in ast.walk(node)
        if isinstance(found, ast.Constant) and isinstance(found.value, str) and found.value in CODES
    ]


def _takes_a_code(call: ast.Call) -> bool:
    name = _name(call.func)
    if name in TAKES_A_CODE:
        return True
    owner = call.func.value if isinstance(call.func, ast.Attribute) else None
    return name in DECISION_CONSTRUCTORS and owner is not None and _name(owner) == "Decision"


def literal_codes(source: str) -> list[tuple[int, str]]:
    """Where ``source`` passes a known code as a literal to a call that takes a code, or
    compares a ``code`` with one."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and _takes_a_code(node):
            arguments: list[ast.AST] = [*node.args[:1]]
            arguments += [k.value for k in node.keywords if k.arg == "code"]
            for argument in arguments:
                found += [(c.lineno, str(c.value)) for c in _literals(argument)]
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_name(side) == "code" for side in sides):
                for side in sides:
                    found += [(c.lineno, str(c.value)) for c in _literals(side)]
    return found


def test_the_walk_finds_a_literal_code() -> None:
    source = (
        'raise Refusal("phase_order", due)\n'
        'Refusal("publication_repeat" if again else "publication_unflushed", phase)\n'
        'reasons.Decision.deny("installation", detail=name)\n'
        'Decision("deny", code="hook_input")\n'
        'if refusal.code == "init_failed": pass\n'
        'Refusal(reasons.PHASE_ORDER, "phase_order")\n'  # a detail, not the code
        'Decision("wait", used)\n'  # not a code
    )
    assert literal_codes(source) == [
        (1, "phase_order"),
        (2, "publication_repeat"),
        (2, "publication_unflushed"),
        (3, "installation"),
        (4, "hook_input"),
        (5, "init_failed"),
    ]


def test_no_refusal_or_decision_takes_a_code_as_a_literal() -> None:
    found = [
        f"{path.relative_to(PACKAGE)}:{line}: {code!r}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line, code in literal_codes(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "use the code's constant (plangate.decisions), not its spelling"


#: Module-level names whose value is spelled like a code but that are not one, or a repeat
#: left where this change may not edit, each with why.
NOT_DEFINITIONS = {
    ("contracts/state.py", "AGENT"): "how a phase is entered (an Agent dispatch), not a code",
}


def _definitions() -> Counter[str]:
    """How many module-level ``NAME = "<code>"`` assignments each code has in ``src/``."""
    counts: Counter[str] = Counter()
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(
                node.value, ast.Constant
            ):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [t.id for t in targets if isinstance(t, ast.Name) and t.id.isupper()]
                if any((where, name) in NOT_DEFINITIONS for name in names):
                    continue
                if names and node.value.value in reasons.KNOWN_CODES:
                    counts[str(node.value.value)] += 1
    return counts


def test_every_code_is_defined_once_with_a_disposition_and_an_explain_section() -> None:
    counts = _definitions()
    page = sections()
    for code in reasons.KNOWN_CODES:
        assert counts[code] == 1, f"{code} is defined {counts[code]} times"
        assert reasons.disposition(code) in reasons.DISPOSITIONS, code
        assert code in page and f"**Disposition**: {reasons.disposition(code)}" in page[code]
    assert set(counts) == set(reasons.KNOWN_CODES)
