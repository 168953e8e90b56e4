"""One device line's server end in the in-process bench (:mod:`harness.bench.adapters.reference_inprocess`): the
reference server's own line in the line's dialect, its line guard and its device clocks, as the server process's
gateway keeps them for a serial port.

The line guard follows what the line's dialect declares (:class:`~harness.wire.dialects.base.ProtocolCapabilities`):
on a line whose dialect declares no ``round_tags`` its devices cannot tag a report, so untagged round-deciding reports
are accepted there (the server's ``untagged_reports: accept``, docs/server.md "Round tags") and tied to a round by
their arrival; on every other line an untagged one is refused as ever."""

from __future__ import annotations

from gameserver.device_clock import DeviceClock
from gameserver.dialects import DEFAULT as DEFAULT_DIALECT
from gameserver.dialects import DIALECTS as SERVER_DIALECTS
from gameserver.dialects import ServerLine, make_line
from gameserver.engine import RoundEngine
from gameserver.events import TableReport
from gameserver.gateway import timed_report
from gameserver.line_guard import LineGuard
from gameserver.protocol import Frame, encode
from harness.bench.adapters.bridge import BridgedLine
from harness.wire.dialects.base import LineSpec
from harness.wire.transports.base import Transport

EARLY_S = 1e-6  # deadlines are armed this early: float sums may land a hair before the deadline's own sum


class ServerPort:
    """One line's server end: the reference server's own line in the line's dialect when it speaks it, else the
    dialect's server end bridged to it (:mod:`harness.bench.adapters.bridge`)."""

    def __init__(self, name: str, transport: Transport, spec: LineSpec | None, now: float, silence_s: float) -> None:
        self.name = name
        self.transport = transport
        self.spec = spec
        self.silence_s = silence_s
        self.line = self._line(now)
        self.guard = self._guard()  # which device the line speaks for (as the gateway's)
        self.clocks: dict[str, DeviceClock] = {}  # per device: its device time -> sim time (protocol 1.2 ``at``)
        self.dirty = True  # bytes may have arrived since the line was last serviced

    def idle(self, now: float) -> bool:
        """True when servicing the line at ``now`` would change nothing: no input since the last service, and
        neither the line's timers nor bytes the transport holds back are due (by :data:`EARLY_S`)."""
        if self.dirty:
            return False
        soon = now + EARLY_S
        if self.line.next_deadline() <= soon:
            return False
        held = self.transport.next_release()
        return held is None or held > soon

    def admit(self, frame: Frame, engine: RoundEngine) -> bool:
        """The line guard's verdict on a new data frame, as the gateway's (``gameserver.gateway``): a frame from
        another device than the line's, or an untagged round-deciding report, is counted, recorded as a
        ``device_incident`` event of ``engine`` when worth one, and never reaches the engine."""
        verdict = self.guard.check(frame)
        if verdict.log and verdict.why is not None:
            raw = encode(frame.seq, frame.src, frame.type, frame.fields).decode("latin-1").rstrip("\r\n")
            engine.device_incident(self.name, verdict.why, raw)
        return verdict.accept

    def report_of(self, frame: Frame, now: float) -> TableReport | None:
        """The engine report an admitted data frame makes (None: none), its device time turned into sim time by its
        device's own clock (``gameserver.gateway.timed_report``)."""
        clock = self.clocks.get(frame.src)
        if clock is None:
            clock = self.clocks[frame.src] = DeviceClock()
        return timed_report(self.name, frame, clock, now)

    @property
    def accepts_untagged(self) -> bool:
        """True when the line's dialect declares no round tags: its untagged round-deciding reports are accepted."""
        return self.spec is not None and not self.spec.dialect.capabilities.round_tags

    def _guard(self) -> LineGuard:
        """A fresh line guard for the line's devices, accepting untagged reports where :attr:`accepts_untagged`."""
        return LineGuard(self.name, accept_untagged=self.accepts_untagged, roles=self.line.roles)

    def _line(self, now: float) -> ServerLine:
        spec = self.spec
        if spec is None:
            return make_line(DEFAULT_DIALECT, self.name, None, now, self.silence_s)
        roles = tuple(r.value for r in spec.roles)
        if spec.dialect.name in SERVER_DIALECTS:
            return make_line(spec.dialect.name, self.name, roles, now, self.silence_s, spec.dialect.server_options())
        return BridgedLine(spec, now, self.silence_s)

    def reopen(self, now: float) -> None:
        """A restarted server: a fresh line end, and no device clock offset learnt yet."""
        self.line = self._line(now)
        self.guard = self._guard()
        self.clocks = {}
        self.dirty = True
