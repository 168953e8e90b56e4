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
| Revealed | READER RESULT faces overlap (with overlap, one token reads U), with the confidence the camera was told |
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
    Confidence,
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
    default_confidence,
)
from simulator import events as ev

Report = tuple[Source, Message]
#: Event types no device sees: none of the classes :meth:`EventTranslator.__call__` tests is a base of theirs.
_SILENT: set[type] = set()


class CameraConfidence:
    """How sure the camera is of the tokens it reads, by simulator round. A ``RESULT`` read in a round it was told
    about carries a confidence for every token: the one it was told for that token, else
    :func:`~harness.wire.messages.default_confidence`'s. Any other read carries none (its dialect's default). The
    camera reports its faces as it sees them whatever its confidence: the receiver decides what an unsure token is."""

    def __init__(self) -> None:
        self._told: dict[int, dict[int, float]] = {}

    def tell(self, number: int, token: int, confidence: float) -> None:
        """From now on the camera reads ``token`` (0-3) with ``confidence`` (0 to 1) in simulator round ``number``.

        Raises:
            ValueError: naming ``token`` or ``confidence`` and the allowed values.
        """
        if type(token) is not int or not 0 <= token <= 3:
            raise ValueError(f"token: must be 0, 1, 2 or 3; got {token!r}")
        if type(confidence) not in (int, float) or not 0.0 <= confidence <= 1.0:
            raise ValueError(f"confidence: must be a number 0 to 1; got {confidence!r}")
        self._told.setdefault(number, {})[token] = float(confidence)

    def told(self, number: int) -> dict[int, float]:
        """The confidences the camera was told for round ``number``, by token (a copy; empty when none)."""
        return dict(self._told.get(number, {}))

    def of(self, number: int, faces: str) -> Confidence | None:
        """The confidence of a read of ``faces`` in round ``number``, or None when the camera was told none."""
        told = self._told.get(number)
        if not told:
            return None
        base = default_confidence(faces)
        return (told.get(0, base[0]), told.get(1, base[1]), told.get(2, base[2]), told.get(3, base[3]))


class EventTranslator:
    """Maps one ground-truth event to the frames the devices send for it, in order; ``camera`` says how sure the
    reader is of its reads."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.camera = CameraConfidence()

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
            faces = self._camera(event.faces, event.overlap)
            return [(Source.READER, Result(faces, event.overlap, self.camera.of(event.round, faces)))]
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
