"""Then steps: what the server must have done, read through its adapter, and the oracle's verdict.

Amounts are minor units. Results are win, lose, push (Big/Small on two reds), refund (void/cancel) or pending.
"""

from __future__ import annotations

from pytest_bdd import parsers, then

from harness.cert.steps.context import CertContext, amount, bet_name, faces, format_money
from harness.records import BetResult, RoundEventKind
from harness.wire.protocol.messages import Frame
from simulator.events import BowlPlaced, Event, ShakeEnded, ShakeStarted, TokensPlaced


def _end(cert: CertContext, n: int) -> tuple[RoundEventKind, str, str]:
    rid = cert.round_id(n)
    end = cert.running().server_end(rid)
    if end is None:
        raise AssertionError(f"the server has not ended round {n} (id {rid})")
    return end.kind, end.clause, end.faces


@then(parsers.parse("the server settles round {n:d} on {result}"))
def settles_on(cert: CertContext, n: int, result: str) -> None:
    """The server settled round n on exactly these faces.

    Example: Then the server settles round 1 on r r w w
    """
    kind, clause, got = _end(cert, n)
    want = faces(result)
    assert (kind, got) == (RoundEventKind.SETTLED, want), (
        f"round {n}: expected settled on {want}, server {kind} {clause}{got}"
    )


@then(parsers.parse("the server voids round {n:d} under {clause}"))
def voids_under(cert: CertContext, n: int, clause: str) -> None:
    """The server voided round n, naming this clause (SH-4a, SH-4b, SH-5).

    Example: Then the server voids round 1 under SH-5
    """
    kind, got, _ = _end(cert, n)
    assert (kind, got) == (RoundEventKind.VOID, clause), f"round {n}: expected void under {clause}, server {kind} {got}"


@then(parsers.parse("the server cancels round {n:d} and refunds every bet"))
def cancels_refunds(cert: CertContext, n: int) -> None:
    """The server cancelled round n (ERR-3) and every bet in it is refunded in full.

    Example: Then the server cancels round 1 and refunds every bet
    """
    kind, clause, _ = _end(cert, n)
    assert kind == RoundEventKind.CANCELLED, f"round {n}: expected cancelled, server {kind} {clause}"
    _all_refunded(cert, n)


@then(parsers.parse("the server ends round {n:d} without playing it and refunds every bet"))
def ends_refunds(cert: CertContext, n: int) -> None:
    """The server ended round n as void or cancelled (it never started at the table) and refunded every bet.

    Example: Then the server ends round 1 without playing it and refunds every bet
    """
    kind, clause, _ = _end(cert, n)
    refunding = (RoundEventKind.VOID, RoundEventKind.CANCELLED)
    assert kind in refunding, f"round {n}: expected void or cancelled, server {kind} {clause}"
    _all_refunded(cert, n)


def _all_refunded(cert: CertContext, n: int) -> None:
    rid = cert.round_id(n)
    rig = cert.running()
    rows = [r for p in cert.players for r in rig.adapter.bet_record(p) if r.round_id == rid]
    bad = [r for r in rows if (r.result, r.returned) != (BetResult.REFUND, r.wagered)]
    assert not bad, f"round {n}: bets not refunded in full: {bad}"


@then(parsers.re(r"the server asks for (?P<k>\d+) re-shakes? in round (?P<n>\d+)"))
def reshakes(cert: CertContext, k: str, n: str) -> None:
    """The server asked for exactly k re-shakes (SH-2, SH-3) in round n.

    Example: Then the server asks for 2 re-shakes in round 1
    """
    rid = cert.round_id(int(n))
    got = [e for e in cert.running().adapter.round_events() if e.round_id == rid and e.kind == RoundEventKind.RESHAKE]
    assert len(got) == int(k), f"round {n}: expected {k} re-shakes, server asked for {len(got)}: {got}"


@then(parsers.re(r"(?P<player>\w+)'s bet on (?P<bet>\w+) returns (?P<money>[\d,]+)"))
def bet_returns(cert: CertContext, player: str, bet: str, money: str) -> None:
    """The player's latest bet of this type was credited exactly this much (stake included; 0 for a loss).

    Example: Then alice's bet on big returns 1,960
    """
    row = cert.record_for(player, bet_name(bet))
    assert row.returned == amount(money), f"{player}'s {bet} bet returned {row.returned}, expected {money}"


@then(parsers.re(r"(?P<player>\w+)'s bet on (?P<bet>\w+) is (?P<result>win|lose|push|refund|pending)"))
def bet_result(cert: CertContext, player: str, bet: str, result: str) -> None:
    """The player's latest bet of this type has this result in the bet record.

    Example: Then alice's bet on big is refund
    """
    row = cert.record_for(player, bet_name(bet))
    assert row.result == result, f"{player}'s {bet} bet is {row.result}, expected {result}"


