"""One check of ``plangate doctor``: its name, status, detail and remedy."""

from __future__ import annotations

OK = "ok"
WARN = "warn"
PROBLEM = "problem"
SETUP_AGAIN = "run `plangate setup{plugin}` again with the plangate you use"


class Check:
    __slots__ = ("name", "status", "detail", "remedy")

    def __init__(self, name: str, status: str, detail: str, remedy: str = "") -> None:
        self.name = name
        self.status = status
        self.detail = detail
        self.remedy = remedy

    def as_dict(self) -> dict[str, str]:
        return {
            "check": self.name,
            "status": self.status,
            "detail": self.detail,
            "remedy": self.remedy,
        }
