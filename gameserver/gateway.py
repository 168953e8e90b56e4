"""The device gateway: opens the configured serial ports by pyserial URL, speaks the wire protocol on each,
turns device frames into engine :class:`~gameserver.events.TableReport`s, reports a silent device as a
PROBLEM (ERR-1 during a round), drives the table lamp from engine events, and records every byte it received
or sent in a JSON-lines trace.
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Protocol

import serial

from gameserver.device_clock import DeviceClock
from gameserver.dialects import DEFAULT, DIALECTS, LineConfigError, ServerLine, line_options, line_roles, make_line
from gameserver.events import Event, EventKind, ReportKind, TableReport
from gameserver.line_guard import LineGuard
from gameserver.mqtt_line import MqttLine, MqttLineError, is_mqtt_url
from gameserver.protocol import BadFrame, Frame, encode

_LampCmd = tuple[str, tuple[tuple[str, str], ...]]
log = logging.getLogger("gameserver.gateway")
#: After a failed trace write, how long (s) bytes go untraced before a write is tried again.
TRACE_RETRY_S = 2.0
#: ``incident(device, why, frame)``: a line refused a frame or changed its role (docs/protocol.md §5).
IncidentSink = Callable[[str, str, str], None]


class TraceSink(Protocol):
    """Where the trace's lines go: an open text file, or a :class:`gameserver.trace_file.RotatingTrace`."""

    def write(self, text: str, /) -> int: ...
    def flush(self) -> None: ...


class DevicePort(Protocol):
    """A byte pipe to one device. ``read`` waits at most its timeout and may return b""."""

    def read(self, size: int) -> bytes: ...
    def write(self, data: bytes) -> int | None: ...
    def close(self) -> None: ...


class DeviceError(Exception):
    """A configured device cannot be opened."""


def open_serial(name: str, url: str) -> DevicePort:
    """Open a pyserial URL (a device path, ``socket://``, ``rfc2217://``, ``loop://`` ...) at 115200 8N1,
    no flow control, with a 50 ms read timeout; an ``mqtt://HOST:PORT/ROOT`` URL is a line on an MQTT broker
    (:mod:`gameserver.mqtt_line`, the ``mqtt`` extra). Raises DeviceError naming the device and URL."""
    if is_mqtt_url(url):
        try:
            return MqttLine(name, url)
        except MqttLineError as exc:
            raise DeviceError(f"cannot open device {name} at {url!r}: {exc}") from None
    try:
        port: DevicePort = serial.serial_for_url(
            url, baudrate=115200, bytesize=8, parity="N", stopbits=1, timeout=0.05, write_timeout=1.0
        )
    except (serial.SerialException, ValueError, OSError) as exc:
        raise DeviceError(f"cannot open device {name} at {url!r}: {exc}") from None
    return port


def to_report(device: str, frame: Frame, happened_at: float | None = None) -> TableReport | None:
    """The engine report a device frame stands for, carrying the frame's round tag (docs/protocol.md §6)
    if it has one and ``happened_at`` (the engine-clock time the caller's :class:`DeviceClock` estimated from
    the frame's device time, or None); None for frames that are recorded only (HELLO, CONSOLE
    TOKENS/REASSEMBLED/REARRANGED)."""
    make = _REPORTS.get((frame.src, frame.type))
    return None if make is None else make(device, frame, frame.round_tag, happened_at)


def timed_report(device: str, frame: Frame, clock: DeviceClock, arrival: float) -> TableReport | None:
    """:func:`to_report` for a frame that arrived on ``device``'s line at ``arrival`` (engine clock): the line's
    ``clock`` is reset on a HELLO and learns from every frame's device time (protocol 1.2) before the report
    gets its ``happened_at``."""
    if frame.type == "HELLO":
        clock.reset()
    return to_report(device, frame, clock.observe(frame.device_time_ms, arrival))