@then(parsers.re(r"(?P<player>\w+)'s balance is (?P<money>[\d,]+)"))
def balance_is(cert: CertContext, player: str, money: str) -> None:
    """The player's balance on the server is exactly this (minor units).

    Example: Then alice's balance is 10,960
    """
    got = cert.running().adapter.balance(player)
    assert got == amount(money), f"{player}'s balance is {got}, expected {money}"


@then(parsers.re(r"(?P<player>\w+)'s bet is rejected with (?P<code>\w+)"))
def rejected_with(cert: CertContext, player: str, code: str) -> None:
    """The server refused the player's last bet with this error code (e.g. betting_closed, insufficient_balance).

    Example: Then alice's bet is rejected with betting_closed
    """
    reply = cert.last_reply(player)
    assert not reply.accepted, f"{player}'s last bet was accepted (bet {reply.bet_id}); expected {code}"
    assert reply.code == code, f"{player}'s last bet was rejected with {reply.code}, expected {code}"


@then(parsers.re(r"(?P<player>\w+)'s bet record shows (?P<k>\d+) bets?"))
def record_count(cert: CertContext, player: str, k: str) -> None:
    """The player's bet record holds exactly k bets (DC-3, GLI 2.8.2).

    Example: Then alice's bet record shows 2 bets
    """
    rows = cert.running().adapter.bet_record(player)
    assert len(rows) == int(k), f"{player}'s bet record shows {len(rows)} bets, expected {k}: {rows}"


@then(parsers.re(r"(?P<player>\w+)'s bet record agrees with (?P<pronoun>his|her|their) balance"))
def record_agrees(cert: CertContext, player: str, pronoun: str) -> None:
    """Opening balance − every stake in the player's bet record + every amount returned = current balance.

    Example: Then bob's bet record agrees with his balance
    """
    rig = cert.running()
    rows = rig.adapter.bet_record(player)
    want = cert.players[player] + sum(r.returned - r.wagered for r in rows)
    got = rig.adapter.balance(player)
    assert got == want, f"{player}: balance {got}, but the bet record accounts for {want}"


@then("the oracle finds no difference")
def oracle_clean(cert: CertContext) -> None:
    """The independent oracle agrees with every round result, bet record and balance the server reported.

    Example: Then the oracle finds no difference
    """
    verdict = cert.verdict()
    assert verdict.passed, verdict.summary()


@then("no balance is negative")
def no_negative(cert: CertContext) -> None:
    """No player's balance is below zero (GLI 4.3.3 b).

    Example: Then no balance is negative
    """
    rig = cert.running()
    low = {p: rig.adapter.balance(p) for p in cert.players}
    assert low, "the scenario has no players whose balance could be checked"
    assert all(v >= 0 for v in low.values()), f"negative balance: {low}"


@then(parsers.parse("the table placed four tokens, covered them and shook before revealing round {n:d}"))
def table_sequence(cert: CertContext, n: int) -> None:
    """Ground truth and the devices agree that round n went: four tokens on the plate (EQ-1, GP-1), bowl on and a
    full shake (GP-2), and only then the reveal; the console, bowl and shaker lines carried each of those reports.

    Example: Then the table placed four tokens, covered them and shook before revealing round 1
    """
    rig = cert.running()
    sim = rig.driver.rounds[cert.round_id(n)]
    order: list[type[Event]] = [TokensPlaced, BowlPlaced, ShakeStarted, ShakeEnded]
    seen = [type(e) for e in rig.truth if type(e) in order and getattr(e, "round", None) == sim]
    assert seen[:4] == order, f"round {n}: the table did {[c.kind for c in seen]}"
    decoders = {line.trace_name: line.dialect.codec().decoder() for line in rig.bench.lines}
    sent = {
        f"{item.src.value} {item.message.TYPE}"
        for r in rig.recorder.records
        if r.dir == "tx" and r.port in decoders
        for item in decoders[r.port].feed(r.data)
        if isinstance(item, Frame)
    }  # each line's frames decoded in its own dialect
    for report in ("CONSOLE TOKENS", "BOWL ON", "SHAKER START", "SHAKER END", "BOWL OFF", "READER RESULT"):
        assert report in sent, f"no {report} frame on the device lines"


@then(parsers.re(r"(?P<minor>\d+) minor units are shown as (?P<text>[\d,.\-]+)"))
def shown_as(cert: CertContext, minor: str, text: str) -> None:
    """Amounts in reports are written in US format with two decimals, 100 minor units to the unit (DOC-2).

    Example: Then 123400 minor units are shown as 1,234.00
    """
    assert format_money(int(minor)) == text, f"{minor} is shown as {format_money(int(minor))}, expected {text}"
