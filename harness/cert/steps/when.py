"""When steps: what happens while the table runs (rounds, bets, disconnections, supervisor actions, time).

The first When step starts the bench (server, devices, players). Waits are bounded by the bench's
``timing.step_timeout_s``; on a real-time bench, seconds are wall seconds.
"""

from __future__ import annotations

import math
import time

from pytest_bdd import parsers, when

from harness.cert.steps.context import BET_NAMES, CertContext, amount, bet_name, not_applicable
from harness.errors import AdapterError
from harness.records import BetReply, RoundEventKind
from simulator.events import BettingClosed, RoundOpened, ShakeEnded

#: Bench seconds run at a time while a real-time bench waits out a betting period of wall time.
POLL_S = 0.01


@when(parsers.parse("round {n:d} opens"))
def round_opens(cert: CertContext, n: int) -> None:
    """The supervisor opens the next round; the step waits until the table's lamp shows betting open.

    Example: When round 1 opens
    """
    rig = cert.running()
    if n != len(rig.opened) + 1:
        raise AssertionError(f"round {n} cannot open next: {len(rig.opened)} rounds opened so far")
    rig.open_round()


@when(parsers.parse("round {n:d} opens while the table's network is down"))
def round_opens_blind(cert: CertContext, n: int) -> None:
    """The table's lamp line is unplugged (a network error at the table), then the supervisor opens round n: the
    server opens it but the table never learns of it, so the game never starts (NET-1). Needs a bench with
    ``faults_allowed: true``.

    Example: When round 1 opens while the table's network is down
    """
    rig = cert.running()
    if n != len(rig.opened) + 1:
        raise AssertionError(f"round {n} cannot open next: {len(rig.opened)} rounds opened so far")
    try:
        rig.unplug("lamp")
    except ValueError as exc:  # faults forbidden, or a line the bench does not own (e.g. a vendor's serial line)
        not_applicable(str(exc))
    rig.open_round(table_sees=False)


@when(parsers.re(r"(?P<player>\w+) bets (?P<money>[\d,]+) on (?P<bet>\w+)"))
def player_bets(cert: CertContext, player: str, money: str, bet: str) -> None:
    """The player bets this stake (minor units) on a bet type; the step fails unless the server confirms it.
    Bet types: four_red, three_red, two_red, one_red, four_white, four_of_a_kind, odd, even, big, small.

    Example: When alice bets 1,000 on big
    """
    reply = cert.running().bet(player, bet_name(bet), amount(money))
    cert.replies.append(reply)
    if not reply.accepted:
        raise AssertionError(f"{player}'s bet of {money} on {bet} was rejected: {reply.code}")


@when(parsers.re(r"(?P<player>\w+) tries to bet (?P<money>[\d,]+) on (?P<bet>\w+)"))
def player_tries(cert: CertContext, player: str, money: str, bet: str) -> None:
    """The player sends a bet that may be refused; a Then step checks the answer.

    Example: When alice tries to bet 100 on small
    """
    cert.replies.append(cert.running().bet(player, bet_name(bet), amount(money)))


def _named_bet(cert: CertContext, player: str, money: str, bet: str, which: str) -> BetReply:
    """Send the bet naming a round: ``round <n>`` (the n-th this scenario opened) or ``the round after it`` (the id
    after the current round's, where the server numbers its rounds). Not applicable on an adapter without
    ``place_bet_for_round`` or, for the round after it, a server whose round ids are not numbers."""
    rig = cert.running()
    if which == "the round after it":
        current = rig.current_round()
        if not current.isdigit():
            not_applicable(f"the server's round ids are not numbers ({current!r}): no round after it can be named")
        rid = str(int(current) + 1)
    else:
        rid = cert.round_id(int(which.removeprefix("round ")))
    try:
        return rig.bet(player, bet_name(bet), amount(money), round_id=rid)
    except AdapterError as exc:
        if exc.code == "not_supported":
            not_applicable(str(exc))
        raise


@when(parsers.re(r"(?P<player>\w+) bets (?P<money>[\d,]+) on (?P<bet>\w+) naming (?P<which>round \d+)"))
def player_bets_naming(cert: CertContext, player: str, money: str, bet: str, which: str) -> None:
    """The player bets this stake on a bet type, naming the round the bet is for (the n-th round this scenario
    opened); the step fails unless the server confirms it. Not applicable on an adapter whose bets name no round
    (``place_bet_for_round``, docs/adapters.md).

    Example: When alice bets 1,000 on big naming round 2
    """
    reply = _named_bet(cert, player, money, bet, which)
    cert.replies.append(reply)
    if not reply.accepted:
        raise AssertionError(f"{player}'s bet of {money} on {bet} naming {which} was rejected: {reply.code}")


