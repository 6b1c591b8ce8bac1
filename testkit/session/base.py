"""What the parts of :class:`~testkit.session.SimulatedSession` share: its state, declared.

The session is put together from one class per job (:mod:`~testkit.session.writing`,
:mod:`~testkit.session.tools`, :mod:`~testkit.session.hooks`); each part inherits this class,
so the type checker knows the attributes and the other parts' methods it uses.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from testkit.journals import Journal, Record
from testkit.session.calls import Call, Message

if TYPE_CHECKING:
    from testkit.session.hooks import HookOutcome

BashMode = Literal["auto", "subprocess"]
SlashStyle = Literal["interactive", "print"]


class SessionParts:
    project_dir: str
    home: str
    state_root: str
    session_id: str
    bash_mode: BashMode
    slash_style: SlashStyle
    plangate: str
    journal: Journal
    prompts: int
    turn_ended: bool
    messages: list[Message]
    calls: dict[str, Call]
    _fresh_turn: bool

    if TYPE_CHECKING:

        @property
        def cwd(self) -> str: ...

        @property
        def prompt_id(self) -> str | None: ...

        @property
        def config_dir(self) -> str: ...

        @property
        def journal_path(self) -> Path: ...

        @property
        def log_path(self) -> Path: ...

        def environ(self, overrides: Mapping[str, str | None] | None = None) -> dict[str, str]: ...

        def attachment(
            self,
            kind: str,
            *,
            parent: str | None | Literal["leaf"] = "leaf",
            leaf: bool = True,
            **fields: Any,
        ) -> Record: ...

        def message(
            self,
            text: str | Sequence[str] | None = None,
            calls: Sequence[Call] = (),
            *,
            journal: bool | int = True,
            run: bool | Iterable[Call] = True,
            hooks: bool = False,
            end_turn: bool | None = None,
            message_id: str | None = None,
            blocks: Sequence[str | Call] | None = None,
        ) -> Message: ...

        def flush(
            self, message: Message, *, upto: int | None = None, through: Call | None = None
        ) -> None: ...

        def write_result(self, call: Call) -> Record: ...

        def _result_record(
            self,
            call: Call,
            content: Any,
            is_error: bool | None,
            side_car: Any,
            extra: Mapping[str, Any],
        ) -> Record: ...

        def execute(self, call: Call, *, write: bool = True) -> Call: ...

        def hook(
            self,
            call: Call,
            *,
            tool_input: Mapping[str, Any] | None = None,
            drop: Iterable[str] = (),
            env: Mapping[str, str | None] | None = None,
            payload: Mapping[str, Any] | None = None,
            raw: bytes | None = None,
            write_denial: bool = True,
            during: Callable[[], None] | None = None,
            timeout: float = 30.0,
            command: str | None = None,
        ) -> HookOutcome: ...
