"""The oracle fed one round at a time (:class:`~harness.judge.stream.StreamingJudge`) reaches the verdict the
whole-run oracle reaches, on seeded runs of the in-process bench as they are and with defects planted in what the
server said; each round's verdict is known as it is fed."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable

import pytest

from harness.bench.config import load_bench
from harness.bench.rig import Rig
from harness.cli.run import VISITS, WALLET, _with_profile
from harness.judge.oracle import Observation, SentBet, Verdict, judge
from harness.judge.stream import StreamingJudge, judge_by_rounds, split_observation
from harness.judge.timeline import Kill
from harness.records import BetRecordRow, RoundEvent, RoundEventKind

SEATS = 6
ROUNDS = 40


def _observe(profile: str, seed: int) -> Observation:
    bench = load_bench("in-process")
    if profile != bench.profile:
        bench = _with_profile(bench, profile)
    players = {f"p{s:02d}.{v}": WALLET for s in range(1, SEATS + 1) for v in range(1, VISITS + 1)}
    with Rig.build(bench, players, crowd=SEATS, seed=seed, wallets_per_seat=VISITS) as rig:
        for _ in range(ROUNDS):
            rig.play_to_end(rig.open_round())
        rig.run_for(0.2)
        return rig.observation()


@pytest.fixture(scope="module")
def runs() -> dict[str, Observation]:
    return {p: _observe(p, seed) for p, seed in (("certification", 11), ("chaotic", 12), ("compressed", 13))}


def _same(whole: Verdict, streamed: Verdict) -> None:
    assert streamed.differences == whole.differences
    assert streamed.findings == whole.findings
    assert dict(streamed.expected) == dict(whole.expected)
    assert (streamed.rounds_checked, streamed.bets_checked) == (whole.rounds_checked, whole.bets_checked)
    assert streamed.checks == whole.checks
    assert repr(streamed) == repr(whole)


@pytest.mark.parametrize("profile", ["certification", "chaotic", "compressed"])
def test_a_seeded_run_judged_round_by_round_gets_the_whole_run_verdict(
    runs: dict[str, Observation], profile: str
) -> None:
    obs = runs[profile]
    whole = judge(obs)
    assert whole.rounds_checked == ROUNDS and whole.bets_checked > 5 * ROUNDS
    _same(whole, judge_by_rounds(obs))


# --------------------------------------------------------------------------- planted defects
def _bet_row(obs: Observation) -> tuple[str, int, BetRecordRow]:
    """A player, the index and the row of a settled bet in the middle of the run."""
    rows = [(p, i, row) for p, record in obs.records.items() for i, row in enumerate(record) if row.outcome]
    return rows[len(rows) // 2]


def _with_row(obs: Observation, player: str, index: int, row: BetRecordRow | None) -> Observation:
    record = list(obs.records[player])
    if row is None:
        del record[index]
    else:
        record[index] = row
    return dataclasses.replace(obs, records={**obs.records, player: tuple(record)})


def _flip(faces: str) -> str:
    return "".join("W" if f == "R" else "R" for f in faces)


def wrong_outcome(obs: Observation) -> Observation:
    _player, _index, row = _bet_row(obs)
    events = [
        dataclasses.replace(e, faces=_flip(e.faces)) if e.round_id == row.round_id and e.faces else e
        for e in obs.server_events
    ]
    return dataclasses.replace(obs, server_events=tuple(events))


def overpaid(obs: Observation) -> Observation:
    player, index, row = _bet_row(obs)
    obs = _with_row(obs, player, index, dataclasses.replace(row, returned=row.returned + 50))
    return dataclasses.replace(obs, balances={**obs.balances, player: obs.balances[player] + 50})


def lost_row(obs: Observation) -> Observation:
    player, index, _row = _bet_row(obs)
    return _with_row(obs, player, index, None)


def ended_twice(obs: Observation) -> Observation:
    _player, _index, row = _bet_row(obs)
    end = next(e for e in obs.server_events if e.round_id == row.round_id and e.ends_round)
    events = [*obs.server_events]
    events.insert(events.index(end) + 1, dataclasses.replace(end, at=end.at + 0.01))
    return dataclasses.replace(obs, server_events=tuple(events))


def retry_with_other_content(obs: Observation) -> Observation:
    first = next(s for s in obs.sent[len(obs.sent) // 2 :] if s.reply.accepted)
    reply = dataclasses.replace(first.reply, stake=first.reply.stake + 50, bet_id=first.reply.bet_id + "x")
    later = obs.sent.index(first) + 3
    sent = [*obs.sent]
    sent.insert(later, SentBet(reply, False, sent[later].sent_at, sent[later].in_play))
    return dataclasses.replace(obs, sent=tuple(sent))


def uncaused_pause(obs: Observation) -> Observation:
    _player, _index, row = _bet_row(obs)
    end = next(e for e in obs.server_events if e.round_id == row.round_id and e.ends_round)
    events = [*obs.server_events]
    events.insert(events.index(end), RoundEvent(row.round_id, RoundEventKind.PAUSED, end.at - 0.001))
    return dataclasses.replace(obs, server_events=tuple(events))


def phantom_round(obs: Observation) -> Observation:
    """A bet booked in a round the table never played (and the server never announced)."""
    player, _index, row = _bet_row(obs)
    ghost = dataclasses.replace(row, bet_id=row.bet_id + "g", round_id="ghost", client_bet_id="")
    return dataclasses.replace(obs, records={**obs.records, player: (*obs.records[player], ghost)})


def short_balance(obs: Observation) -> Observation:
    player = sorted(obs.balances)[3]
    return dataclasses.replace(obs, balances={**obs.balances, player: obs.balances[player] - 50})


PLANTS: dict[str, Callable[[Observation], Observation]] = {
    f.__name__: f
    for f in (
        wrong_outcome,
        overpaid,
        lost_row,
        ended_twice,
        retry_with_other_content,
        uncaused_pause,
        phantom_round,
        short_balance,
    )
}


@pytest.mark.parametrize("plant", sorted(PLANTS))
@pytest.mark.parametrize("profile", ["certification", "chaotic"])
def test_a_planted_defect_gets_the_same_findings_round_by_round(
    runs: dict[str, Observation], profile: str, plant: str
) -> None:
    obs = PLANTS[plant](runs[profile])
    whole = judge(obs)
    assert whole.findings, f"{plant}: the planted defect must be found"
    _same(whole, judge_by_rounds(obs))


def test_counting_checks_instead_of_keeping_them_changes_nothing_else(runs: dict[str, Observation]) -> None:
    obs = wrong_outcome(runs["chaotic"])
    whole = judge(obs)
    parts, sent, access, kills = split_observation(obs)
    stream = StreamingJudge(
        obs.records, server_clock_is_sim=obs.server_clock_is_sim, timing=obs.timing, reader_line=obs.reader_line,
        keep_checks=False,
    )  # fmt: skip
    for part in parts:
        stream.feed(part)
    lean = stream.finish(obs.opening, obs.balances, sent=sent, access=access, kills=kills)
    assert lean.checks == ()
    assert (lean.differences, lean.findings, dict(lean.expected)) == (
        whole.differences,
        whole.findings,
        dict(whole.expected),
    )
    by_clause = Counter((c.clause, c.passed) for c in whole.checks)
    assert {k: tuple(v) for k, v in stream.counts.items()} == {
        clause: (by_clause[(clause, True)], by_clause[(clause, False)]) for clause, _ in by_clause
    }


def test_each_round_is_judged_as_it_is_fed(runs: dict[str, Observation]) -> None:
    obs = wrong_outcome(runs["certification"])
    bad = _bet_row(runs["certification"])[2].round_id
    parts, _sent, _access, _kills = split_observation(obs)
    stream = StreamingJudge(obs.records, server_clock_is_sim=obs.server_clock_is_sim, timing=obs.timing)
    for part in parts:
        verdict = stream.feed(part)
        assert verdict.round_id == part.round_id and verdict.expected is not None
        if part.round_id == bad:
            assert not verdict.passed
            assert {d.round for d in verdict.differences} == {bad}
            assert [(d.clause, d.what) for d in verdict.differences] in ([("EQ-3", "outcome")], [("SH-1", "outcome")])
        else:
            assert verdict.passed, verdict.differences
    with pytest.raises(ValueError, match=f"round {parts[0].round_id}: already judged"):
        stream.feed(parts[0])


def test_a_retry_across_a_kill_between_rounds_is_judged_under_idem2_round_by_round(
    runs: dict[str, Observation],
) -> None:
    """The server is killed while no round is in play (the kill is in no round's part); a bet confirmed before it
    is retried after it and confirmed as another bet. Fed round by round, with the kills told as they happen
    (:meth:`StreamingJudge.know_kills`), the retry is judged where its original's round is fed, and it names
    IDEM-2 (a retry across a restart), as the whole run's verdict does."""
    obs = runs["certification"]
    sent = list(obs.sent)
    original = next(s for s in sent[len(sent) // 3 :] if s.reply.accepted and s.reply.client_bet_id)
    last = max(s.sent_at for s in sent)
    retry = dataclasses.replace(
        original, reply=dataclasses.replace(original.reply, bet_id="b-forged"), sent_at=last + 1
    )
    kill = Kill((original.sent_at + last) / 2, ())
    obs = dataclasses.replace(obs, sent=(*sent, retry), kills=(*obs.kills, kill))
    whole = judge(obs)
    assert [d.clause for d in whole.differences] == ["IDEM-2"]
    parts, loose, access, kills = split_observation(obs)
    assert kill in kills and not any(kill in part.kills for part in parts)
    stream = StreamingJudge(
        obs.records, server_clock_is_sim=obs.server_clock_is_sim, timing=obs.timing, reader_line=obs.reader_line,
    )  # fmt: skip
    for part in parts:
        if any(s is retry for s in part.sent):
            stream.know_kills([kill])  # by then the bench has killed the server
        stream.feed(part)
    streamed = stream.finish(obs.opening, obs.balances, sent=loose, access=access, kills=kills)
    assert streamed.differences == whole.differences
    assert Counter(streamed.checks) == Counter(whole.checks)
