"""The soak's faults of our own infrastructure: the database restarted, crashed or down, a
worker frozen past its lease, every free connection taken by another client, one
organization's destinations hanging for a while.

Each mode is played a few times while the soak runs, each time at a moment when work is
in flight (a rendition mid-publish), so the fault lands between a request and the write of
its outcome as often as the load allows. The database faults are played only on a private
server the soak started itself (loadtest.private_pg).
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from django.db import DatabaseError, InterfaceError, connection

from apps.common.processes import ChildProcess
from loadtest.private_pg import PrivatePostgres

KILL = "kill"
HANG = "hang"
PAUSE = "pause"
CONNECTIONS = "connections"
DB_RESTART_FAST = "db-restart-fast"
DB_RESTART_IMMEDIATE = "db-restart-immediate"
DB_DOWN = "db-down-30s"
MODES = (KILL, DB_RESTART_FAST, DB_RESTART_IMMEDIATE, DB_DOWN, PAUSE, HANG, CONNECTIONS)
DATABASE_MODES = frozenset({DB_RESTART_FAST, DB_RESTART_IMMEDIATE, DB_DOWN})
# Modes played on a private server: they would hit everyone sharing the configured one.
PRIVATE_MODES = DATABASE_MODES | {CONNECTIONS}
# Modes played as events while the soak runs (kill has its own loop, hang is a behaviour).
EVENT_MODES = PRIVATE_MODES | {PAUSE}


@dataclass
class FaultEvent:
    what: str
    at_s: float  # seconds from the start of the run
    took_s: float
    detail: str = ""


def db_errors() -> tuple[type[Exception], ...]:
    """What a query of the soak's own raises while the database is away."""
    return (DatabaseError, InterfaceError)


@dataclass
class FaultTimes:
    every_s: float = 20.0  # between the end of one fault and the next
    times: int = 3
    down_s: float = 30.0  # db-down-30s
    hold_s: float = 20.0  # connections
    pause_s: float = 30.0  # pause (past the lease; see loadtest.soak.pause_default_s)
    # hang: how long the destinations hang from the first due time (None: the spread, so
    # every post of the run falls due while they hang).
    hang_s: float | None = None


class FaultPlayer:
    """Plays `mode` `times.times` times from a thread of the soak, until `stopping`."""

    def __init__(
        self,
        mode: str,
        *,
        times: FaultTimes,
        started: float,
        stopping: threading.Event,
        in_flight: Callable[[], bool],
        pause_victim: Callable[[], ChildProcess | None],
        server: PrivatePostgres | None,
    ) -> None:
        if mode not in EVENT_MODES:
            raise ValueError(f"{mode} is not played as an event.")
        if mode in PRIVATE_MODES and server is None:
            raise ValueError(f"{mode} is played only on a private server.")
        self.mode = mode
        self.times = times
        self.started = started
        self.stopping = stopping
        self.in_flight = in_flight
        self.pause_victim = pause_victim
        self.server = server
        self.events: list[FaultEvent] = []

    def run(self) -> None:
        try:
            for _ in range(self.times.times):
                victim = self._wait_for_work()
                if victim is None:
                    return
                self._play(victim)
                if self.stopping.wait(self.times.every_s):
                    return
        finally:
            connection.close()  # this thread's own

    def as_dicts(self) -> list[dict]:
        return [asdict(event) for event in self.events]

    def _wait_for_work(self) -> ChildProcess | bool | None:
        """The moment to strike: a rendition mid-publish (for pause, a worker running a
        publish job: the victim). None once the run stops."""
        while not self.stopping.is_set():
            try:
                if self.mode == PAUSE:
                    victim = self.pause_victim()
                    if victim is not None:
                        return victim
                elif self.in_flight():
                    return True
            except db_errors():
                connection.close()
            self.stopping.wait(0.2)
        return None

    def _play(self, victim: ChildProcess | bool) -> None:
        at = time.monotonic()
        detail = ""
        # A private mode always has its server: __init__ refuses one without.
        if self.mode in PRIVATE_MODES and self.server is not None:
            detail = self._strike(self.server)
        elif self.mode == PAUSE and isinstance(victim, ChildProcess):
            detail = f"pid {victim.pid}"
            victim.send(signal.SIGSTOP)
            try:
                time.sleep(self.times.pause_s)
            finally:
                victim.send(signal.SIGCONT)
        connection.close()  # a connection of before the fault is dead or stale
        self.events.append(
            FaultEvent(
                what=self.mode,
                at_s=round(at - self.started, 1),
                took_s=round(time.monotonic() - at, 1),
                detail=detail,
            )
        )

    def _strike(self, server: PrivatePostgres) -> str:
        """Play a private server's mode on `server`; returns the event's detail."""
        if self.mode == DB_RESTART_FAST:
            server.restart("fast")
        elif self.mode == DB_RESTART_IMMEDIATE:
            server.restart("immediate")
        elif self.mode == DB_DOWN:
            server.stop("fast")
            try:
                time.sleep(self.times.down_s)
            finally:
                server.start_again()
        elif self.mode == CONNECTIONS:
            held = server.take_free_connections()
            try:
                time.sleep(self.times.hold_s)
            finally:
                server.release(held)
            return f"{len(held)} connections held"
        return ""


class HangLift:
    """Under hang: the hanging organization's destinations hang from the start of the run;
    this lifts the fault `hang_s` after `due_from` (a monotonic instant: the first due time),
    as a real outage ends, so its renditions can then settle. Records one event (at 0: the
    fault was on from the start; took: until it was lifted, or until the run stopped)."""

    def __init__(
        self,
        *,
        hang_s: float,
        started: float,
        due_from: float,
        stopping: threading.Event,
        lift: Callable[[], str],
    ) -> None:
        self.hang_s = hang_s
        self.started = started
        self.due_from = due_from
        self.stopping = stopping
        self.lift = lift
        self.events: list[FaultEvent] = []

    def run(self) -> None:
        try:
            wait = self.due_from + self.hang_s - time.monotonic()
            if wait > 0 and self.stopping.wait(wait):
                detail = "not lifted: the run ended first"
            else:
                detail = self._lift()
            self.events.append(
                FaultEvent(
                    what=HANG,
                    at_s=0.0,
                    took_s=round(time.monotonic() - self.started, 1),
                    detail=detail,
                )
            )
        finally:
            connection.close()  # this thread's own

    def _lift(self) -> str:
        while True:  # the database may be away (another fault): ask again
            try:
                return f"lifted; {self.lift()}"
            except db_errors():
                connection.close()
                if self.stopping.wait(0.5):
                    return "not lifted: the database was away until the run ended"

    def as_dicts(self) -> list[dict]:
        return [asdict(event) for event in self.events]