_Maker = Callable[[str, Frame, "str | None", "float | None"], TableReport]
#: (src, type) -> the report it stands for (device, frame, round tag, happened_at).
_REPORTS: dict[tuple[str, str], _Maker] = {
    ("BOWL", "ON"): lambda d, f, r, h: TableReport(ReportKind.BOWL_ON, d, round_tag=r, happened_at=h),
    ("BOWL", "OFF"): lambda d, f, r, h: TableReport(
        ReportKind.BOWL_OFF,
        d,
        touch=f.get("touch") == "1",
        detail=f"token {f.get('token')}",
        round_tag=r,
        happened_at=h,
    ),
    ("SHAKER", "START"): lambda d, f, r, h: TableReport(ReportKind.SHAKE_START, d, round_tag=r, happened_at=h),
    ("SHAKER", "END"): lambda d, f, r, h: TableReport(ReportKind.SHAKE_END, d, round_tag=r, happened_at=h),
    ("SHAKER", "DROP"): lambda d, f, r, h: TableReport(
        ReportKind.DROP, d, detail=f"{f.get('item')} {f.get('token')}", round_tag=r, happened_at=h
    ),
    ("READER", "RESULT"): lambda d, f, r, h: TableReport(
        ReportKind.RESULT, d, faces=f.get("faces"), overlap=f.get("overlap") == "1", round_tag=r, happened_at=h
    ),
    ("READER", "REARRANGED"): lambda d, f, r, h: TableReport(
        ReportKind.REARRANGED, d, faces=f.get("faces"), round_tag=r, happened_at=h
    ),
    ("CONSOLE", "PROBLEM"): lambda d, f, r, h: TableReport(
        ReportKind.PROBLEM, d, detail=f"console {f.get('reason')}", round_tag=r, happened_at=h
    ),
    ("CONSOLE", "RESOLVED"): lambda d, f, r, h: TableReport(ReportKind.RESOLVED, d, round_tag=r, happened_at=h),
}


_LAMP_EVENTS = frozenset(
    {
        EventKind.ROUND_OPENED,
        EventKind.BETTING_CLOSED,
        EventKind.RESHAKE,
        EventKind.ROUND_PAUSED,
        EventKind.ROUND_RESUMED,
        EventKind.ROUND_VOIDED,
        EventKind.ROUND_CANCELLED,
    }
)


def lamp_command(event: Event) -> _LampCmd | None:
    """The lamp frame (type, fields) an engine event calls for, or None."""
    if event.kind not in _LAMP_EVENTS:  # hot path: most events (bets) call for none
        return None
    rid = str(event.round_id)
    d = event.data
    if event.kind is EventKind.ROUND_OPENED:
        return "OPEN", (("round", rid), ("ms", str(max(0, round((d["closes_at"] - event.at) * 1000)))))
    if event.kind is EventKind.BETTING_CLOSED:
        return "CLOSE", (("round", rid),)
    if event.kind is EventKind.RESHAKE:
        return "RESHAKE", (("round", rid), ("reason", d["reason"]))
    if event.kind is EventKind.ROUND_PAUSED:
        return "PAUSE", (("round", rid),)
    if event.kind is EventKind.ROUND_RESUMED:
        return "RESUME", (("round", rid),)
    if event.kind is EventKind.ROUND_VOIDED:
        return "VOID", (("round", rid), ("clause", d["clause"]))
    if event.kind is EventKind.ROUND_CANCELLED:
        return "VOID", (("round", rid), ("clause", "ERR-3"))
    return None


