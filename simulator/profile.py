"""Table profiles: timings, incident rates and players, validated field by field from a parsed YAML document.

:func:`profile_from_mapping` builds a :class:`Profile` from an already-parsed mapping; the simulator reads no files.
The harness reads them: :func:`harness.files.load_profile` finds a profile by name in ``fixtures/profiles/NAME.yaml``
or by path. Every error names the dotted field and what is allowed, e.g. ``tokens.p_standing: must be a probability
in [0, 1], got 1.5``. Unknown keys are errors too (a typo must not silently fall back to a default). See
``docs/profiles.md`` for every field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from simulator.bets import BetType
from simulator.distributions import Distribution
from simulator.errors import InputError
from simulator.validate import Section


class ProfileError(InputError):
    """A profile that cannot be used; the message names the file and the field."""


@dataclass(frozen=True, slots=True)
class TableSettings:
    betting_period: float  # s the fixed-schedule lamp keeps betting open
    round_gap: float  # s between the end of a round and the next opening (clearing the table)
    max_reshakes: int  # re-shakes a round may take (SH-2/SH-3); one more is an unexpected problem (ERR-1)
    pause_timeout: float  # s a pause may last before the round is cancelled (ERR-3)
    reshake_count: str = "since_resume"  # since_resume: a resume restarts the count; since_open: it does not


@dataclass(frozen=True, slots=True)
class TokenSettings:
    p_red: tuple[float, float, float, float]  # per token, chance the red face is up
    p_standing: float  # per token per shake, left standing on its edge (SH-3)
    p_fall: float  # per token per shake, falls off the plate (SH-2)
    p_overlap: float  # per shake, tokens end on one another (SH-1)


@dataclass(frozen=True, slots=True)
class DealerTiming:
    place: Distribution  # tokens on the plate and bowl on
    shake: Distribution
    react: Distribution  # from "betting closed" to starting the lift
    lift: Distribution
    rearrange: Distribution  # spreading overlapping tokens with the stick
    reassemble: Distribution  # after a drop, everything back and the bowl on


@dataclass(frozen=True, slots=True)
class DealerMistakes:
    forget_shake: float  # per round (SH-4a)
    early_lift: float  # per round (SH-4b)


@dataclass(frozen=True, slots=True)
class ShakerSettings:
    p_drop_bowl: float  # per shake (SH-2)
    p_drop_plate: float  # per shake (SH-2)
    p_touch: float  # per lift, the bowl touches a token (SH-5)


@dataclass(frozen=True, slots=True)
class ProblemSettings:
    rate: float  # per round, chance of an unexpected problem during betting (ERR-1)
    resolve: Distribution  # time the supervisor needs; resumed if <= table.pause_timeout, else cancelled


@dataclass(frozen=True, slots=True)
class NetworkSettings:
    latency: Distribution  # one-way, player -> server
    up: Distribution  # how long a link stays up
    down: Distribution  # how long a disconnection lasts


@dataclass(frozen=True, slots=True)
class PlayerSettings:
    count: int  # seats
    p_bet: float  # per seated player per round
    bets_per_round: tuple[float, ...]  # weights of 1, 2, 3, ... bets in a round where the player bets
    bet_weights: tuple[tuple[BetType, float], ...]
    stakes: tuple[tuple[int, float], ...]  # (stake in minor units, weight)
    think: Distribution  # time before each bet
    session_rounds: float  # mean rounds a player stays (0 = never leaves)
    arrival_gap: Distribution  # time before an empty seat is taken
    network: NetworkSettings


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    description: str
    table: TableSettings
    tokens: TokenSettings
    timing: DealerTiming
    mistakes: DealerMistakes
    shaker: ShakerSettings
    problems: ProblemSettings
    players: PlayerSettings


STAKE_QUANTUM = 50  # every stake must be a multiple of this many minor units: then every payout is exact


def _weights(section: Section, key: str) -> dict[Any, float]:
    value = section.raw(key)
    path = section.path(key)
    if not isinstance(value, dict) or not value:
        raise ProfileError(f"{path}: expected a non-empty mapping of choice -> weight")
    for choice, weight in value.items():
        if isinstance(weight, bool) or not isinstance(weight, int | float) or weight < 0:
            raise ProfileError(f"{path}.{choice}: weight must be a number >= 0, got {weight!r}")
    if sum(value.values()) <= 0:
        raise ProfileError(f"{path}: weights must not all be 0")
    return value


def profile_from_mapping(data: Any, source: str = "") -> Profile:
    """Validate a parsed profile document and build a :class:`Profile`.

    Raises:
        ProfileError: the first invalid, missing or unknown field, named by its dotted path (after ``source`` and
            ``": "`` when ``source`` is given, e.g. ``profile fixtures/profiles/mine.yaml: tokens.p_red: ...``).
    """
    try:
        return _profile(data)
    except ProfileError as exc:
        if not source:
            raise
        raise ProfileError(f"{source}: {exc}") from None


def _profile(data: Any) -> Profile:
    root = Section(data, "", ProfileError, name="profile")
    table_s = root.section("table")
    table = TableSettings(
        betting_period=table_s.number("betting_period", 0.001),
        round_gap=table_s.number("round_gap"),
        max_reshakes=table_s.whole("max_reshakes", 0, 100),
        pause_timeout=table_s.number("pause_timeout", 0.001),
    )
    table_s.done()
    tok = root.section("tokens")
    tokens = TokenSettings(
        p_red=_p_red(tok),
        p_standing=tok.probability("p_standing"),
        p_fall=tok.probability("p_fall"),
        p_overlap=tok.probability("p_overlap"),
    )
    tok.done()
    dealer = root.section("dealer")
    tim = dealer.section("timing")
    timing = DealerTiming(*(tim.dist(k) for k in ("place", "shake", "react", "lift", "rearrange", "reassemble")))
    tim.done()
    mis = dealer.section("mistakes")
    mistakes = DealerMistakes(mis.probability("forget_shake"), mis.probability("early_lift"))
    mis.done()
    dealer.done()
    sh = root.section("shaker")
    shaker = ShakerSettings(sh.probability("p_drop_bowl"), sh.probability("p_drop_plate"), sh.probability("p_touch"))
    sh.done()
    pr = root.section("problems")
    problems = ProblemSettings(pr.probability("rate"), pr.dist("resolve"))
    pr.done()
    players = _players(root.section("players"))
    profile = Profile(
        name=root.text("name"),
        description=root.text("description"),
        table=table,
        tokens=tokens,
        timing=timing,
        mistakes=mistakes,
        shaker=shaker,
        problems=problems,
        players=players,
    )
    root.done()
    return profile


def _p_red(section: Section) -> tuple[float, float, float, float]:
    value = section.raw("p_red")
    values = [value] * 4 if isinstance(value, int | float) and not isinstance(value, bool) else value
    if not isinstance(values, list) or len(values) != 4:
        raise ProfileError(f"tokens.p_red: expected one probability or a list of 4, got {value!r}")
    for i, p in enumerate(values):
        if isinstance(p, bool) or not isinstance(p, int | float) or not 0.0 <= p <= 1.0:
            raise ProfileError(f"tokens.p_red[{i}]: must be a probability in [0, 1], got {p!r}")
    return (float(values[0]), float(values[1]), float(values[2]), float(values[3]))


def _players(pl: Section) -> PlayerSettings:
    per_round = _weights(pl, "bets_per_round")
    counts = sorted(per_round)
    if any(isinstance(c, bool) or not isinstance(c, int) or c < 1 for c in counts) or counts != list(
        range(1, len(counts) + 1)
    ):
        raise ProfileError(f"players.bets_per_round: keys must be 1, 2, 3, ... without gaps, got {counts}")
    raw_bets = _weights(pl, "bet_weights")
    bet_weights: list[tuple[BetType, float]] = []
    for name, weight in raw_bets.items():
        try:
            bet_weights.append((BetType(name), float(weight)))
        except ValueError:
            allowed = ", ".join(b.value for b in BetType)
            raise ProfileError(f"players.bet_weights.{name}: unknown bet type; allowed: {allowed}") from None
    stakes: list[tuple[int, float]] = []
    for stake, weight in _weights(pl, "stakes").items():
        if isinstance(stake, bool) or not isinstance(stake, int) or stake <= 0 or stake % STAKE_QUANTUM:
            raise ProfileError(
                f"players.stakes.{stake}: a stake is a positive whole number of minor units, "
                f"a multiple of {STAKE_QUANTUM}"
            )
        stakes.append((stake, float(weight)))
    net_s = pl.section("network")
    network = NetworkSettings(net_s.dist("latency"), net_s.dist("up"), net_s.dist("down"))
    net_s.done()
    players = PlayerSettings(
        count=pl.whole("count", 0, 1000),
        p_bet=pl.probability("p_bet"),
        bets_per_round=tuple(float(per_round[c]) for c in counts),
        bet_weights=tuple(bet_weights),
        stakes=tuple(stakes),
        think=pl.dist("think"),
        session_rounds=pl.number("session_rounds"),
        arrival_gap=pl.dist("arrival_gap"),
        network=network,
    )
    pl.done()
    return players