@when(
    parsers.re(
        r"(?P<player>\w+) tries to bet (?P<money>[\d,]+) on (?P<bet>\w+) naming (?P<which>round \d+|the round after it)"
    )
)
def player_tries_naming(cert: CertContext, player: str, money: str, bet: str, which: str) -> None:
    """The player sends a bet naming the round it is for: ``round <n>`` (the n-th round this scenario opened) or
    ``the round after it`` (the round after the one in play, not open yet); a Then step checks the answer. Not
    applicable on an adapter whose bets name no round, or (the round after it) whose server's round ids are not
    numbers.

    Example: When alice tries to bet 1,000 on big naming round 1
    """
    cert.replies.append(_named_bet(cert, player, money, bet, which))


@when(
    parsers.re(r"(?P<player>\w+) tries to bet (?P<money>[\d,]+) on (?P<bet>\w+) (?P<ms>\d+) ms before betting closes")
)
def player_tries_before_close(cert: CertContext, player: str, money: str, bet: str, ms: str) -> None:
    """The bench runs to ``ms`` milliseconds before the end of the current round's betting period, then the player
    sends this bet: betting is still open (GP-3), so the server must take it. Where the server's clock is the
    bench's (in-process, virtual time) the end is the server's opening of the round plus the bench's ``betting_s``
    and the bet leaves exactly ``ms`` before it; elsewhere the end is the close the table's lamp announced, and the
    bet leaves at least a quarter of the betting period before it (line and network time), so the edge is probed
    exactly only on a shared clock.

    Example: When alice tries to bet 1,000 on big 50 ms before betting closes
    """
    rig = cert.running()
    rid = rig.current_round()
    betting_s = rig.bench.timing.betting_s
    margin = int(ms) / 1000
    if rig.adapter.clock_is_sim_time:
        opened = [e for e in rig.adapter.round_events() if e.round_id == rid and e.kind == RoundEventKind.OPENED]
        assert opened, f"the server has not reported round {rid} open"
        send_at = opened[0].at + betting_s - margin
    else:
        number = rig.driver.rounds.get(rid)
        seen = [e for e in rig.truth if isinstance(e, RoundOpened) and e.round == number]
        assert seen, f"the table has not seen round {rid} open"
        send_at = seen[0].deadline - max(margin, betting_s / 4)
    assert rig.now <= send_at, f"the bet was due to leave at {send_at:g}, the bench is at {rig.now:g} already"
    if send_at > rig.now:
        rig.run_for(send_at - rig.now)
    cert.replies.append(rig.bet(player, bet_name(bet), amount(money)))


@when(parsers.re(r"(?P<player>\w+) tries to bet (?P<money>[\d,]+) on (?P<bet>\w+) the moment betting closes"))
def player_tries_at_close(cert: CertContext, player: str, money: str, bet: str) -> None:
    """The bench runs to the end of the current round's betting period (the server's opening of the round plus the
    bench's ``betting_s``), then the player sends this bet: the betting period has ended (GP-3), so it must be
    refused. Where the server's clock is the bench's (in-process, virtual time) the bet leaves at exactly the close,
    before the server has run anything due then; elsewhere a whole betting period of wall time after this step
    starts, so after the server's close.

    Example: When alice tries to bet 1,000 on big the moment betting closes
    """
    rig = cert.running()
    rid = rig.current_round()
    opened = [e for e in rig.adapter.round_events() if e.round_id == rid and e.kind == RoundEventKind.OPENED]
    assert opened, f"the server has not reported round {rid} open"
    betting_s = rig.bench.timing.betting_s
    if rig.adapter.clock_is_sim_time:  # the server's own time stamp is bench time: exactly at the close
        closes_at = opened[0].at + betting_s
        assert rig.now <= closes_at, f"betting was due to close at {closes_at:g}, the bench is at {rig.now:g} already"
        while rig.now < closes_at:  # never an ulp before it
            rig.env.run(until=max(closes_at, math.nextafter(rig.now, math.inf)))
    else:  # a whole betting period of wall time from now, so after the server's close
        deadline = time.monotonic() + betting_s
        while time.monotonic() < deadline:
            rig.run_for(POLL_S)
    cert.replies.append(rig.bet(player, bet_name(bet), amount(money)))


