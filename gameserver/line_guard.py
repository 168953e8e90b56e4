"""Which device a serial line speaks for, and which of its frames may reach the engine (docs/protocol.md §5, §7).

A line's *role* is the device ``src`` it carries (``BOWL``, ``SHAKER``, ``READER``, ``CONSOLE``, ``LAMP``):

- a line whose configured name is a role (``bowl`` → ``BOWL``, case-insensitive) has that role for ever; a frame
  from any other ``src`` on it, HELLO included, is rejected ``wrong_line``;
- a line configured with several roles (an addressed bus) carries exactly those; a frame from any other ``src`` is
  rejected ``wrong_line``;
- any other line takes its role from its first frame (normally its HELLO); a later HELLO naming another device
  changes the role and is an incident (``role_change``); a data frame from another ``src`` is ``wrong_line``.

A round-deciding report — ``READER RESULT``, ``READER REARRANGED``, ``BOWL OFF`` — must carry the round tag
(protocol revision 1.1 and later): an untagged one is rejected ``untagged`` unless the server runs in the 1.0
compatibility mode (``untagged_reports: accept``), because an untagged result cannot be told from a replay of an
earlier round's result sent again with a fresh sequence number.

A rejected frame is still acknowledged (the link must not stall on it) but never becomes a report. The guard
counts rejections per reason; :meth:`LineGuard.check` says when one is worth an event in the log (the first of
each reason since the line's last accepted HELLO, and every role change, at most ``MAX_INCIDENTS`` per line), so a
hostile line cannot grow the ledger without bound.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from gameserver.protocol import Frame

ROLES = frozenset({"BOWL", "SHAKER", "READER", "CONSOLE", "LAMP"})
#: Reports that settle or void a round: accepted only with a round tag (outside the compatibility mode).
DECIDING = frozenset({("READER", "RESULT"), ("READER", "REARRANGED"), ("BOWL", "OFF")})
#: Incident events one line may add to the event log over the server's life; later ones are only counted.
MAX_INCIDENTS = 64

WRONG_LINE = "wrong_line"
UNTAGGED = "untagged"
ROLE_CHANGE = "role_change"


@dataclass(frozen=True)
class Verdict:
    """What to do with one data frame: ``accept`` it or not; ``why`` names the rejection or the incident;
    ``log`` is True when the caller should record an event for it."""

    accept: bool
    why: str | None = None
    log: bool = False


_ACCEPTED = Verdict(True)  # hot path: the verdict on almost every frame, built once (frozen)


class LineGuard:
    """The role of one line and the count of what it refused (``counts``: reason → frames). ``roles``: the devices
    the line is configured to carry (default: the one its name names, if any)."""

    def __init__(self, name: str, accept_untagged: bool = False, roles: tuple[str, ...] = ()) -> None:
        self.allowed: frozenset[str] = frozenset(roles) if roles else frozenset({name.upper()}) & ROLES
        self.fixed = bool(self.allowed)
        self.role: str | None = "+".join(sorted(self.allowed)) if self.fixed else None
        self.accept_untagged = accept_untagged
        self.counts: Counter[str] = Counter()
        self._logged: set[str] = set()
        self._incidents = 0

    def check(self, frame: Frame) -> Verdict:
        """The verdict on one new device data frame (control frames and duplicates never get here)."""
        if self.role is None:
            self.role = frame.src
        if frame.src not in self.allowed if self.fixed else frame.src != self.role:
            if frame.type == "HELLO" and not self.fixed:
                self.role = frame.src
                self._logged.clear()
                return self._incident(ROLE_CHANGE, accept=True)
            return self._incident(WRONG_LINE, accept=False)
        if frame.type == "HELLO":
            self._logged.clear()
        elif (frame.src, frame.type) in DECIDING and frame.round_tag is None and not self.accept_untagged:
            return self._incident(UNTAGGED, accept=False)
        return _ACCEPTED

    def _incident(self, why: str, accept: bool) -> Verdict:
        self.counts[why] += 1
        log = (why == ROLE_CHANGE or why not in self._logged) and self._incidents < MAX_INCIDENTS
        if log:
            self._logged.add(why)
            self._incidents += 1
        return Verdict(accept, why, log)
