"""An emulated table: the simulator's :class:`~simulator.table.Table` plus its five serial devices.

Every ground-truth event goes through :class:`~harness.bench.devices.translate.EventTranslator` to the device that
would see it and out as frames on that device's transport; lamp commands a server sends to the lamp port are set on
the simulator's lamp, which the simulated dealer follows. Each device sends only what its line's dialect declares it
carries (:mod:`harness.bench.devices.declared`), and the lamp shows betting open until CLOSE when its line carries
no betting time (:class:`~harness.bench.devices.lamp.LampDriver`). The device ends are serviced from SimPy callbacks,
so the same code runs in virtual time (in-memory pipes, the in-process bench) and in real time
(:class:`harness.wire.realtime.SelectEnvironment`, ptys or serial servers).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import simpy
from simpy.events import NORMAL, URGENT

from harness.bench.devices.declared import declared_reports
from harness.bench.devices.hub import DeviceHub, EventHandler
from harness.bench.devices.lamp import LampDriver
from harness.bench.devices.translate import EventTranslator
from harness.wire.dialects.base import LineSpec
from harness.wire.link import HEARTBEAT_S
from harness.wire.messages import Message, Source
from harness.wire.realtime import SelectEnvironment
from harness.wire.transports.base import Transport
from simulator.events import Event
from simulator.lamp import Lamp
from simulator.profile import Profile
from simulator.script import Script
from simulator.table import Table

_new_event = object.__new__


class EmulatedTable:
    """A simulated table whose devices speak the wire protocol.

    Args:
        profile, seed: the simulator's table profile and root seed.
        transports: the device end of each device's line (absent devices send nothing): by device, or by line name
            with ``lines``.
        lines: the table's lines and their dialects (default: one ``xocdia-ascii`` line per device). A device's
            reports hold only what its line's dialect declares
            (:func:`~harness.bench.devices.declared.declared_reports`).
        env: the SimPy environment (virtual time by default; a ``SelectEnvironment`` for real time).
        server_lamp: True (default) when a game server drives the lamp; False to let the simulator's fixed
            schedule open and close rounds (the lamp port then only reports HELLO/HB).
        require_ack: False when nothing acknowledges frames (a person watching with a terminal).
        players: number of simulated players (default: the profile's).
        script: forced incidents (see :mod:`simulator.script`).
        on_event: called with every link event of every device.
        keep_reports: keep every (time, device, message) handed to the devices in :attr:`reports`.
        heartbeat_s: seconds of quiet before a device sends HB (``math.inf`` turns heartbeats off).
        round_tags: True (default) to tag every device report with the server's id of the round the table
            was playing when the device saw it (docs/protocol.md §6, "Round tag"); False for a server that
            does not accept the tag. Only with a server-driven lamp (the ids come from its OPEN commands), and only
            on lines whose dialect declares ``round_tags``.
        event_times: True (default) to stamp every device report with ``at``, the device clock in ms when the
            fact happened (docs/protocol.md §6, "Event time", revision 1.2); False for a server that does not
            accept it (a 1.1 server NAKs it); only on lines whose dialect declares ``event_times``. The device clock
            is the environment's time since this table was made, so in real time it needs a ``SelectEnvironment``
            at factor 1 (sim seconds = wall seconds).
        until_close_s: the close the lamp announces for an OPEN when the lamp's line declares no
            ``betting_time_on_open`` (seconds after its arrival: the table's betting period; default ``math.inf``,
            none announced); betting then shows open until CLOSE. Ignored when the OPEN carries its betting time.

    Raises:
        ValueError: event times on a real-time environment whose factor is not 1 (the device clock would drift
            against the wall clock the server measures arrivals with), unless no line declares ``event_times``.

    Attributes:
        model: the simulator's :class:`~simulator.table.Table` (its ``log`` is the ground truth).
        hub: the :class:`~harness.bench.devices.hub.DeviceHub` serving the five device lines.
        camera: how sure the reader is of its reads (:class:`~harness.bench.devices.translate.CameraConfidence`).
    """

    def __init__(
        self,
        profile: Profile,
        seed: int,
        transports: Mapping[Source, Transport] | Mapping[str, Transport],
        *,
        lines: Sequence[LineSpec] | None = None,
        env: simpy.Environment | None = None,
        server_lamp: bool = True,
        require_ack: bool = True,
        players: int | None = None,
        script: Script | None = None,
        on_event: EventHandler | None = None,
        keep_reports: bool = False,
        heartbeat_s: float = HEARTBEAT_S,
        round_tags: bool = True,
        event_times: bool = True,
        until_close_s: float = math.inf,
    ) -> None:
        self.env = env if env is not None else simpy.Environment()
        self.declared = declared_reports(lines or ())
        timed = lines is None or any(line.dialect.capabilities.event_times for line in lines)
        if event_times and timed and isinstance(self.env, SelectEnvironment) and self.env.factor != 1:
            raise ValueError(
                f"event_times: the device clock needs a real-time factor of 1 (got {self.env.factor:g}); "
                "pass event_times=False to run slower or faster than the wall clock"
            )
        self.lamp = Lamp(self.env) if server_lamp else None
        self.lamp_until_close_s = None if self._lamp_carries_betting_time(lines) else until_close_s
        self.driver = LampDriver(self.lamp, self.lamp_until_close_s) if self.lamp is not None else None
        self.round_tags = round_tags
        self.event_times = event_times
        self.clock0 = float(self.env.now)  # the devices' power-up: their clocks count ms from here
        self.translator = EventTranslator(random.Random(f"xocdia-devices/{seed}"))
        self.camera = self.translator.camera  # kept when a step wraps the translator
        self.hub = DeviceHub(
            transports,
            lines=lines,
            on_command=self._command,
            on_event=on_event,
            require_ack=require_ack,
            heartbeat_s=heartbeat_s,
        )
        self.model = Table(
            profile,
            seed,
            env=self.env,
            lamp=self.lamp,
            listeners=(self._on_event,),
            players=players,
            script=script,
        )
        self.reports: list[tuple[float, Source, Message]] | None = [] if keep_reports else None
        self.watchers: list[Callable[[Event], None]] = []  # called with each ground-truth event, after the devices
        self._woken: simpy.Event | None = None  # the wake-up scheduled since the last service, if any
        self._timer: simpy.Event | None = None  # the timeout for the hub's next deadline (None: wake-ups only)
        self._timer_at = math.inf  # the time of that timeout
        self.hub.watch_input(self.wake)
        self._schedule(self._start, URGENT)

    @staticmethod
    def _lamp_carries_betting_time(lines: Sequence[LineSpec] | None) -> bool:
        """Whether the line carrying the lamp (if any) declares ``betting_time_on_open``."""
        return all(line.dialect.capabilities.betting_time_on_open for line in lines or () if Source.LAMP in line.roles)

    def _on_event(self, event: Event) -> None:
        reports = self.translator(event)
        if reports:  # hot path: most events are seen by no device, and need no round tag or event time
            now = self.env.now
            tag = self._round_tag(event)
            at = self.device_time(event.t) if self.event_times else None
            hub = self.hub
            roles = hub.roles
            declared = self.declared
            full = declared.full
            serve = False  # a port needs a service now (not only a new deadline)
            for src, message in reports:
                if src in roles:
                    if full:
                        serve = hub.send(src, message, now, tag, at) or serve
                    else:
                        shaped = declared.message(src, message)
                        if shaped is None:
                            continue
                        message = shaped
                        serve = (
                            hub.send(src, message, now, declared.round_tag(src, tag), declared.event_time(src, at))
                            or serve
                        )
                    if self.reports is not None:
                        self.reports.append((now, src, message))
            if serve:
                self.wake()
            elif self._woken is None:
                self._retime(now, hub.next_due())  # new frames moved a retransmission deadline, and nothing else
        for watcher in self.watchers:
            watcher(event)

    def _round_tag(self, event: Event) -> str | None:
        """The server's id of the round the table was playing when ``event`` happened (the lamp's OPEN for
        it), or None when tags are off, the lamp is not the server's, or the event belongs to no round."""
        number = getattr(event, "round", None)
        if not self.round_tags or self.driver is None or not isinstance(number, int):
            return None
        return self.driver.wire_id(number)

    def device_time(self, t: float) -> int:
        """The devices' clock at environment time ``t``: whole ms since the table was made (docs/protocol.md §6,
        "Event time"). Guarantees a non-negative int for any ``t`` not before the table was made."""
        return max(0, round((t - self.clock0) * 1000))

    def _command(self, src: Source, message: Message, now: float) -> None:
        if src is Source.LAMP and self.driver is not None:
            self.driver.apply(message, now)

    def wake(self, *_args: Any) -> None:
        """Service the devices at once (e.g. input is waiting). Safe to call many times: one wake-up is scheduled
        until the next service, which takes all of them."""
        if self._woken is None:
            self._woken = self._schedule(self._on_woken)

    # The service loop, as SimPy callbacks: at most one wake-up (an event triggered now) and one timer (a timeout at
    # the hub's next deadline) are pending at a time; whichever comes first services the hub, which takes every
    # wake-up so far. A timer still due at the deadline the service returns is kept, not made again.
    def _schedule(self, callback: Callable[[simpy.Event], None], priority: int = NORMAL) -> simpy.Event:
        """An event triggered now (as ``Event.succeed`` does, or a process start with ``URGENT``) that calls
        ``callback`` when processed."""
        # hot path: the attributes Event.__init__ and succeed set, assigned at once
        event = _new_event(simpy.Event)
        event.env = env = self.env
        event.callbacks = [callback]
        event._ok = True
        event._value = None
        env.schedule(event, priority)  # type: ignore[arg-type]
        return event

    def _start(self, _event: simpy.Event) -> None:
        self.hub.start(self.env.now)
        self._serve()

    def _serve(self) -> None:
        """Service the hub now, then keep (or make) the timer for its next deadline; input wakes it earlier."""
        self._woken = None  # every wake-up so far is taken by this service
        now = self.env.now
        self._retime(now, self.hub.service(now))

    def _retime(self, now: float, deadline: float | None) -> None:
        """Have the timer fire at ``deadline`` (None: no timer), keeping the pending one when it is for that time."""
        if deadline is None:
            self._timer = None
            return
        delay = max(deadline - now, 0.0)
        at = now + delay  # the time SimPy dates the timeout with
        if self._timer is not None and self._timer_at == at:
            return
        self._timer = timer = self.env.timeout(delay)
        self._timer_at = at
        timer.callbacks.append(self._on_timer)

    def _on_woken(self, event: simpy.Event) -> None:
        if event is self._woken:  # not a wake-up a service took since it was scheduled
            self._serve()

    def _on_timer(self, event: simpy.Event) -> None:
        if event is self._timer:  # not a timer superseded by a later service's deadline
            self._timer = None
            self._serve()
