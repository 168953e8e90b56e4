"""The bias monitor on a command's feed: the live table watched as its rounds end, an alarm published on the feed.

:class:`FeedMonitor` is a line sink (:attr:`harness.feed.Feed.writers`) that runs
:class:`~harness.stats.monitor.BiasMonitor` at the audit's design (:func:`harness.stats.fairness.monitor_design`:
the monitor's share of the family-wise budget, so an alarm means the audit of the same rounds fails) over each
bench's rounds as the feed says they ended: a settled round by the red faces of its ``faces``, a void or cancelled
one skipped. Each ``bench`` event starts a new record (a campaign's seeds, a certification run's scenarios are each
their own table). At the first alarm of a record it publishes one ``note`` on the same feed::

    {"who": "monitor", "what": "alarm", "detail": "...", "round": 43, "settled": 43, "z": 12.6, "favours": "red",
     "p_red": 0.994, "alpha": 0.0016}

(``round`` the table's round that raised it, ``settled`` the settled rounds of the record so far, ``z`` = S/√n,
``favours`` the colour the tokens favour, ``p_red`` the mean P(red) per token over the record, ``alpha`` the
monitor's false-alarm bound over the whole record). Its cost is one substring test an event and one JSON parse and
O(1) update a round end; it only reads the feed's lines, and publishes nothing else.
"""

from __future__ import annotations

import json

from harness.feed import Feed, FeedKind
from harness.records import RoundStatus
from harness.stats.fairness import monitor_design
from harness.stats.monitor import BiasMonitor, MonitorDesign

_BENCH = ',"kind":"bench",'
_ROUND = ',"kind":"round",'
_ENDED = '"state":"ended"'


class FeedMonitor:
    """Watches ``feed``'s round ends with the bias monitor (see the module's docstring); attach it as the feed's
    *last* line writer (:meth:`attach`), so that an alarm's note follows, in every writer, the round end that
    raised it."""

    def __init__(self, feed: Feed, design: MonitorDesign | None = None) -> None:
        self.feed = feed
        self.design = design if design is not None else monitor_design()
        self.monitor = BiasMonitor(self.design)
        self.alarms = 0

    def attach(self) -> FeedMonitor:
        """Append this monitor to the feed's line writers (last). Returns it."""
        self.feed.writers.append(self)
        return self

    def __call__(self, line: str) -> None:
        head = line[:64]
        if _ROUND in head:
            if _ENDED in line:
                self._ended(json.loads(line)["data"])
        elif _BENCH in head:
            self.monitor.reset()

    def _ended(self, data: dict[str, object]) -> None:
        monitor = self.monitor
        if monitor.alarm is not None:
            return  # latched until the next bench
        faces = str(data.get("faces") or "")
        settled = data.get("status") == RoundStatus.SETTLED and len(faces) == 4
        alarm = monitor.update(faces.upper().count("R") if settled else None)
        if alarm is None:
            return
        self.alarms += 1
        detail = (
            f"bias toward {alarm.direction} after {alarm.round} settled rounds: z = {alarm.z:.1f}, mean P(red) per "
            f"token {alarm.p_red_estimate:.3f}; false-alarm bound {self.design.alpha:.4g} over the whole record "
            "(the audit of these rounds fails)"
        )
        self.feed.publish_last(
            FeedKind.NOTE,
            who="monitor",
            what="alarm",
            detail=detail,
            round=data.get("round"),
            settled=alarm.round,
            z=round(alarm.z, 3),
            favours=alarm.direction,
            p_red=round(alarm.p_red_estimate, 4),
            alpha=self.design.alpha,
        )
