"""The judge of a round's timeline: what the bench did and saw besides the table's ground truth and the server's
final read, and the rules that decide from it.

The table's verdict (:mod:`harness.judge.expect`) says what a server that heard every device report as the table
made it must do. A bench also *acts*: it kills the server, corrects an outcome, loses, delays, replays or forges
device reports, retries bets. What a correct server must do then is decided here, never taken from the server:

- **Kills** (:class:`Kill`): a round in play when the bench killed the server may be cancelled on restart (ERR-3,
  every bet refunded) or settled as the table says (ATOM-1: all or nothing); rounds before and after are judged
  as usual. When the server died inside the ledger write that ends a round (a crash point), whatever is then
  wrong with that round, its bets or the balances of its players is the write's: a difference of ATOM-1.
- **Corrections**: the bets of a round whose outcome the supervisor corrected (accepted) are due on the corrected
  faces (COR-1).
- **Altered reports** (:class:`Alteration`): a lost ``BOWL ON`` before the bowl went on makes the round void
  (PROC-2, named SH-4a); a lost shaker ``END`` leaves no complete shake (GP-2, void SH-4a); a lost deciding
  read, or a read that contradicts the faces seen before the spread (PROC-1), justifies a pause.
- **The re-shake cap** (``Timing.max_reshakes``, counted as ``Timing.reshake_count`` says): a re-shake the server
  asks for past the cap is an unexpected problem (ERR-1), so the server pauses the round before it asks for another
  re-shake or ends the round.
- **Shakes during a pause** (``Timing.shakes_during_pause``: ``ignored``, on a shared clock): a round whose every
  shake before the close started while the server had it paused had no shake of its own: void SH-4a.
- **Pauses**: a pause the server makes must have a cause (the table paused, or the bench altered the round's
  reports so that a pause is due); one without is a difference of the clause whose count the server got wrong
  (the round's re-shake clause, SH-2 or SH-3, when the table re-shook, else ERR-1). A pause never resolved (no
  resume after it) must end in a cancellation with every bet refunded (ERR-3), never a settlement.
- **The betting period** (only when the server's clock is the bench's: ``server_clock_is_sim``): it lasts the
  configured ``betting_s`` from the opening, plus every pause taken during it (ERR-2). The server must not close
  it early, must not announce a shorter one (``closes_at`` where its events carry it) and must not refuse as
  closed a bet sent while it was open and not paused. Comparisons allow :data:`CLOCK_EPSILON_S`, the resolution of
  the shared clock; benches on two clocks are not timed (no check recorded, so no clause counts as covered by it).
- **Idempotency**: a bet sent again with the same client bet id and content gets the original confirmation (same
  bet id and round) and the bet record holds it once (IDEM-1; IDEM-2 when a kill lies between the two sends); the
  same id with another content is refused.
- **Late and foreign frames**: a round settled on faces that are not the table's but those of a result the bench
  replayed or forged for another round is a difference of DEV-2 (a report for another, decided round decided it),
  not of EQ-3.

Nothing here imports ``gameserver``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from harness.records import RoundEvent, RoundEventKind
from simulator.events import BettingClosed, Event, ReshakeReason, ShakeStarted

#: The clause of a re-shake by its reason: a drop (SH-2), a token left standing (SH-3).
RESHAKE_CLAUSES = {ReshakeReason.DROP: "SH-2", ReshakeReason.STANDING: "SH-3"}
#: Seconds within which two times of the shared simulation clock count as the same instant (float sums of steps).
CLOCK_EPSILON_S = 1e-6
#: Refusal codes that say "betting is not open" (the reference vocabulary; an adapter maps its server's codes).
CLOSED_CODES = frozenset({"betting_closed", "round_paused", "round_not_open", "no_round_open"})
#: Refusal codes that say "this client bet id was used with another content" (the reference vocabulary).
CONFLICT_CODES = frozenset({"idempotency_conflict"})


@dataclass(frozen=True, slots=True)
class Kill:
    """The bench killed the server at bench time ``t``; ``in_play``: the server round ids open (not ended) then;
    ``write``: what the server was writing when it died, when the bench made it die inside a ledger write (a crash
    point: the end of a round in ``in_play``), else ""."""

    t: float
    in_play: tuple[str, ...]
    write: str = ""


@dataclass(frozen=True, slots=True)
class Alteration:
    """The bench changed what the server hears of round ``round_id`` from bench time ``t`` on: ``kind`` is
    ``miss`` (the device never sends ``message`` reports from ``source`` from now on in the round), ``queued`` (it
    sends one ``message`` report, made by the bench, tagged ``round_tag``, on the device's own line), ``forged``
    (frames written by the bench onto ``line``, whichever device they name) or ``silenced`` (``line``, carrying the
    devices ``source``, puts no byte on the wire from then on); ``faces`` for a result."""

    round_id: str
    t: float
    kind: str
    source: str
    message: str
    round_tag: str | None = None
    faces: str = ""
    line: str = ""

    def __str__(self) -> str:
        tag = f" tagged {self.round_tag}" if self.round_tag else ""
        faces = f" {self.faces}" if self.faces else ""
        return f"{self.kind} {self.source} {self.message}{faces}{tag} at {self.t:.3f}"


@dataclass(frozen=True, slots=True)
class Timing:
    """The configured timing the server was started with (:class:`~harness.bench.adapters.base.ServerSetup`) and
    the table configuration's re-shake cap (``docs/table-configuration.md``): ``max_reshakes`` re-shakes a round may
    take (None: not judged), counted ``since_resume`` (a resume restarts the count) or ``since_open``;
    ``result_timeout_s`` None: the round waits for the result for ever; ``shakes_during_pause``: whether a shake the
    table made while the round stood paused counts (``count``) or not (``ignored``)."""

    betting_s: float
    pause_timeout_s: float | None = None
    result_timeout_s: float | None = None
    max_reshakes: int | None = None
    service_step_s: float = 0.0  # the step the bench runs the server on (the grid its deadlines fall on)
    reshake_count: str = "since_resume"
    shakes_during_pause: str = "count"

    def past_cap(self, count_since_open: int, count_since_resume: int) -> bool:
        """Whether a re-shake that makes these counts (the round's, and since its last resume) is one past the cap."""
        if self.max_reshakes is None:
            return False
        count = count_since_open if self.reshake_count == "since_open" else count_since_resume
        return count > self.max_reshakes


def lost_result(alterations: Iterable[Alteration], until: float | None = float("inf")) -> bool:
    """Whether the round's deciding read had not reached the server by bench time ``until``: the reader's results
    were missed from some moment and no result was sent in their place before ``until``, or one sent in their place
    was still held back then (a later read, delayed past ``until``). ``until`` None: the
    moment is on another clock than the bench's (a server with a clock of its own), so a result sent in their
    place cannot be ordered with it: any miss counts."""
    missed: float | None = None
    in_time = held = False
    for alt in alterations:
        if alt.kind == "miss" and alt.source == "READER" and alt.message in ("Result", "deciding Result"):
            missed = alt.t if missed is None else min(missed, alt.t)
        elif alt.kind == "queued" and alt.source == "READER" and alt.message == "Result" and missed is not None:
            if alt.round_tag != alt.round_id:
                continue  # another round's result (replayed, or untagged) is no read of this round
            if until is not None and alt.t < until:
                in_time = True  # a result sent in their place in time: a delay, not a loss
            else:
                held = True  # a read still held back at ``until`` (a later shake's, delayed past it)
    return missed is not None and (held or not in_time)


def pause_cause(alterations: Sequence[Alteration], paused_at: float | None = float("inf")) -> str:
    """The clause under which the bench's alterations of a round make a pause at ``paused_at`` due (PROC-1 for a
    read that contradicts the faces seen before the spread, ERR-1 for a deciding read still lost then, a lift
    report lost before it or a device line silenced before it; ``paused_at``
    None: on another clock, :func:`lost_result`), or "" when they make none."""
    if any(a.kind == "queued" and a.message == "ReaderRearranged" for a in alterations):
        return "PROC-1"
    if lost_result(alterations, paused_at):
        return "ERR-1"
    lift = missed_before(alterations, "BOWL", "BowlOff")
    if lift is not None and (paused_at is None or lift <= paused_at + CLOCK_EPSILON_S):
        return "ERR-1"  # the lift was never reported: no read can decide the round, a pause is due
    silent = [a.t for a in alterations if a.kind == "silenced"]
    if silent and (paused_at is None or min(silent) <= paused_at + CLOCK_EPSILON_S):
        return "ERR-1"  # a device line went quiet: the server counts it down, a problem that pauses the round
    return ""


def missed_before(alterations: Sequence[Alteration], source: str, message: str) -> float | None:
    """When the bench began to lose ``source``'s ``message`` reports in the round, or None: never, or only to
    send them later itself (a delay: a report of the same kind queued after the miss began)."""
    times = [a.t for a in alterations if a.kind == "miss" and a.source == source and a.message == message]
    if not times:
        return None
    start = min(times)
    late = any(a.kind == "queued" and a.source == source and a.message == message and a.t >= start for a in alterations)
    return None if late else start


@dataclass(frozen=True, slots=True)
class Pauses:
    """A round's pauses by the server's events: ``spans`` (paused at, resumed at or None), in order."""

    spans: tuple[tuple[float, float | None], ...]

    @property
    def unresolved(self) -> bool:
        """The last pause was never followed by a resume."""
        return bool(self.spans) and self.spans[-1][1] is None

    def during(self, start: float, end: float) -> float:
        """Seconds the round stood paused between ``start`` and ``end`` (extending ``end`` by each pause that
        begins before it: the time lost to a pause during betting is given back, ERR-2)."""
        lost = 0.0
        for paused, resumed in self.spans:
            if paused >= end + lost - CLOCK_EPSILON_S or paused < start - CLOCK_EPSILON_S:
                continue
            if resumed is None:
                return float("inf")
            lost += resumed - paused
        return lost

    def covers(self, t: float) -> bool:
        """Whether the round stood paused at ``t``."""
        return any(p - CLOCK_EPSILON_S <= t and (r is None or t <= r + CLOCK_EPSILON_S) for p, r in self.spans)


def first_ends(events: Iterable[RoundEvent]) -> dict[str, RoundEvent]:
    """Each round's first round-ending event (settled, void, cancelled), by round id."""
    out: dict[str, RoundEvent] = {}
    for event in events:
        if event.ends_round:
            out.setdefault(event.round_id, event)
    return out


def pauses_by_round(events: Iterable[RoundEvent]) -> dict[str, Pauses]:
    """Each round's pauses, from the server's PAUSED and RESUMED events."""
    spans: dict[str, list[tuple[float, float | None]]] = {}
    for event in events:
        if event.kind == RoundEventKind.PAUSED:
            spans.setdefault(event.round_id, []).append((event.at, None))
        elif event.kind == RoundEventKind.RESUMED:
            own = spans.get(event.round_id)
            if own and own[-1][1] is None:
                own[-1] = (own[-1][0], event.at)
    return {rid: Pauses(tuple(s)) for rid, s in spans.items()}


def announced_close(event: RoundEvent) -> float | None:
    """The end of betting an OPENED or RESUMED event announces (``closes_at`` in its data), when it carries one."""
    data = event.raw.get("data") if isinstance(event.raw, Mapping) else None
    end = data.get("closes_at") if isinstance(data, Mapping) else None
    if isinstance(end, int | float) and not isinstance(end, bool):
        return float(end)
    return None


def unshaken_at_close(truth: Sequence[Event]) -> set[int]:
    """The sim rounds whose betting closed at the table before any shake started in them."""
    shaken: set[int] = set()
    out: set[int] = set()
    for event in truth:
        if isinstance(event, ShakeStarted):
            shaken.add(event.round)
        elif isinstance(event, BettingClosed) and event.round not in shaken:
            out.add(event.round)
    return out
