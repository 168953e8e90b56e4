"""What each table device reports for each ground-truth event (docs/protocol.md §6-§7).

Pure and deterministic: the only choice (which token an overlap hides from the camera) comes from a
caller-seeded ``random.Random``.

| simulator event | device frame |
|---|---|
| TokensPlaced | CONSOLE TOKENS |
| BowlPlaced | BOWL ON |
| ShakeStarted / ShakeEnded | SHAKER START / END |
| Dropped | SHAKER DROP item token |
| Reassembled | CONSOLE REASSEMBLED |
| BowlLifted | BOWL OFF touch token |
| Revealed | READER RESULT faces overlap (with overlap, one token reads U) |
| Rearranged | CONSOLE REARRANGED, then READER REARRANGED faces |
| Paused / Resumed | CONSOLE PROBLEM reason / RESOLVED |

ShakeSkipped (SH-4a) has no frame: the shaker stays silent, which is how the server sees it. Round openings,
closings and ends are the server's own decisions and are not reported by any device.
"""

from __future__ import annotations

import random

from harness.wire.messages import (
    BowlOff,
    BowlOn,
    ConsoleRearranged,
    Drop,
    DropItem,
    Message,
    Problem,
    ProblemReason,
    ReaderRearranged,
    Reassembled,
    Resolved,
    Result,
    ShakeEnd,
    ShakeStart,
    Source,
    TokensPlaced,
)
from simulator import events as ev

Report = tuple[Source, Message]
#: Event types no device sees: none of the classes :meth:`EventTranslator.__call__` tests is a base of theirs.
_SILENT: set[type] = set()


class EventTranslator:
    """Maps one ground-truth event to the frames the devices send for it, in order."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def __call__(self, event: ev.Event) -> list[Report]:
        """The device reports for ``event`` ([] for events no device sees).

        Raises:
            ValueError: an event that breaks the ground truth's own rules (a touch without a token).
        """
        if type(event) in _SILENT:
            return []  # hot path: most events (bets, lamp changes, ...) are seen by no device
        if isinstance(event, ev.TokensPlaced):
            return [(Source.CONSOLE, TokensPlaced())]
        if isinstance(event, ev.BowlPlaced):
            return [(Source.BOWL, BowlOn())]
        if isinstance(event, ev.ShakeStarted):
            return [(Source.SHAKER, ShakeStart())]
        if isinstance(event, ev.ShakeEnded):
            return [(Source.SHAKER, ShakeEnd())]
        if isinstance(event, ev.Dropped):
            item = DropItem(event.item.value)
            return [(Source.SHAKER, Drop(item, event.token if item is DropItem.TOKEN else None))]
        if isinstance(event, ev.Reassembled):
            return [(Source.CONSOLE, Reassembled())]
        if isinstance(event, ev.BowlLifted):
            if event.touched and event.token is None:
                # the sensor reports which token was touched; hiding the touch would settle a void round
                raise ValueError(f"ground truth {event}: a touch without the token touched")
            return [(Source.BOWL, BowlOff(event.touched, event.token if event.touched else None))]
        if isinstance(event, ev.Revealed):
            return [(Source.READER, Result(self._camera(event.faces, event.overlap), event.overlap))]
        if isinstance(event, ev.Rearranged):
            return [(Source.CONSOLE, ConsoleRearranged()), (Source.READER, ReaderRearranged(event.faces))]
        if isinstance(event, ev.Paused):
            return [(Source.CONSOLE, Problem(ProblemReason(event.reason.value)))]
        if isinstance(event, ev.Resumed):
            return [(Source.CONSOLE, Resolved())]
        _SILENT.add(type(event))
        return []

    def _camera(self, faces: str, overlap: bool) -> str:
        """What the camera reads: the true faces, except one flat token hidden (U) when tokens overlap. A token
        standing on its edge rises above the others and stays visible (the camera reports the S, SH-3)."""
        if not overlap:
            return faces
        flat = [i for i, c in enumerate(faces) if c != "S"]
        if not flat:
            return faces
        hidden = flat[self.rng.randrange(len(flat))]  # no S: randrange(4), the same draw as ever
        return faces[:hidden] + "U" + faces[hidden + 1 :]
