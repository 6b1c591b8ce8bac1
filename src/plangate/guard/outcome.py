"""How a guard evaluation ends: a refusal with a code, raised from deep inside the checks."""

from __future__ import annotations


class Refusal(Exception):
    """The guard denies (or, for unverified codes, lets through with a warning) with ``code``.

    ``detail`` is a short fact for the message (never content the model wrote); ``keys``
    carries key names for ``agent_key``.
    """

    def __init__(self, code: str, detail: str = "", keys: list[str] | None = None) -> None:
        super().__init__(code)
        self.code = code
        self.detail = detail
        self.keys = keys or []

    def __repr__(self) -> str:
        return f"Refusal({self.code!r}, {self.detail!r})"
