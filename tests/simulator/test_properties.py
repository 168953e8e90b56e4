"""Hypothesis properties of whole runs: every run, whatever its seed and incident rates, keeps the table's rules.

Each example is a short run (30-60 rounds). Events a dealer emits after a round's verdict are not judged here (see
``test_rules.py`` for that case): the properties below look at each round up to its ``RoundEnded``.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simulator.events import (
    BetSent,
    Dropped,
    Event,
    Paused,
    PauseReason,
    Reshake,
    ReshakeReason,
    Resumed,
    Revealed,
    RoundOpened,
    RoundStatus,
)
from simulator.profile import Profile, profile_from_mapping
from tests.simulator.sim_helpers import by_round, ended, profile_of, run_table, shipped

SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: Events that are not the dealer's next move: the lamp, bets, and pauses/resumes from an equipment problem.
_ASIDE = ("round_opened", "betting_closed", "resumed", "bet_sent")


def _dealer_moves(events: list[Event]) -> list[Event]:
    return [
        e for e in events if e.kind not in _ASIDE and not (isinstance(e, Paused) and e.reason is PauseReason.EQUIPMENT)
    ]


def _is_cap_pause(event: Event) -> bool:
    return isinstance(event, Paused) and event.reason is PauseReason.RESHAKE_CAP


def _most_reshakes_between_resumes(events: list[Event]) -> int:
    """The most re-shakes a round took between two resumes (the cap's budget). The re-shake that follows the
    resume of a cap pause belongs to the budget before it (it is what made the pause)."""
    most = count = 0
    cap_paused = after_cap = False
    for event in events:
        if _is_cap_pause(event):
            cap_paused = True
        elif isinstance(event, Resumed):
            count, after_cap, cap_paused = 0, after_cap or cap_paused, False
        elif isinstance(event, Reshake):
            if after_cap:
                after_cap = False
            else:
                count += 1
                most = max(most, count)
    return most


def check_run(events: list[Event], profile: Profile, rounds: int) -> None:
    """Assert every rule-level invariant of a run's event log."""
    times = [e.t for e in events]
    assert times == sorted(times), "events out of time order"

    opened = [e.round for e in events if isinstance(e, RoundOpened)]
    verdicts = ended(events)  # also asserts at most one RoundEnded per round
    assert opened == list(range(1, rounds + 1))
    assert sorted(verdicts) == opened, "every round opened ends in exactly one RoundEnded"

    cap = profile.table.max_reshakes
    for round_no, round_events in by_round(events).items():
        end = verdicts[round_no]
        upto = round_events[: round_events.index(end) + 1]
        reveals = [e for e in upto if isinstance(e, Revealed)]
        assert all(len(r.faces) == 4 and set(r.faces) <= set("RWS") for r in reveals)
        reshakes = [e for e in upto if isinstance(e, Reshake)]
        assert [r.count for r in reshakes] == list(range(1, len(reshakes) + 1))
        assert end.reshakes == len(reshakes)
        assert _most_reshakes_between_resumes(upto) <= cap, f"round {round_no}: re-shake cap passed"

        if end.status is RoundStatus.SETTLED:
            flat = [r for r in reveals if "S" not in r.faces]
            assert len(flat) == 1 and flat[0] is reveals[-1], "exactly one final reveal without S"
            assert end.clause is None and end.faces == flat[0].faces
            assert end.reds == end.faces.count("R")
        else:
            assert end.faces is None and end.reds is None
            expected = ("SH-4a", "SH-4b", "SH-5") if end.status is RoundStatus.VOID else ("ERR-3",)
            assert end.clause in expected

        moves = _dealer_moves(upto)
        for i, event in enumerate(moves):
            rest = moves[i + 1 :]
            if isinstance(event, Dropped):
                follow_up = [e.kind for e in rest[:2]]
                assert (
                    (follow_up == ["reassembled", "reshake"] and rest[1].reason is ReshakeReason.DROP)  # type: ignore[attr-defined]
                    or (rest and _is_cap_pause(rest[0]))
                    or (rest and rest[0] is end and end.status is RoundStatus.CANCELLED)
                ), f"round {round_no}: drop followed by {follow_up}"
            elif isinstance(event, Revealed) and "S" in event.faces:
                nxt = rest[0] if rest else None
                assert (
                    (isinstance(nxt, Reshake) and nxt.reason is ReshakeReason.STANDING)
                    or (nxt is not None and _is_cap_pause(nxt))
                    or (nxt is end and end.status is not RoundStatus.SETTLED)
                ), f"round {round_no}: standing token followed by {nxt}"

    bets = [e for e in events if isinstance(e, BetSent)]
    assert len({b.bet_id for b in bets}) == len(bets), "bet ids unique"
    stakes = {s for s, _ in profile.players.stakes}
    assert all(b.stake in stakes and b.stake % 50 == 0 for b in bets)
    assert all(b.arrives >= b.t and 1 <= b.round <= rounds for b in bets)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), rounds=st.integers(30, 60), players=st.integers(0, 4))
def test_chaotic_runs_keep_every_rule(seed: int, rounds: int, players: int) -> None:
    profile = profile_from_mapping(shipped("chaotic"))
    check_run(run_table(profile, seed, rounds, players=players), profile, rounds)


probability = st.floats(0.0, 0.3)


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    rates=st.fixed_dictionaries(
        {
            "tokens.p_standing": st.floats(0.0, 0.25),
            "tokens.p_fall": st.floats(0.0, 0.1),
            "tokens.p_overlap": probability,
            "shaker.p_drop_bowl": st.floats(0.0, 0.2),
            "shaker.p_drop_plate": st.floats(0.0, 0.2),
            "shaker.p_touch": probability,
            "dealer.mistakes.forget_shake": probability,
            "dealer.mistakes.early_lift": probability,
            "problems.rate": probability,
            "table.max_reshakes": st.integers(0, 4),
        }
    ),
)
def test_runs_with_drawn_rates_keep_every_rule(seed: int, rates: dict[str, Any]) -> None:
    profile = profile_of(shipped("chaotic"), **{k.replace(".", "__"): v for k, v in rates.items()})
    check_run(run_table(profile, seed, 40, players=2), profile, 40)


def _outcomes(events: list[Event]) -> dict[int, tuple[object, ...]]:
    return {r: (e.status, e.clause, e.faces, e.reds, e.reshakes) for r, e in ended(events).items()}


script_step = st.one_of(
    st.builds(lambda faces: {"faces": faces}, st.text("rws", min_size=4, max_size=4)),
    st.builds(lambda shake, token: {"shake": shake, "standing": [token]}, st.integers(1, 3), st.integers(0, 3)),
    st.builds(
        lambda shake, item: {"shake": shake, "drop": item},
        st.integers(1, 3),
        st.sampled_from(["bowl", "plate", "token", "none"]),
    ),
    st.builds(lambda touch: {"touch": touch}, st.booleans()),
    st.builds(lambda overlap: {"overlap": overlap}, st.booleans()),
    st.just({"forget_shake": True}),
    st.just({"early_lift": True}),
)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), target=st.integers(1, 20), steps=st.lists(script_step, min_size=1, max_size=3))
def test_scripting_one_round_never_changes_another_rounds_outcome(
    seed: int, target: int, steps: list[dict[str, Any]]
) -> None:
    profile = profile_from_mapping(shipped("chaotic"))
    plain = _outcomes(run_table(profile, seed, 30))
    scripted = _outcomes(run_table(profile, seed, 30, script=[{"round": target, **step} for step in steps]))
    assert {r: o for r, o in plain.items() if r != target} == {r: o for r, o in scripted.items() if r != target}
