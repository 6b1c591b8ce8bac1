"""The one exception of the plan format. Standard library only, cheap to import."""

from __future__ import annotations

from plangate.errors import PlanError


class PlanFormatError(PlanError):
    """Text that is not a plan, or a plan value that cannot be written as one.

    ``str(error)`` is ``<source>:<line>: <problem> (<remedy>)``. The parts are kept apart too:
    ``code`` is a stable identifier (``missing_section``, ``bad_check``, …), ``line`` the
    1-based line number (``None`` when the problem has no single line), ``problem`` the text
    without location or remedy.
    """

    def __init__(
        self,
        problem: str,
        remedy: str = "",
        *,
        code: str,
        line: int | None = None,
        source: str = "<plan>",
    ) -> None:
        if line is not None:
            where = f"{source}:{line}: "
        elif source:
            where = f"{source}: "
        else:
            where = ""
        super().__init__(where + problem, remedy)
        self.problem = problem
        self.code = code
        self.line = line
        self.source = source