@when(parsers.re(r"(?P<player>\w+) tries to bet (?P<money>[\d,]+) on (?P<bet>\w+), a bet the game does not have"))
def player_tries_unknown_bet(cert: CertContext, player: str, money: str, bet: str) -> None:
    """The player sends a bet on a bet type that is none of the game's ten (PAY-1..PAY-10), named as it stands; a
    Then step checks the answer (BET-1). Fails if ``bet`` is one of the game's bet types.

    Example: When alice tries to bet 1,000 on seven_red, a bet the game does not have
    """
    if bet in BET_NAMES:
        raise ValueError(f"{bet!r} is one of the game's bet types; name one it does not have")
    cert.replies.append(cert.running().bet(player, bet, amount(money)))


@when(
    parsers.re(
        r"(?P<player>\w+) bets (?P<money>[\d,]+) on (?P<bet>\w+) and loses the connection before the confirmation"
    )
)
def bet_then_drop(cert: CertContext, player: str, money: str, bet: str) -> None:
    """The player's bet request leaves, then the player's connection drops before any answer arrives (DC-2).

    Example: When bob bets 500 on odd and loses the connection before the confirmation
    """
    rig = cert.running()
    cert.replies.append(rig.bet(player, bet_name(bet), amount(money), lose_reply=True))
    rig.player_disconnected(player, "before the confirmation")


@when("betting closes")
def betting_closes(cert: CertContext) -> None:
    """Wait until the table's lamp shows betting closed for the current round (or the server has ended the round
    before it closed: a void or a cancellation leaves nothing to close).

    Example: When betting closes
    """
    rig = cert.running()
    rid = rig.current_round()
    sim = rig.driver.rounds.get(rid)
    rig.run_until(
        lambda: (
            any(isinstance(e, BettingClosed) and e.round == sim for e in rig.truth) or rig.server_end(rid) is not None
        ),
        "betting to close",
    )


@when("the dealer has finished shaking")
def shaking_done(cert: CertContext) -> None:
    """Wait until the dealer has completed a shake in the current round (ground truth), plus 0.1 s for the
    shaker's report to reach the server (or until the server has ended the round before any shake was complete).

    Example: When the dealer has finished shaking
    """
    rig = cert.running()
    rid = rig.current_round()
    sim = rig.driver.rounds.get(rid)
    rig.run_until(
        lambda: any(isinstance(e, ShakeEnded) and e.round == sim for e in rig.truth) or rig.server_end(rid) is not None,
        "a complete shake",
    )
    rig.run_for(0.1)


@when("the round is played to the end")
def played_to_end(cert: CertContext) -> None:
    """Let the table and the server run until the server ends the current round (settled, void or cancelled).

    Example: When the round is played to the end
    """
    rig = cert.running()
    rig.play_to_end(rig.current_round())


@when(parsers.re(r"(?P<player>\w+) disconnects"))
def disconnects(cert: CertContext, player: str) -> None:
    """The player's connection drops abruptly (no goodbye) (DC-1).

    Example: When alice disconnects
    """
    rig = cert.running()
    rig.player_disconnected(player)
    rig.adapter.disconnect(player)


@when(parsers.re(r"(?P<player>\w+) reconnects"))
def reconnects(cert: CertContext, player: str) -> None:
    """The player connects again (DC-3).

    Example: When alice reconnects
    """
    rig = cert.running()
    rig.note(player, "reconnected")
    rig.adapter.connect(player)


@when(parsers.parse("the supervisor {action} the round"))
def supervisor(cert: CertContext, action: str) -> None:
    """A supervisor action on the round in progress: pauses (ERR-1), resumes (ERR-2) or cancels (ERR-3).

    Example: When the supervisor pauses the round
    """
    verbs = {"pauses": "pause", "resumes": "resume", "cancels": "cancel"}
    if action not in verbs:
        raise ValueError(f"supervisor action {action!r}: expected pauses, resumes or cancels")
    cert.running().supervise(verbs[action], "certification scenario")


@when(parsers.parse("{seconds:g} seconds pass"))
def seconds_pass(cert: CertContext, seconds: float) -> None:
    """Let the table and the server run for this long (bench seconds).

    Example: When 0.5 seconds pass
    """
    cert.running().run_for(seconds)
