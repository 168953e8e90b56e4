"""What the emulated devices put in a report, given what their line's dialect declares it carries
(:class:`~harness.wire.dialects.base.ProtocolCapabilities`, docs/dialects/README.md).

A device whose protocol cannot carry an item sends its reports without it, so nothing reaches the server that the
protocol could not have told it, whatever the dialect's encoder would let through:

| undeclared | what the device sends |
|---|---|
| ``round_tags`` | no round tag on any report |
| ``event_times`` | no event time on any report |
| ``token_sensor`` | no ``CONSOLE TOKENS`` (the console has no sensor for the tokens on the plate) |

The other items are not the table's to leave out:

- ``positions`` and ``problem_reasons``: a semantic ``BOWL OFF`` with a touch, a ``SHAKER DROP`` of a token and a
  ``CONSOLE PROBLEM`` must name their token or reason (the frames' own rules, docs/protocol.md §6: a touch without
  its token is no valid report, and the reason is a required field), so the device hands them to its line end in
  full; a dialect whose wire lacks them drops them there, and the conformance kit never compares them;
- ``identities``: the HELLO is the line end's own (its dialogue decides whether it sends one and what it says); the
  table hands its devices no HELLO;
- ``confidence`` has no field in the semantic frames; ``betting_time_on_open`` is the lamp's
  (:class:`~harness.bench.devices.lamp.LampDriver`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.wire.dialects.base import LineSpec
from harness.wire.messages import Message, Source, TokensPlaced

__all__ = ["DeclaredReports", "declared_reports"]


@dataclass(frozen=True, slots=True)
class DeclaredReports:
    """The devices, by role, whose line declares no round tags (:attr:`untagged`), no event times
    (:attr:`untimed`) or no token sensor (:attr:`unsensed`); empty sets: every line declares all three."""

    untagged: frozenset[Source] = frozenset()
    untimed: frozenset[Source] = frozenset()
    unsensed: frozenset[Source] = frozenset()

    @property
    def full(self) -> bool:
        """True when every line declares round tags, event times and the token sensor: reports go out as the table
        made them."""
        return not (self.untagged or self.untimed or self.unsensed)

    def message(self, src: Source, message: Message) -> Message | None:
        """``message`` as device ``src`` sends it on its line: None (not sent) for ``CONSOLE TOKENS`` from a console
        whose line declares no token sensor, else ``message`` itself. Never raises."""
        return None if isinstance(message, TokensPlaced) and src in self.unsensed else message

    def round_tag(self, src: Source, tag: str | None) -> str | None:
        """The round tag device ``src`` puts on a report: ``tag``, or None where its line declares no round tags."""
        return None if src in self.untagged else tag

    def event_time(self, src: Source, at: int | None) -> int | None:
        """The event time device ``src`` puts on a report: ``at``, or None where its line declares no event times."""
        return None if src in self.untimed else at


def declared_reports(lines: Sequence[LineSpec]) -> DeclaredReports:
    """What each device of ``lines`` may put in a report, from the declaration of the dialect on its line (a
    device on no line of ``lines`` sends everything)."""
    untagged: set[Source] = set()
    untimed: set[Source] = set()
    unsensed: set[Source] = set()
    for line in lines:
        caps = line.dialect.capabilities
        for role in line.roles:
            if not caps.round_tags:
                untagged.add(role)
            if not caps.event_times:
                untimed.add(role)
            if not caps.token_sensor:
                unsensed.add(role)
    return DeclaredReports(frozenset(untagged), frozenset(untimed), frozenset(unsensed))
