"""Sending a reply from the viewer: the runs engine records it and starts the turn it opens.

:class:`EngineReplier` does what ``plangate reply RUN MESSAGE --detach`` does:
:meth:`plangate.runs.engine.Engine.reply` records the reply and moves the run to its next
turn (``queued``); :meth:`~plangate.runs.engine.Engine.begin` puts that turn on the run
queue; and when no worker is alive, one is started in the background (``plangate worker
--until-idle``), so the run carries on without anyone at a terminal.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from plangate.runs.engine import Engine


class Replier(Protocol):
    """What the reply box calls: record ``message`` for the run; the new turn's number."""

    def reply(self, run_id: str, message: str) -> int: ...

    def close(self) -> None: ...


class EngineReplier:
    """Replies through the runs engine of this process (made on the first reply).

    With ``start_turn=False`` the reply is only recorded (the run waits, ``queued``, for
    whoever starts its turn); tests that run no worker use that.
    """

    def __init__(self, url: str, *, start_turn: bool = True, spawn_worker: bool = True) -> None:
        self.url = url
        self.start_turn = start_turn
        self.spawn_worker = spawn_worker
        self._engine: Engine | None = None
        self._lock = threading.Lock()

    def _get_engine(self) -> Engine:
        if self._engine is None:
            from plangate.runs.engine import Engine

            self._engine = Engine(self.url)
        return self._engine

    def reply(self, run_id: str, message: str) -> int:
        with self._lock:
            engine = self._get_engine()
            turn = engine.reply(run_id, message)
            if self.start_turn:
                from plangate.runs.engine import live_workers, spawn_worker

                engine.begin(run_id, turn, detach=True)
                if self.spawn_worker and not live_workers(engine.store):
                    spawn_worker()
            return turn

    def close(self) -> None:
        with self._lock:
            if self._engine is not None:
                self._engine.shutdown()
                self._engine = None