class DeviceGateway:
    """One thread per port. ``submit`` receives every report (it must not block for long). Each port speaks the
    dialect ``dialects`` names for it (default ``xocdia-ascii``) and carries the devices ``roles`` names (default: the
    device its name names, or the one its first HELLO announces).

    Each line's :class:`~gameserver.line_guard.LineGuard` decides which frames may become reports: a frame from
    a device other than the line's, or an untagged round-deciding report (unless ``accept_untagged``), is
    acknowledged, traced (``dir`` ``reject``, the reason in ``note``), counted in :meth:`status` and never
    submitted; ``incident`` is told of the ones worth an event (bounded per line). ``untagged`` overrides
    ``accept_untagged`` per line (a line whose devices send no round tags accepts their untagged reports while the
    others refuse them)."""

    def __init__(
        self,
        ports: dict[str, DevicePort],
        submit: Callable[[TableReport], None],
        silence_s: float = 3.0,
        trace: TraceSink | None = None,
        clock: Callable[[], float] = time.monotonic,
        event_clock: Callable[[], float] | None = None,
        accept_untagged: bool = False,
        incident: IncidentSink | None = None,
        dialects: dict[str, str] | None = None,
        roles: dict[str, tuple[str, ...]] | None = None,
        reopen: Callable[[str], DevicePort] | None = None,
        options: dict[str, dict[str, float]] | None = None,
        failed: Callable[[str, str], None] | None = None,
        recovered: Callable[[str], None] | None = None,
        untagged: dict[str, bool] | None = None,
    ) -> None:
        """``clock`` (monotonic) times the links, the trace and each line's device clock; ``event_clock`` is the
        engine's clock, in which reports' ``happened_at`` are given (default: ``clock``). The device clocks
        learn in ``clock``'s time and each estimate is moved into ``event_clock``'s at its frame's arrival, so a
        step of a wall-clock ``event_clock`` shifts no estimate by more than it shifts the engine itself.
        ``reopen(name)`` (optional) opens a port again after an I/O error (a TCP device that dropped its connection);
        it may raise :class:`DeviceError`, and is then tried again after the next pause. ``options`` gives a port's
        dialect options (``gameserver.dialects.line_options``; the others at their defaults).
        ``failed(part, reason)`` is told when a part fails (``device NAME``: its thread died, logged with its cause;
        ``trace``: a write failed) and ``recovered(part)`` when it works again (the trace, once a later write
        succeeds; a dead thread does not come back): the server fails closed on them (docs/server.md).

        Raises:
            LineConfigError: a port with an unknown dialect, role or option, or an option's value out of its range (the
                message names the port, the field and the allowed values).
        """
        self._dialects = {n: (dialects or {}).get(n, DEFAULT) for n in ports}
        self._roles = {n: line_roles(n, (roles or {}).get(n)) for n in ports}
        self._options: dict[str, dict[str, float]] = {}
        for n, d in self._dialects.items():
            if d not in DIALECTS:
                raise LineConfigError(f"device {n}: dialect: unknown {d!r}; allowed: {', '.join(DIALECTS)}")
            try:
                self._options[n] = line_options(d, (options or {}).get(n))
            except LineConfigError as exc:
                raise LineConfigError(f"device {n}: {exc}") from None
        self.ports = ports
        self._submit = submit
        self._silence_s = silence_s
        self._trace = trace
        self._trace_lock = threading.Lock()
        self._clock = clock
        self._event_clock = event_clock
        self._lamp: dict[str, queue.SimpleQueue[_LampCmd]] = {n: queue.SimpleQueue() for n in ports}
        self.links: dict[str, ServerLine] = {}
        self.guards = {n: LineGuard(n, (untagged or {}).get(n, accept_untagged), self._roles[n]) for n in ports}
        self._incident = incident
        self._reopen = reopen
        self._running = False
        self._failed_cb = failed
        self._recovered_cb = recovered
        self._failures: dict[str, str] = {}
        self._failures_lock = threading.Lock()
        self._trace_retry_at = 0.0  # after a failed trace write, the next one is tried at this time (clock)
        self._threads = [
            threading.Thread(target=self._line_thread, args=(n,), name=f"dev-{n}", daemon=True) for n in ports
        ]

    def start(self) -> None:
        """Open the links (HELLO on every port) and start the port threads."""
        now = self._clock()
        for name in self.ports:
            dialect, roles, options = self._dialects[name], self._roles[name], self._options[name]
            line = self.links[name] = make_line(dialect, name, roles, now, self._silence_s, options)
            if not self._roles[name] and line.roles:  # the dialect knows the line's devices (a bus named "bus")
                self.guards[name] = LineGuard(name, self.guards[name].accept_untagged, line.roles)
        self._running = True
        for t in self._threads:
            t.start()

    def stop(self, timeout_s: float = 2.0) -> None:
        """Stop the threads (bounded) and close the ports."""
        self._running = False
        for t in self._threads:
            if t.is_alive():
                t.join(timeout_s)
        for port in self.ports.values():
            with contextlib.suppress(Exception):  # closing a port that already failed is not worth surfacing
                port.close()

    def on_events(self, events: list[Event]) -> None:
        """Engine subscriber: queue lamp commands (sent on the lamp port by its own thread)."""
        for event in events:
            cmd = lamp_command(event)
            if cmd is not None:
                for q in self._lamp.values():
                    q.put(cmd)

    def status(self) -> dict[str, dict[str, object]]:
        """Per device line: link up, peer name, the line's role, its dialect and the dialect's options in force, and
        its rejected frames per reason."""
        return {
            n: {
                "up": link.up,
                "peer": link.peer,
                "role": self.guards[n].role,
                "dialect": link.dialect,
                "options": dict(self._options[n]),
                "rejected": dict(self.guards[n].counts),
            }
            for n, link in self.links.items()
        }

    def failures(self) -> dict[str, str]:
        """The parts that failed and have not recovered (``device NAME``, ``trace``) -> why."""
        with self._failures_lock:
            return dict(self._failures)

    def _fail(self, part: str, reason: str) -> None:
        with self._failures_lock:
            new = part not in self._failures
            self._failures[part] = reason
        if new:
            log.error("%s failed: %s", part, reason)
            if self._failed_cb is not None:
                self._failed_cb(part, reason)

    def _recover(self, part: str) -> None:
        with self._failures_lock:
            was = self._failures.pop(part, None) is not None
        if was:
            log.warning("%s recovered", part)
            if self._recovered_cb is not None:
                self._recovered_cb(part)

    def _line_thread(self, name: str) -> None:
        """A line's thread: :meth:`_serve` until the gateway stops; an exception ending it is logged with its cause
        and fails the line (``device NAME``)."""
        try:
            self._serve(name)
        except BaseException as exc:
            log.error("device %s: thread died", name, exc_info=exc)
            self._fail(f"device {name}", f"thread died: {exc!r}")

    def _record(self, device: str, direction: str, raw: bytes, note: str = "") -> None:
        if self._trace is None or not raw:
            return
        now = self._clock()
        line: dict[str, object] = {"t": now, "device": device, "dir": direction}
        line["bytes"] = raw.decode("latin-1")
        if note:
            line["note"] = note
        with self._trace_lock:
            if now < self._trace_retry_at:
                return  # the trace failed; bytes are not traced until the next try
            failed = self._trace_retry_at > 0
            try:
                self._trace.write(("\n" if failed else "") + json.dumps(line) + "\n")
                self._trace.flush()
            except (OSError, ValueError) as exc:
                self._trace_retry_at = now + TRACE_RETRY_S
                reason = f"write failed: {exc.strerror if isinstance(exc, OSError) and exc.strerror else exc}"
            else:
                self._trace_retry_at = 0.0
                reason = ""
        if reason:
            self._fail("trace", reason)
        elif failed:
            self._recover("trace")

    def _serve(self, name: str) -> None:
        port, line, lamp = self.ports[name], self.links[name], self._lamp[name]
        guard = self.guards[name]
        clocks: dict[str, DeviceClock] = {}  # one per device: a bus line carries several device clocks
        failing = False  # report an I/O failure once per episode, not on every retry
        while self._running:
            try:
                out = line.take_output()
                if out:
                    port.write(out)
                    self._record(name, "tx", out)
                data = port.read(1)  # returns as soon as a byte arrives (a polled line answers in a few ms)
                waiting = getattr(port, "in_waiting", 0) if data else 0
                if waiting:
                    data += port.read(min(int(waiting), 4096))
                failing = False
            except (serial.SerialException, OSError) as exc:
                if not failing:
                    self._submit(TableReport(ReportKind.PROBLEM, name, detail=f"gateway error: {exc}"))
                    self._record(name, "error", str(exc).encode(), "io")
                failing = True
                time.sleep(0.5)
                port = self._reopened(name, port)
                continue
            now = self._clock()
            shift = 0.0 if self._event_clock is None else self._event_clock() - now  # clock -> engine clock
            self._record(name, "rx", data)
            for frame in line.feed(data, now) if data else ():
                if isinstance(frame, BadFrame):
                    self._record(name, "error", frame.raw, frame.kind)
                    continue
                if self._admit(name, guard, frame):
                    self._report(name, frame, clocks, now, shift)
            while not lamp.empty():
                type_, fields = lamp.get()
                if line.carries_lamp or guard.role == "LAMP":
                    line.send(type_, fields, now)
            silent = line.tick(now)
            for frame in line.released(now):  # held back by the line, let go without new bytes
                if not isinstance(frame, BadFrame) and self._admit(name, guard, frame):
                    self._report(name, frame, clocks, now, shift)
            if silent:
                self._submit(TableReport(ReportKind.PROBLEM, name, detail=_silent(line, silent)))

    def _report(self, name: str, frame: Frame, clocks: dict[str, DeviceClock], now: float, shift: float) -> None:
        """Submit what an admitted frame of line ``name`` reports, its device time moved onto the engine's clock by
        ``shift``; a frame that reports nothing is dropped."""
        report = timed_report(name, frame, clocks.setdefault(frame.src, DeviceClock()), now)
        if report is not None and report.happened_at is not None:
            report = replace(report, happened_at=report.happened_at + shift)
        if report is not None:
            self._submit(report)

    def _reopened(self, name: str, port: DevicePort) -> DevicePort:
        """The port again after an I/O error: reopened when the gateway can (the old one closed), else as it was."""
        if self._reopen is None or not self._running:
            return port
        with contextlib.suppress(Exception):  # the old port failed already: closing it is best effort
            port.close()
        try:
            fresh = self._reopen(name)
        except DeviceError:
            return port
        self.ports[name] = fresh
        return fresh

    def _admit(self, name: str, guard: LineGuard, frame: Frame) -> bool:
        """The line guard's verdict on a new data frame: traced and, when worth it, reported as an incident."""
        verdict = guard.check(frame)
        if verdict.why is None:
            return True
        raw = encode(frame.seq, frame.src, frame.type, frame.fields)
        self._record(name, "reject" if not verdict.accept else "incident", raw, verdict.why)
        if verdict.log and self._incident is not None:
            self._incident(name, verdict.why, raw.decode("latin-1").rstrip("\r\n"))
        return verdict.accept


def _silent(line: ServerLine, devices: list[str]) -> str:
    """The PROBLEM detail for devices that went silent: one device per line keeps the classic wording."""
    if len(line.roles) <= 1:
        return "link down: device silent"
    return f"link down: {', '.join(devices)} silent"
